//! Compiled twice: for the GPU by build.rs, and for the host (typed launchers, CPU executor).
use oxide_rt::device::*;

/// `y[i] = a * x[i] + y[i]`, one element per thread.
#[kernel]
pub fn saxpy(a: f32, x: &[f32], mut y: DisjointSlice<f32>) {
    let i = thread::index();
    if let (Some(yi), Some(xi)) = (y.get_mut(i), x.get(i.get())) {
        *yi = a * xi + *yi;
    }
}
