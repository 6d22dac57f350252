//! row kernels: problems, CPU references, CPU-executor runs.
use crate::kernels::rows as k;
use example_common::Rng;
use oxide_rt::{LaunchConfig, Slice2d};

/// f32 unit roundoff.
const U: f64 = 1.0 / (1u64 << 24) as f64;

fn len_mismatch<T>(got: &[T], want_len: usize) -> Result<(), String> {
    if got.len() != want_len {
        return Err(format!("length {} != {want_len}", got.len()));
    }
    Ok(())
}

/// One block of [`k::ROW_BLOCK`] threads per row.
pub fn block_per_row_config(rows: usize) -> LaunchConfig {
    LaunchConfig::new(u32::try_from(rows.max(1)).unwrap_or(u32::MAX), k::ROW_BLOCK)
}

// ---------------------------------------------------------------------------------------------
// Layer norm

pub struct LayerNormProblem {
    pub rows: usize,
    pub cols: usize,
    /// Row-major `rows x cols`, values in [-1, 1) plus a per-row offset in [-2, 2).
    pub x: Vec<f32>,
    pub gamma: Vec<f32>,
    pub beta: Vec<f32>,
    pub eps: f32,
}

pub fn layernorm_problem(seed: u64, rows: usize, cols: usize) -> LayerNormProblem {
    let mut rng = Rng::new(seed);
    let mut x = Vec::with_capacity(rows * cols);
    for _ in 0..rows {
        let offset = 2.0 * rng.f32();
        x.extend((0..cols).map(|_| offset + rng.f32()));
    }
    let gamma = (0..cols).map(|_| 1.0 + 0.5 * rng.f32()).collect();
    let beta = rng.vec_f32(cols);
    LayerNormProblem { rows, cols, x, gamma, beta, eps: 1e-5 }
}

/// Per element `(y, scale)` in f64: `y` exact, `scale = |gamma| (|x_hat| + 1) + |beta|` for the
/// tolerance.
pub fn layernorm_reference(p: &LayerNormProblem) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(p.x.len());
    for row in p.x.chunks(p.cols.max(1)) {
        let n = row.len() as f64;
        let mean = row.iter().map(|&v| v as f64).sum::<f64>() / n;
        let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n;
        let rstd = 1.0 / (var + p.eps as f64).sqrt();
        for (c, &v) in row.iter().enumerate() {
            let (g, b) = (p.gamma[c] as f64, p.beta[c] as f64);
            let xh = (v as f64 - mean) * rstd;
            out.push((xh * g + b, g.abs() * (xh.abs() + 1.0) + b.abs()));
        }
    }
    out
}

pub fn layernorm_config(rows: usize) -> LaunchConfig {
    block_per_row_config(rows)
}

pub fn layernorm_cpu(p: &LayerNormProblem) -> Result<Vec<f32>, oxide_rt::Error> {
    let mut y = vec![0f32; p.x.len()];
    k::cpu_layernorm_rows_with(layernorm_config(p.rows), &p.x, &p.gamma, &p.beta, p.eps, Slice2d::new(&mut y, p.cols))?;
    Ok(y)
}

