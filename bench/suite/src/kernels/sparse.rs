//! sparse kernels (device side): SpMV in CSR (thread per row, warp per row) and ELL, and an
//! indexed gather.
use oxide_rt::device::*;

/// `y = A x`, `A` in CSR (`row_ptr` has `rows + 1` entries), one thread per row.
#[kernel]
pub fn spmv_csr(row_ptr: &[u32], cols: &[u32], vals: &[f32], x: &[f32], mut y: DisjointSlice<f32>) {
    let i = thread::index();
    if let Some(yi) = y.get_mut(i) {
        let r = i.get();
        let (start, end) = (row_ptr[r] as usize, row_ptr[r + 1] as usize);
        let mut sum = 0.0f32;
        for (&c, &v) in cols[start..end].iter().zip(&vals[start..end]) {
            sum += v * x[c as usize];
        }
        *yi = sum;
    }
}

/// `y = A x`, `A` in column-major ELL: entry `k` of row `r` at `k * rows + r`, `width` entries
/// per row, padding entries with value 0 (and column 0). One thread per row.
#[kernel]
pub fn spmv_ell(cols: &[u32], vals: &[f32], width: u32, x: &[f32], mut y: DisjointSlice<f32>) {
    let i = thread::index();
    let rows = y.len();
    if let Some(yi) = y.get_mut(i) {
        let r = i.get();
        let mut sum = 0.0f32;
        for k in 0..width as usize {
            let j = k * rows + r;
            sum += vals[j] * x[cols[j] as usize];
        }
        *yi = sum;
    }
}

/// `y = A x`, `A` in CSR, one warp per row: the lanes stride through the row, a shuffle
/// reduction folds their sums, lane 0 writes the row's result.
#[kernel]
pub fn spmv_csr_warp(row_ptr: &[u32], cols: &[u32], vals: &[f32], x: &[f32], mut y: DisjointPerWarp<f32>) {
    let r = y.index();
    let lane = thread::lane_id() as usize;
    let mut sum = 0.0f32;
    if r + 1 < row_ptr.len() {
        let (start, end) = (row_ptr[r] as usize, row_ptr[r + 1] as usize);
        for j in (start + lane..end).step_by(32) {
            sum += vals[j] * x[cols[j] as usize];
        }
    }
    let mut offset = 16;
    while offset > 0 {
        sum += warp::shfl_down_sync(FULL_MASK, sum, offset, 32);
        offset /= 2;
    }
    if let Some(yr) = y.get_mut() {
        *yr = sum;
    }
}

/// `y[i] = x[idx[i]]`. 1-D launch.
#[kernel]
pub fn gather_indexed(idx: &[u32], x: &[f32], mut y: DisjointSlice<f32>) {
    let i = thread::index();
    if let Some(yi) = y.get_mut(i) {
        *yi = x[idx[i.get()] as usize];
    }
}
