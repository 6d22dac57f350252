//! sparse kernels: problems, CPU references, CPU-executor runs. Matrices have random columns
//! (uniform, unsorted, repeats allowed) and values in [-1, 1); `x` in [-1, 1).
use crate::kernels::sparse as k;
use example_common::Rng;
use oxide_rt::LaunchConfig;

/// Block size of every sparse kernel (1-D launches).
pub const BLOCK: u32 = 256;

/// A sparse matrix in CSR with `u32` indices.
pub struct Csr {
    pub rows: usize,
    pub cols: usize,
    /// `rows + 1` offsets into `col_idx` / `vals`.
    pub row_ptr: Vec<u32>,
    pub col_idx: Vec<u32>,
    pub vals: Vec<f32>,
}

/// `A` and the vector `x` of `y = A x`.
pub struct Spmv {
    pub a: Csr,
    pub x: Vec<f32>,
}

/// `A` in column-major ELL: entry `k` of row `r` at `k * rows + r`; padding has value 0 and
/// column 0.
pub struct Ell {
    pub rows: usize,
    pub width: usize,
    pub col_idx: Vec<u32>,
    pub vals: Vec<f32>,
}

/// A `rows × cols` matrix with a uniformly random number of entries in `min_nnz..=max_nnz`
/// per row, and `x`.
pub fn spmv_problem(seed: u64, rows: usize, cols: usize, min_nnz: usize, max_nnz: usize) -> Spmv {
    let mut rng = Rng::new(seed);
    let (cols, max_nnz) = (cols.max(1), max_nnz.max(min_nnz));
    let mut row_ptr = Vec::with_capacity(rows + 1);
    row_ptr.push(0u32);
    let mut nnz = 0usize;
    let per_row: Vec<usize> =
        (0..rows).map(|_| min_nnz + (rng.next_u64() % (max_nnz - min_nnz + 1) as u64) as usize).collect();
    for &c in &per_row {
        nnz += c;
        row_ptr.push(nnz as u32);
    }
    let col_idx = (0..nnz).map(|_| (rng.next_u64() % cols as u64) as u32).collect();
    let vals = rng.vec_f32(nnz);
    let x = rng.vec_f32(cols);
    Spmv { a: Csr { rows, cols, row_ptr, col_idx, vals }, x }
}

/// `y[r] = sum over the row's entries, in order, of vals * x[col]`.
pub fn spmv_reference(p: &Spmv) -> Vec<f32> {
    let a = &p.a;
    (0..a.rows)
        .map(|r| {
            let (s, e) = (a.row_ptr[r] as usize, a.row_ptr[r + 1] as usize);
            let mut sum = 0.0f32;
            for j in s..e {
                sum += a.vals[j] * p.x[a.col_idx[j] as usize];
            }
            sum
        })
        .collect()
}

/// The same matrix in column-major ELL, `width` = the longest row.
pub fn to_ell(a: &Csr) -> Ell {
    let width = (0..a.rows).map(|r| (a.row_ptr[r + 1] - a.row_ptr[r]) as usize).max().unwrap_or(0);
    let mut col_idx = vec![0u32; width * a.rows];
    let mut vals = vec![0.0f32; width * a.rows];
    for r in 0..a.rows {
        let s = a.row_ptr[r] as usize;
        for (k, j) in (s..a.row_ptr[r + 1] as usize).enumerate() {
            col_idx[k * a.rows + r] = a.col_idx[j];
            vals[k * a.rows + r] = a.vals[j];
        }
    }
    Ell { rows: a.rows, width, col_idx, vals }
}

/// Per row, `sum |vals * x|` and the entry count: the scale of the rounding error.
fn row_scales(p: &Spmv) -> Vec<(f32, usize)> {
    let a = &p.a;
    (0..a.rows)
        .map(|r| {
            let (s, e) = (a.row_ptr[r] as usize, a.row_ptr[r + 1] as usize);
            let abs = (s..e).map(|j| (a.vals[j] * p.x[a.col_idx[j] as usize]).abs()).sum::<f32>();
            (abs, e - s)
        })
        .collect()
}

/// Within the rounding error of two different `n`-term summations (order, and fmas the GPU
/// contracts): `|got - want| <= (n + 2) * eps * sum |a_rj x_j| + 1e-30` per row — a bound for
/// any summation order (each result is within `n * u * sum|terms|` of the exact sum,
/// `u = eps / 2`).
pub fn spmv_compare(p: &Spmv, got: &[f32], want: &[f32]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    let scales = row_scales(p);
    for (r, ((g, w), (abs, n))) in got.iter().zip(want).zip(scales).enumerate() {
        let tol = (n + 2) as f32 * f32::EPSILON * abs * 1.01 + 1e-30;
        if (g - w).abs() > tol || g.is_nan() {
            return Err(format!("row {r}: got {g}, want {w} (tolerance {tol:e}, {n} entries)"));
        }
    }
    Ok(())
}

