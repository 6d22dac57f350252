// The fixture manifest lists kernel `older_build` but has no record of its arguments' layout,
// as a prebuilt directory made by an older oxide-build: rebuild, never trust it unchecked.
use oxide_rt::device::*;

#[kernel]
pub fn older_build(a: f32, mut y: DisjointSlice<f32>) {
    if let Some(v) = y.get_mut(thread::index()) {
        *v = a;
    }
}

fn main() {}
