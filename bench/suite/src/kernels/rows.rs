//! row kernels (device side): layer norm and softmax cross-entropy with a block per row, a
//! matrix-vector product with a warp per row.
use oxide_rt::device::*;

/// Threads per block of the block-per-row kernels.
pub const ROW_BLOCK: u32 = 256;
const WARPS: usize = (ROW_BLOCK / WARP_SIZE) as usize;

/// The sum of `v` over the block (every thread gets it): shuffles within each warp, the warps'
/// sums through shared memory. Ends with a barrier, so `partial` can be reused right away.
fn block_sum(v: f32, partial: SharedSlice<f32>) -> f32 {
    let s = warp::reduce_add_f32(v);
    if thread::lane_id() == 0 {
        partial.set(thread::warp_id() as usize, s);
    }
    sync_threads();
    let mut total = 0.0;
    for w in 0..WARPS {
        total += partial.get(w);
    }
    sync_threads();
    total
}

/// The maximum of `v` over the block (every thread gets it), like [`block_sum`].
fn block_max(v: f32, partial: SharedSlice<f32>) -> f32 {
    let mut m = v;
    let mut off = 16;
    while off > 0 {
        m = math::max(m, warp::shfl_xor_sync(FULL_MASK, m, off, 32));
        off /= 2;
    }
    if thread::lane_id() == 0 {
        partial.set(thread::warp_id() as usize, m);
    }
    sync_threads();
    let mut total = f32::NEG_INFINITY;
    for w in 0..WARPS {
        total = math::max(total, partial.get(w));
    }
    sync_threads();
    total
}

/// Layer norm of each row of the row-major `x` (`y.cols()` columns):
/// `y = (x - mean) / sqrt(var + eps) * gamma + beta`, mean and (biased) variance over the row.
/// One block of [`ROW_BLOCK`] threads per row.
#[kernel(dims = 1, block(ROW_BLOCK))]
pub fn layernorm_rows(x: &[f32], gamma: &[f32], beta: &[f32], eps: f32, mut y: DisjointRows<f32>) {
    let partial = shared_array!(f32, WARPS);
    let cols = y.cols();
    let start = y.row() * cols;
    let Some(row) = x.get(start..start + cols) else {
        return;
    };
    let t = thread::thread_idx().x as usize;
    let mut s = 0.0;
    for v in row.iter().skip(t).step_by(ROW_BLOCK as usize) {
        s += v;
    }
    let mean = block_sum(s, partial) / cols as f32;
    let mut s2 = 0.0;
    for v in row.iter().skip(t).step_by(ROW_BLOCK as usize) {
        let d = v - mean;
        s2 += d * d;
    }
    let var = block_sum(s2, partial) / cols as f32;
    let rstd = 1.0 / math::sqrt(var + eps);
    for (c, out) in y.iter_mut() {
        *out = (row[c] - mean) * rstd * gamma[c] + beta[c];
    }
}

/// `y[r] = sum_c a[r][c] * x[c]` for the row-major `a` of `x.len()` columns, one warp per row
/// (warp `w` of the launch computes row `w`, its lanes stride over the columns).
#[kernel(dims = 1)]
pub fn matvec_warp(a: &[f32], x: &[f32], mut y: DisjointPerWarp<f32>) {
    let cols = x.len();
    let r = y.index();
    let lane = thread::lane_id() as usize;
    let mut s = 0.0;
    if let Some(row) = a.get(r * cols..(r + 1) * cols) {
        let mut c = lane;
        while c < cols {
            s += row[c] * x[c];
            c += 32;
        }
    }
    let total = warp::reduce_add_f32(s);
    if let Some(out) = y.get_mut() {
        *out = total;
    }
}

/// Softmax cross-entropy of each row of the row-major `logits` (`cols` columns) against its
/// class `labels[r]`: `loss[r] = log(sum_c exp(z_c - max)) + max - z[label]`. One block of
/// [`ROW_BLOCK`] threads per row; thread 0 writes the row's loss.
#[kernel(dims = 1, block(ROW_BLOCK))]
pub fn xent_rows(logits: &[f32], labels: &[u32], cols: usize, mut loss: DisjointPerBlock<f32>) {
    let partial = shared_array!(f32, WARPS);
    let r = loss.index();
    let Some(row) = logits.get(r * cols..(r + 1) * cols) else {
        return;
    };
    let t = thread::thread_idx().x as usize;
    let mut m = f32::NEG_INFINITY;
    for &v in row.iter().skip(t).step_by(ROW_BLOCK as usize) {
        m = math::max(m, v);
    }
    let m = block_max(m, partial);
    let mut s = 0.0;
    for &v in row.iter().skip(t).step_by(ROW_BLOCK as usize) {
        s += math::exp(v - m);
    }
    let s = block_sum(s, partial);
    if let Some(out) = loss.get_mut() {
        let label = labels[r] as usize;
        *out = math::log(s) + m - row[label];
    }
}