fn blocks(threads: usize) -> u32 {
    u32::try_from(threads.div_ceil(BLOCK as usize)).unwrap_or(u32::MAX).max(1)
}

fn check(p: &Spmv) -> Result<(), oxide_rt::Error> {
    let a = &p.a;
    let ok = a.row_ptr.len() == a.rows + 1
        && a.row_ptr.last().map(|&e| e as usize) == Some(a.col_idx.len())
        && a.vals.len() == a.col_idx.len()
        && p.x.len() == a.cols;
    if ok {
        Ok(())
    } else {
        Err(oxide_rt::Error::Config("sparse: inconsistent CSR matrix; build it with `spmv_problem`".into()))
    }
}

// ---- CSR, thread per row ----------------------------------------------------------------------

/// One thread per row.
pub fn spmv_csr_config(p: &Spmv) -> LaunchConfig {
    LaunchConfig::new(blocks(p.a.rows), BLOCK)
}

pub fn spmv_csr_cpu(p: &Spmv) -> Result<Vec<f32>, oxide_rt::Error> {
    check(p)?;
    let mut y = vec![0.0f32; p.a.rows];
    k::cpu_spmv_csr_with(spmv_csr_config(p), &p.a.row_ptr, &p.a.col_idx, &p.a.vals, &p.x, &mut y)?;
    Ok(y)
}

// ---- ELL, thread per row ----------------------------------------------------------------------

/// One thread per row.
pub fn spmv_ell_config(e: &Ell) -> LaunchConfig {
    LaunchConfig::new(blocks(e.rows), BLOCK)
}

pub fn spmv_ell_cpu(p: &Spmv, e: &Ell) -> Result<Vec<f32>, oxide_rt::Error> {
    check(p)?;
    let width = u32::try_from(e.width).map_err(|_| oxide_rt::Error::Config("spmv_ell: width exceeds u32".into()))?;
    let mut y = vec![0.0f32; e.rows];
    k::cpu_spmv_ell_with(spmv_ell_config(e), &e.col_idx, &e.vals, width, &p.x, &mut y)?;
    Ok(y)
}

// ---- CSR, warp per row ------------------------------------------------------------------------

/// One warp (32 threads) per row.
pub fn spmv_csr_warp_config(p: &Spmv) -> LaunchConfig {
    LaunchConfig::new(blocks(p.a.rows.saturating_mul(32)), BLOCK)
}

pub fn spmv_csr_warp_cpu(p: &Spmv) -> Result<Vec<f32>, oxide_rt::Error> {
    check(p)?;
    let mut y = vec![0.0f32; p.a.rows];
    k::cpu_spmv_csr_warp_with(spmv_csr_warp_config(p), &p.a.row_ptr, &p.a.col_idx, &p.a.vals, &p.x, &mut y)?;
    Ok(y)
}

// ---- indexed gather ---------------------------------------------------------------------------

pub struct Gather {
    /// Random indices into `x`.
    pub idx: Vec<u32>,
    pub x: Vec<f32>,
}

/// `n` random indices into an `x` of `m` values.
pub fn gather_problem(seed: u64, n: usize, m: usize) -> Gather {
    let mut rng = Rng::new(seed);
    let m = m.max(1);
    let x = rng.vec_f32(m);
    let idx = (0..n).map(|_| (rng.next_u64() % m as u64) as u32).collect();
    Gather { idx, x }
}

pub fn gather_reference(p: &Gather) -> Vec<f32> {
    p.idx.iter().map(|&i| p.x[i as usize]).collect()
}

/// One thread per output.
pub fn gather_config(p: &Gather) -> LaunchConfig {
    LaunchConfig::new(blocks(p.idx.len()), BLOCK)
}

pub fn gather_cpu(p: &Gather) -> Result<Vec<f32>, oxide_rt::Error> {
    let mut y = vec![0.0f32; p.idx.len()];
    k::cpu_gather_indexed_with(gather_config(p), &p.idx, &p.x, &mut y)?;
    Ok(y)
}

/// Exact (a copy).
pub fn gather_compare(got: &[f32], want: &[f32]) -> Result<(), String> {
    example_common::compare_exact(got, want, "element", |g, w| g.to_bits() == w.to_bits())
}
