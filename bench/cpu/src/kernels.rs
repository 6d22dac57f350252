//! Kernels of the CPU executor benchmark; compiled for the host and for nvptx64 like any other.
use oxide_rt::device::*;

/// `y[i] = a * x[i] + y[i]`: barrier-free, so the CPU executor runs it as a plain loop.
#[kernel]
pub fn saxpy(a: f32, x: &[f32], mut y: DisjointSlice<f32>) {
    let i = thread::index_1d();
    if let Some(yi) = y.get_mut(i) {
        *yi += a * x[i.get()];
    }
}

/// Tree reduction of each block's `block_dim().x` elements (at most 1024) in shared memory,
/// with a barrier per step; thread 0 of every block writes the block's sum at its own index.
#[kernel]
pub fn block_sum(x: &[f32], mut out: DisjointSlice<f32>) {
    let s = shared_array!(f32, 1024);
    let t = thread::thread_idx().x as usize;
    let i = thread::index_1d();
    s.set(t, x.get(i.get()).copied().unwrap_or(0.0));
    let mut stride = thread::block_dim().x as usize / 2;
    while stride > 0 {
        sync_threads();
        if t < stride {
            s.set(t, s.get(t) + s.get(t + stride));
        }
        stride /= 2;
    }
    if t == 0 {
        if let Some(o) = out.get_mut(i) {
            *o = s.get(0);
        }
    }
}