/// Tolerance `512 u` of the element's scale: the f32 sums of `cols <= 16384` values (at most
/// `cols / 256` sequential adds per thread, 5 butterflies, 8 adds over the warps: < 80 u of the
/// sum of magnitudes, which the row offset makes up to 3x the mean) give the mean and variance
/// to a few hundred u relative; `rsqrt` of the variance halves that, and the final products and
/// sum add a few u.
pub fn layernorm_compare(got: &[f32], want: &[(f64, f64)]) -> Result<(), String> {
    len_mismatch(got, want.len())?;
    for (i, (&g, &(w, scale))) in got.iter().zip(want).enumerate() {
        let tol = 512.0 * U * scale;
        let err = (g as f64 - w).abs();
        if err.is_nan() || err > tol {
            return Err(format!("element {i}: got {g}, want {w} (tolerance {tol:e})"));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Matrix-vector product, a warp per row

pub struct MatvecProblem {
    pub rows: usize,
    pub cols: usize,
    /// Row-major `rows x cols`, values in [-1, 1).
    pub a: Vec<f32>,
    /// `cols` values in [-1, 1).
    pub x: Vec<f32>,
}

pub fn matvec_problem(seed: u64, rows: usize, cols: usize) -> MatvecProblem {
    let mut rng = Rng::new(seed);
    MatvecProblem { rows, cols, a: rng.vec_f32(rows * cols), x: rng.vec_f32(cols) }
}

/// Per row `(y, sum of |a x|)` in f64.
pub fn matvec_reference(p: &MatvecProblem) -> Vec<(f64, f64)> {
    if p.cols == 0 {
        return vec![(0.0, 0.0); p.rows];
    }
    p.a.chunks(p.cols)
        .map(|row| {
            row.iter().zip(&p.x).fold((0.0, 0.0), |(s, m), (&a, &x)| {
                let t = a as f64 * x as f64;
                (s + t, m + t.abs())
            })
        })
        .collect()
}

/// Threads per block of [`k::matvec_warp`] (8 warps, so 8 rows per block).
pub const MATVEC_BLOCK: u32 = 256;

/// One warp per row.
pub fn matvec_config(rows: usize) -> LaunchConfig {
    let per_block = (MATVEC_BLOCK / 32) as usize;
    LaunchConfig::new(u32::try_from(rows.div_ceil(per_block).max(1)).unwrap_or(u32::MAX), MATVEC_BLOCK)
}

pub fn matvec_cpu(p: &MatvecProblem) -> Result<Vec<f32>, oxide_rt::Error> {
    let mut y = vec![0f32; p.rows];
    k::cpu_matvec_warp_with(matvec_config(p.rows), &p.a, &p.x, &mut y)?;
    Ok(y)
}

/// Tolerance `(cols / 32 + 8) u` of the row's sum of magnitudes: each lane adds `cols / 32`
/// products in sequence (fused or not), then 5 butterfly adds.
pub fn matvec_compare(got: &[f32], want: &[(f64, f64)], cols: usize) -> Result<(), String> {
    len_mismatch(got, want.len())?;
    for (i, (&g, &(w, mag))) in got.iter().zip(want).enumerate() {
        let tol = ((cols / 32) as f64 + 8.0) * U * mag;
        let err = (g as f64 - w).abs();
        if err.is_nan() || err > tol {
            return Err(format!("row {i}: got {g}, want {w} (tolerance {tol:e})"));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Softmax cross-entropy

pub struct XentProblem {
    pub rows: usize,
    pub cols: usize,
    /// Row-major `rows x cols`, values in [-8, 8).
    pub logits: Vec<f32>,
    /// A class `< cols` per row.
    pub labels: Vec<u32>,
}

pub fn xent_problem(seed: u64, rows: usize, cols: usize) -> XentProblem {
    let mut rng = Rng::new(seed);
    let logits = (0..rows * cols).map(|_| 8.0 * rng.f32()).collect();
    let labels = (0..rows).map(|_| (rng.next_u64() % cols.max(1) as u64) as u32).collect();
    XentProblem { rows, cols, logits, labels }
}

/// Per row `(loss, scale)` in f64; `scale = |log sum| + |max| + |z_label|` for the tolerance.
pub fn xent_reference(p: &XentProblem) -> Vec<(f64, f64)> {
    p.logits
        .chunks(p.cols.max(1))
        .zip(&p.labels)
        .map(|(row, &l)| {
            let m = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
            let lse = row.iter().map(|&v| (v as f64 - m).exp()).sum::<f64>().ln();
            let z = row[l as usize] as f64;
            (lse + m - z, lse.abs() + m.abs() + z.abs())
        })
        .collect()
}

pub fn xent_config(rows: usize) -> LaunchConfig {
    block_per_row_config(rows)
}

pub fn xent_cpu(p: &XentProblem) -> Result<Vec<f32>, oxide_rt::Error> {
    let mut loss = vec![0f32; p.rows];
    k::cpu_xent_rows_with(xent_config(p.rows), &p.logits, &p.labels, p.cols, &mut loss)?;
    Ok(loss)
}

/// Tolerance `(cols / 256 + 64) u` of the scale plus that absolute: the sum of exponentials
/// (each within 2 ulp, `cols / 256` sequential adds per thread, 13 more in the reductions) is
/// relatively accurate to that, which `log` turns into an absolute error (the sum is >= 1),
/// and the two final additions round at the scale.
pub fn xent_compare(got: &[f32], want: &[(f64, f64)], cols: usize) -> Result<(), String> {
    len_mismatch(got, want.len())?;
    for (i, (&g, &(w, scale))) in got.iter().zip(want).enumerate() {
        let tol = ((cols / 256) as f64 + 64.0) * U * (scale + 1.0);
        let err = (g as f64 - w).abs();
        if err.is_nan() || err > tol {
            return Err(format!("row {i}: got {g}, want {w} (tolerance {tol:e})"));
        }
    }
    Ok(())
}
