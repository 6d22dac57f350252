//! Kernels compiled for the host and for nvptx64. `mod util` checks that nested modules
//! resolve the same way in both builds.
use oxide_rt::device::*;

mod util;

/// `y[i] = a * x[i] + b` through a helper in a nested module. A 1D kernel: launches that use
/// y or z are refused, and the index math drops them.
#[kernel(dims = 1)]
pub fn affine(a: f32, b: f32, x: &[f32], mut y: DisjointSlice<f32>) {
    let i = thread::index();
    if let Some(out) = y.get_mut(i) {
        *out = util::affine(a, b, x[i.get()]);
    }
}

/// Every thread of a 3D grid of 3D blocks writes its own linear index: the output must be
/// exactly 0..n, which shows `thread::index()` is unique for the geometry.
#[kernel]
pub fn linear_ids(mut out: DisjointSlice<u32>) {
    let i = thread::index();
    if let Some(o) = out.get_mut(i) {
        *o = i.get() as u32;
    }
}

/// A kernel with launch bounds: blocks above 128 threads are rejected before launch.
#[kernel(launch_bounds(128))]
pub fn bounded(x: &[u32], mut y: DisjointSlice<u32>) {
    let i = thread::index();
    if let Some(o) = y.get_mut(i) {
        *o = x[i.get()].wrapping_mul(3);
    }
}

/// Each thread owns a chunk of four outputs: `out[4i + k] = x[i] * (k + 1)`; the last chunk
/// may be short.
#[kernel(dims = 1)]
pub fn quads(x: &[u32], mut out: DisjointChunks<u32, 4>) {
    let i = thread::index();
    let Some(&v) = x.get(i.get()) else { return };
    if let Some(chunk) = out.chunk_mut(i) {
        for (k, o) in chunk.iter_mut().enumerate() {
            *o = v * (k as u32 + 1);
        }
    }
}

/// `y[i] = x[idx[i]]`, or `-1` where `idx[i]` is past the end of `x` (which may be empty).
/// The read of `x` follows a barrier, so oxide-build hoists it above its bounds check (a
/// guarded load): an out-of-range index and an empty `x` must still give `-1`, never a fault.
#[kernel(dims = 1)]
pub fn gather_or_minus_one(x: &[f32], idx: &[u32], mut y: DisjointSlice<f32>) {
    let i = thread::index();
    let j = idx.get(i.get()).copied().unwrap_or(u32::MAX);
    sync_threads();
    if let Some(o) = y.get_mut(i) {
        *o = x.get(j as usize).copied().unwrap_or(-1.0);
    }
}

/// Fixed 16 x 4 blocks (`block(..)`): the launchers refuse other shapes, the PTX carries
/// `.reqntid 16, 4, 1`, and the device folds `block_dim()` to constants. Each thread writes its
/// block's extents and its own position in the block.
#[kernel(dims = 2, block(16, 4))]
pub fn fixed_block(mut out: DisjointSlice<u32>) {
    let i = thread::index();
    if let Some(o) = out.get_mut(i) {
        let (b, t) = (thread::block_dim(), thread::thread_idx());
        *o = b.x * 1_000_000 + b.y * 10_000 + t.y * 100 + t.x;
    }
}

/// Three interleaved outputs per thread (`DisjointStrided`): thread `id` (its `thread::index()`)
/// writes `id * 4 + k` into its `k`-th element.
#[kernel]
pub fn strided_ids(mut out: DisjointStrided<u32, 3>) {
    let id = thread::index().get() as u32;
    for k in 0..3 {
        if let Some(o) = out.get_mut(k) {
            *o = id * 4 + k as u32;
        }
    }
}
