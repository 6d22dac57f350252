// The fixture manifest's record of `stale_record` has one argument; the kernel now has two.
use oxide_rt::device::*;

#[kernel]
pub fn stale_record(a: f32, mut y: DisjointSlice<f32>) {
    if let Some(v) = y.get_mut(thread::index()) {
        *v = a;
    }
}

fn main() {}
