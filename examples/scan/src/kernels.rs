//! Multi-block inclusive prefix sum of `u32` (wrapping), reduce-then-scan. Compiled twice: for
//! the host (typed launchers, CPU executor) and for nvptx64 (PTX).
//!
//! A level scans `n` logical elements `e[j] = input[j * stride + stride - 1]` (stride 1: the
//! data itself; stride [`BLOCK`]: the block totals the previous level left in its output):
//! 1. [`scan_block_totals`]: each block of [`BLOCK`] threads sums its elements and its last
//!    thread writes the total into `out` at its own index `b * BLOCK + BLOCK - 1`;
//! 2. the totals (stride `BLOCK` in `out`) are scanned by the same scheme one level up;
//! 3. [`scan_blocks`]: each block scans its elements and adds the scanned total of all blocks
//!    before it, overwriting `out` (the totals included) with the final values.
//!
//! Per element: two reads and one write.
use oxide_rt::device::thread::{block_idx, lane_id, warp_id};
use oxide_rt::device::*;

/// Threads (and elements) per block.
pub const BLOCK: u32 = 1024;
const WARPS: usize = (BLOCK / WARP_SIZE) as usize;

#[inline(always)]
fn load(input: &[u32], stride: usize, n: usize, j: usize) -> u32 {
    // `get`, not indexing: the host computes `n` and `stride` from the buffer sizes, and a
    // panic path here costs the kernel registers (ptxas allocates for it too).
    if j < n {
        input.get(j * stride + stride - 1).copied().unwrap_or(0)
    } else {
        0
    }
}

/// Block sums; launch with `n.div_ceil(BLOCK)` blocks of `BLOCK` threads.
#[kernel(dims = 1, block(BLOCK))]
pub fn scan_block_totals(input: &[u32], stride: usize, n: usize, mut out: DisjointSlice<u32>) {
    let partial = shared_array!(u32, WARPS);
    let i = thread::index_1d();
    let v = warp::reduce_add_u32(load(input, stride, n, i.get()));
    let (warp, lane) = (warp_id() as usize, lane_id());
    if lane == WARP_SIZE - 1 {
        partial.set(warp, v);
    }
    sync_threads();
    if warp == WARPS - 1 {
        let total = warp::reduce_add_u32(if (lane as usize) < WARPS { partial.get(lane as usize) } else { 0 });
        // The block's last thread: `i == b * BLOCK + BLOCK - 1`, past `out` for a partial block
        // (whose total no later block needs).
        if lane == WARP_SIZE - 1 {
            if let Some(o) = out.get_mut(i) {
                *o = total;
            }
        }
    }
}

/// Inclusive scan of each block plus `offsets[b - 1]` (the scanned totals of the blocks before
/// block `b`); `offsets` is unused when there is one block.
#[kernel(dims = 1, block(BLOCK))]
pub fn scan_blocks(input: &[u32], stride: usize, n: usize, offsets: &[u32], mut out: DisjointSlice<u32>) {
    let partial = shared_array!(u32, WARPS);
    let i = thread::index_1d();
    let (warp, lane) = (warp_id() as usize, lane_id());
    let mut v = load(input, stride, n, i.get());
    // Warp scan (Hillis-Steele over shuffles).
    let mut d = 1;
    while d < WARP_SIZE {
        let t = warp::shfl_up_sync(FULL_MASK, v, d, 32);
        if lane >= d {
            v = v.wrapping_add(t);
        }
        d *= 2;
    }
    if lane == WARP_SIZE - 1 {
        partial.set(warp, v);
    }
    sync_threads();
    // Warp 0 scans the warp totals in place.
    if warp == 0 {
        let mut s = if (lane as usize) < WARPS { partial.get(lane as usize) } else { 0 };
        let mut d = 1;
        while d < WARP_SIZE {
            let t = warp::shfl_up_sync(FULL_MASK, s, d, 32);
            if lane >= d {
                s = s.wrapping_add(t);
            }
            d *= 2;
        }
        if (lane as usize) < WARPS {
            partial.set(lane as usize, s);
        }
    }
    sync_threads();
    if warp > 0 {
        v = v.wrapping_add(partial.get(warp - 1));
    }
    let b = block_idx().x as usize;
    if b > 0 {
        v = v.wrapping_add(offsets.get(b - 1).copied().unwrap_or(0));
    }
    if let Some(o) = out.get_mut(i) {
        *o = v;
    }
}
