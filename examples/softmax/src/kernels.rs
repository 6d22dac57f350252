//! Row-wise softmax, one block per row. Compiled twice: for the host (typed launchers, CPU
//! executor) and for nvptx64 (PTX).
use oxide_rt::device::thread::{lane_id, thread_idx, warp_id};
use oxide_rt::device::*;

/// Threads per block; block `b` owns row `b`.
pub const THREADS: u32 = 256;
const WARPS: usize = (THREADS / WARP_SIZE) as usize;
const B: usize = THREADS as usize;
/// Row elements each thread keeps in registers: a row of up to `THREADS * PER` = 4096 columns
/// is read from DRAM once and never again (H200: 0.96 of the copy ceiling, against 0.48 for a
/// warp per row that re-reads the row from L2 in three passes).
pub const PER: usize = 16;

/// `y[r][c] = exp(x[r][c] - max_r) / sum_c' exp(x[r][c'] - max_r)` for a row-major matrix
/// of `y.cols()` columns (the host passes `Slice2d::new(&mut y, cols)`); launch one block of
/// [`THREADS`] threads per row.
///
/// `y` is a [`DisjointRows`]: block `b` owns row `b`, and thread `t` its columns `t, t +
/// THREADS, ...` (coalesced). Rows up to `THREADS * PER` columns stay in registers between the
/// maximum, the sum and the write; longer rows take three passes over `x`.
#[kernel(dims = 1, block(THREADS))]
#[allow(clippy::needless_range_loop)] // k indexes the register row and the column in step
pub fn softmax_rows(x: &[f32], mut y: DisjointRows<f32>) {
    let t = thread_idx().x as usize;
    let cols = y.cols();
    let base = y.row() * cols;
    // `get`, not indexing: a block past the last row (or an `x` shorter than `y`) skips the
    // row instead of panicking, and the kernel carries no panic path (ptxas allocates
    // registers for it too). The condition is the same for the whole block, so all its threads
    // reach the barriers of the reductions below, or none does.
    let Some(xr) = x.get(base..base + cols).filter(|_| base + cols <= y.len()) else {
        return;
    };
    let partial = shared_array!(f32, WARPS);

    if cols <= B * PER {
        let mut v = [f32::NEG_INFINITY; PER];
        for k in 0..PER {
            if let Some(&e) = xr.get(t + k * B) {
                v[k] = e;
            }
        }
        let mut mx = v[0];
        for k in 1..PER {
            mx = math::max(mx, v[k]);
        }
        let mx = block_max(mx, partial);
        let mut s = 0.0f32;
        for k in 0..PER {
            v[k] = math::exp(v[k] - mx); // exp(-inf) = 0 past the row's end
            s += v[k];
        }
        let inv = 1.0 / block_sum(s, partial);
        for k in 0..PER {
            if let Some(o) = y.get_mut(k) {
                *o = v[k] * inv;
            }
        }
    } else {
        let mut mx = f32::NEG_INFINITY;
        let mut j = t;
        while j < cols {
            mx = math::max(mx, xr[j]);
            j += B;
        }
        let mx = block_max(mx, partial);
        let mut s = 0.0f32;
        let mut j = t;
        while j < cols {
            s += math::exp(xr[j] - mx);
            j += B;
        }
        let inv = 1.0 / block_sum(s, partial);
        for (c, o) in y.iter_mut() {
            *o = math::exp(xr[c] - mx) * inv;
        }
    }
}

/// The maximum of `v` over the block: butterflies within each warp, then every thread folds
/// the warps' results from shared memory. Ends with a barrier, so `partial` can be reused.
#[inline(always)]
fn block_max(v: f32, partial: SharedSlice<f32>) -> f32 {
    let mut m = v;
    let mut off = 16;
    while off > 0 {
        m = math::max(m, warp::shfl_xor_sync(FULL_MASK, m, off, 32));
        off /= 2;
    }
    let all = exchange(m, partial);
    all[1..].iter().fold(all[0], |m, &w| math::max(m, w))
}

/// The sum of `v` over the block, as [`block_max`].
#[inline(always)]
fn block_sum(v: f32, partial: SharedSlice<f32>) -> f32 {
    let all = exchange(warp::reduce_add_f32(v), partial);
    all[1..].iter().fold(all[0], |s, &w| s + w)
}

/// Every warp's `v` (the same in all its lanes), to every thread of the block.
#[inline(always)]
fn exchange(v: f32, partial: SharedSlice<f32>) -> [f32; WARPS] {
    let w = warp_id() as usize;
    if lane_id() == 0 {
        partial.set(w, v);
    }
    sync_threads();
    let mut all = [0.0f32; WARPS];
    for (i, a) in all.iter_mut().enumerate() {
        *a = partial.get(i);
    }
    sync_threads();
    all
}
