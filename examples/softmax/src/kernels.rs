//! Row-wise softmax, one warp per row. Compiled twice: for the host (typed launchers, CPU
//! executor) and for nvptx64 (PTX).
use oxide_rt::device::atomic::{AtomicU32, Ordering};
use oxide_rt::device::thread::{block_idx, lane_id, warp_id};
use oxide_rt::device::*;

/// Warps (rows) per block: 8 warps = 256 threads.
pub const WARPS: u32 = 8;
/// Loads in flight per lane in each pass (manual unroll, so both passes keep several 128-byte
/// warp loads outstanding; the CUDA twin unrolls the same way).
const UNROLL: usize = 4;

/// `y[r][c] = exp(x[r][c] - max_r) / sum_c' exp(x[r][c'] - max_r)` for a `rows x cols`
/// row-major matrix; warp `w` of block `b` owns row `b * WARPS + w`.
///
/// Three passes over the row (max, sum of exponentials, write); the row is read from DRAM once
/// and the later passes hit L1/L2. The warp writes its whole row, which `DisjointSlice` (one
/// element per thread) cannot express, so `y` is a slice of `AtomicU32` written with relaxed
/// stores of the `f32` bits: rows are disjoint between warps and columns between lanes, so no
/// element has two writers.
#[kernel(dims = 1)]
#[allow(clippy::needless_range_loop)] // the unrolled lanes index two arrays in step
pub fn softmax_rows(x: &[f32], rows: u32, cols: u32, y: &[AtomicU32]) {
    let row = block_idx().x * WARPS + warp_id();
    // The whole warp leaves together (a warp-uniform branch), so the shuffles below always see
    // all 32 lanes.
    if row >= rows {
        return;
    }
    let lane = lane_id() as usize;
    let cols = cols as usize;
    let base = row as usize * cols;
    // `get`, not indexing: a wrong `rows`/`cols` from the host skips the row instead of
    // panicking, and the kernel carries no panic path (ptxas allocates registers for it too).
    let (Some(xr), Some(yr)) = (x.get(base..base + cols), y.get(base..base + cols)) else {
        return;
    };
    const W: usize = WARP_SIZE as usize;
    const STEP: usize = W * UNROLL;

    // Pass 1: the row maximum, four independent chains per lane.
    let mut m = [f32::NEG_INFINITY; UNROLL];
    let mut j = lane;
    while j + (UNROLL - 1) * W < cols {
        for u in 0..UNROLL {
            // SAFETY: j + u * W <= j + (UNROLL - 1) * W < cols == xr.len() (loop condition).
            m[u] = math::max(m[u], unsafe { *xr.get_unchecked(j + u * W) });
        }
        j += STEP;
    }
    while j < cols {
        m[0] = math::max(m[0], xr[j]);
        j += W;
    }
    let mut mx = math::max(math::max(m[0], m[1]), math::max(m[2], m[3]));
    let mut off = 16;
    while off > 0 {
        mx = math::max(mx, warp::shfl_xor_sync(FULL_MASK, mx, off, 32));
        off /= 2;
    }

    // Pass 2: the sum of exp(x - max).
    let mut s = [0.0f32; UNROLL];
    let mut j = lane;
    while j + (UNROLL - 1) * W < cols {
        for u in 0..UNROLL {
            // SAFETY: as in pass 1.
            s[u] += math::exp(unsafe { *xr.get_unchecked(j + u * W) } - mx);
        }
        j += STEP;
    }
    while j < cols {
        s[0] += math::exp(xr[j] - mx);
        j += W;
    }
    let sum = warp::reduce_add_f32((s[0] + s[1]) + (s[2] + s[3]));
    let inv = 1.0 / sum;

    // Pass 3: normalise and store.
    let mut j = lane;
    while j + (UNROLL - 1) * W < cols {
        for u in 0..UNROLL {
            // SAFETY: as in pass 1 (yr.len() == xr.len()).
            let (xv, yv) = unsafe { (*xr.get_unchecked(j + u * W), yr.get_unchecked(j + u * W)) };
            yv.store((math::exp(xv - mx) * inv).to_bits(), Ordering::Relaxed);
        }
        j += STEP;
    }
    while j < cols {
        yr[j].store((math::exp(xr[j] - mx) * inv).to_bits(), Ordering::Relaxed);
        j += W;
    }
}
