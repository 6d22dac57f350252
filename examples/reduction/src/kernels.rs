//! Compiled twice: for the host (typed launchers, CPU executor) and for nvptx64 (PTX).
use oxide_rt::device::*;

/// Adds the sum of `x` into `out[0]`.
///
/// Each thread accumulates a grid-stride slice of `x` in four independent registers (four loads
/// in flight per iteration), the warp folds its 32 partial sums with shuffles, warp leaders park
/// their sums in shared memory, warp 0 folds those, and thread 0 issues the block's single
/// device-scope atomic add. Works for any 1D block whose size is a multiple of 32 (up to 1024).
#[kernel(launch_bounds(1024), dims = 1)]
pub fn reduce_sum(x: &[f32], out: &[AtomicF32]) {
    let n = x.len();
    // 1D launch: the plain x index and stride (`thread::index()` linearises all three
    // dimensions in 64-bit arithmetic, which costs registers for nothing here).
    let stride = thread::grid_dim().x as usize * thread::block_dim().x as usize;
    let mut i = thread::global_x();
    let (mut a0, mut a1, mut a2, mut a3) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    while i + 3 * stride < n {
        a0 += x[i];
        a1 += x[i + stride];
        a2 += x[i + 2 * stride];
        a3 += x[i + 3 * stride];
        i += 4 * stride;
    }
    while i < n {
        a0 += x[i];
        i += stride;
    }
    let v = warp::reduce_add_f32((a0 + a1) + (a2 + a3));

    let partial = shared_array!(f32, 32);
    let (lane, w) = (thread::lane_id(), thread::warp_id());
    if lane == 0 {
        partial.set(w as usize, v);
    }
    sync_threads();
    if w == 0 {
        let warps = thread::block_dim().x / WARP_SIZE;
        let v = if lane < warps { partial.get(lane as usize) } else { 0.0 };
        let total = warp::reduce_add_f32(v);
        if let (0, Some(sum)) = (lane, out.first()) {
            sum.atomic_add(total, Scope::Device);
        }
    }
}
