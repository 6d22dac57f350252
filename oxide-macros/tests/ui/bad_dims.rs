use oxide_rt::device::*;

#[kernel(dims = 4)]
pub fn k(mut y: DisjointSlice<u32>) {
    if let Some(o) = y.get_mut(thread::index()) {
        *o = 1;
    }
}

fn main() {}
