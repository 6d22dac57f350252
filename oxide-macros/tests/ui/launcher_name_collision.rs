// A kernel named like another kernel's launcher (`launch_scale` next to `scale`) collides with
// it; rustc names the function and the `#[kernel]` that generates the other one.
use oxide_rt::device::*;

#[kernel]
pub fn scale(mut y: DisjointSlice<f32>) {
    if let Some(y) = y.get_mut(thread::index()) {
        *y *= 2.0;
    }
}

#[kernel]
pub fn launch_scale(mut y: DisjointSlice<f32>) {
    if let Some(y) = y.get_mut(thread::index()) {
        *y *= 3.0;
    }
}

fn main() {}
