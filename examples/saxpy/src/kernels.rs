//! Compiled twice: for the host (typed launchers, CPU executor) and for nvptx64 (PTX).
use oxide_rt::device::*;

/// `y[i] = a * x[i] + y[i]`
#[kernel(dims = 1)]
pub fn saxpy(a: f32, x: &[f32], mut y: DisjointSlice<f32>) {
    let i = thread::index_1d();
    if let Some(yi) = y.get_mut(i) {
        *yi += a * x[i.get()];
    }
}
