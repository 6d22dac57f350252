//! conv kernels: problems, CPU references, CPU-executor runs. Signals and images are f32 in
//! [-1, 1); images are row-major.
use crate::kernels::conv as k;
use example_common::Rng;
use oxide_rt::{LaunchConfig, Slice2d};

pub use k::{GAUSS_R, GAUSS_TAPS, GBX, GBY, TAPS};

/// Block size of the 1-D convolution.
pub const BLOCK_1D: u32 = 256;
/// Block shape of the 2-D convolution.
pub const BLOCK_2D: (u32, u32) = (32, 8);

fn grid2d(width: usize, height: usize, block: (u32, u32)) -> LaunchConfig {
    let blocks = |n: usize, b: u32| u32::try_from(n.div_ceil(b as usize)).unwrap_or(u32::MAX).max(1);
    LaunchConfig::new((blocks(width, block.0), blocks(height, block.1)), block)
}

fn check_len(what: &str, len: usize, want: usize) -> Result<(), oxide_rt::Error> {
    if len == want {
        Ok(())
    } else {
        Err(oxide_rt::Error::Config(format!("{what}: input has {len} values, expected {want}")))
    }
}

/// `|got - want| <= tol` for every element, else the first one that is not.
fn compare_abs(got: &[f32], want: &[f32], tol: f32) -> Result<(), String> {
    example_common::compare_exact(got, want, "element", |g, w| (g - w).abs() <= tol)
        .map_err(|e| format!("{e} (tolerance {tol:e})"))
}

// ---- 1-D convolution, 15 taps -----------------------------------------------------------------

pub struct Signal {
    pub x: Vec<f32>,
    pub taps: [f32; TAPS],
}

pub fn conv1d_problem(seed: u64, n: usize) -> Signal {
    let mut rng = Rng::new(seed);
    let mut taps = [0.0f32; TAPS];
    taps.iter_mut().for_each(|t| *t = rng.f32() / TAPS as f32);
    Signal { x: rng.vec_f32(n), taps }
}

/// `y[i] = sum_k taps[k] * x[i + k - 7]`, zero outside, summed in tap order.
pub fn conv1d_reference(p: &Signal) -> Vec<f32> {
    let n = p.x.len();
    (0..n)
        .map(|i| {
            let mut acc = 0.0f32;
            for (k, &t) in p.taps.iter().enumerate() {
                let j = i as isize + k as isize - (TAPS / 2) as isize;
                if j >= 0 && (j as usize) < n {
                    acc += t * p.x[j as usize];
                }
            }
            acc
        })
        .collect()
}

pub fn conv1d_config(p: &Signal) -> LaunchConfig {
    let blocks = u32::try_from(p.x.len().div_ceil(BLOCK_1D as usize)).unwrap_or(u32::MAX).max(1);
    LaunchConfig::new(blocks, BLOCK_1D)
}

pub fn conv1d_cpu(p: &Signal) -> Result<Vec<f32>, oxide_rt::Error> {
    let mut y = vec![0.0f32; p.x.len()];
    k::cpu_conv1d_15_with(conv1d_config(p), &p.x, p.taps, &mut y)?;
    Ok(y)
}

/// Within 1e-5 absolute: taps sum to at most 1 in magnitude and inputs lie in [-1, 1), so the
/// fmas the GPU contracts (15 roundings fewer) move the result by at most ~16 ulps of 1.
pub fn conv1d_compare(got: &[f32], want: &[f32]) -> Result<(), String> {
    compare_abs(got, want, 1e-5)
}

// ---- 2-D convolution 3x3 ----------------------------------------------------------------------

pub struct Image {
    pub width: usize,
    pub height: usize,
    pub px: Vec<f32>,
}

pub struct Conv2dProblem {
    pub image: Image,
    pub w: [f32; 9],
}

pub fn conv2d_problem(seed: u64, width: usize, height: usize) -> Conv2dProblem {
    let mut rng = Rng::new(seed);
    let mut w = [0.0f32; 9];
    w.iter_mut().for_each(|v| *v = rng.f32() / 9.0);
    Conv2dProblem { image: Image { width, height, px: rng.vec_f32(width * height) }, w }
}

/// `out[y][x] = sum w[dy*3+dx] * in[y+dy-1][x+dx-1]`, zero outside, dy then dx.
pub fn conv2d_reference(p: &Conv2dProblem) -> Vec<f32> {
    let (cols, rows) = (p.image.width as isize, p.image.height as isize);
    let mut out = Vec::with_capacity(p.image.px.len());
    for y in 0..rows {
        for x in 0..cols {
            let mut acc = 0.0f32;
            for dy in 0..3 {
                for dx in 0..3 {
                    let (xx, yy) = (x + dx - 1, y + dy - 1);
                    if xx >= 0 && yy >= 0 && xx < cols && yy < rows {
                        acc += p.w[(dy * 3 + dx) as usize] * p.image.px[(yy * cols + xx) as usize];
                    }
                }
            }
            out.push(acc);
        }
    }
    out
}

pub fn conv2d_config(p: &Conv2dProblem) -> LaunchConfig {
    grid2d(p.image.width, p.image.height, BLOCK_2D)
}

pub fn conv2d_cpu(p: &Conv2dProblem) -> Result<Vec<f32>, oxide_rt::Error> {
    check_len("conv2d_3x3", p.image.px.len(), p.image.width * p.image.height)?;
    let mut out = vec![0.0f32; p.image.px.len()];
    k::cpu_conv2d_3x3_with(conv2d_config(p), &p.image.px, p.w, Slice2d::new(&mut out, p.image.width))?;
    Ok(out)
}

/// Within 1e-5 absolute (weights sum to at most 1 in magnitude, see [`conv1d_compare`]).
pub fn conv2d_compare(got: &[f32], want: &[f32]) -> Result<(), String> {
    compare_abs(got, want, 1e-5)
}

// ---- separable Gaussian ----------------------------------------------------------------------

pub struct GaussProblem {
    pub image: Image,
    /// Normalised Gaussian weights, sigma 1.5.
    pub taps: [f32; GAUSS_TAPS],
}

pub fn gauss_problem(seed: u64, width: usize, height: usize) -> GaussProblem {
    let mut rng = Rng::new(seed);
    let sigma = 1.5f64;
    let raw: Vec<f64> =
        (0..GAUSS_TAPS).map(|k| (-((k as f64 - GAUSS_R as f64).powi(2)) / (2.0 * sigma * sigma)).exp()).collect();
    let total: f64 = raw.iter().sum();
    let mut taps = [0.0f32; GAUSS_TAPS];
    taps.iter_mut().zip(&raw).for_each(|(t, r)| *t = (r / total) as f32);
    GaussProblem { image: Image { width, height, px: rng.vec_f32(width * height) }, taps }
}

/// Row pass then column pass, each `sum_k taps[k] * v[clamp(i + k - R)]` in tap order.
pub fn gauss_reference(p: &GaussProblem) -> Vec<f32> {
    let (w, h) = (p.image.width, p.image.height);
    let clamp = |i: usize, k: usize, n: usize| (i + k).saturating_sub(GAUSS_R).min(n - 1);
    let mut tmp = vec![0.0f32; w * h];
    for y in 0..h {
        for x in 0..w {
            let mut acc = 0.0f32;
            for (k, &c) in p.taps.iter().enumerate() {
                acc += c * p.image.px[y * w + clamp(x, k, w)];
            }
            tmp[y * w + x] = acc;
        }
    }
    let mut out = vec![0.0f32; w * h];
    for y in 0..h {
        for x in 0..w {
            let mut acc = 0.0f32;
            for (k, &c) in p.taps.iter().enumerate() {
                acc += c * tmp[clamp(y, k, h) * w + x];
            }
            out[y * w + x] = acc;
        }
    }
    out
}

/// Both passes: one thread per pixel, `GBX × GBY` blocks (the kernels require that shape).
pub fn gauss_config(p: &GaussProblem) -> LaunchConfig {
    grid2d(p.image.width, p.image.height, (GBX, GBY))
}

/// The row pass into a temporary, then the column pass.
pub fn gauss_cpu(p: &GaussProblem) -> Result<Vec<f32>, oxide_rt::Error> {
    let (w, h) = (p.image.width, p.image.height);
    check_len("gauss", p.image.px.len(), w * h)?;
    let cfg = gauss_config(p);
    let mut tmp = vec![0.0f32; w * h];
    k::cpu_gauss_rows_with(cfg, &p.image.px, p.taps, Slice2d::new(&mut tmp, w))?;
    let mut out = vec![0.0f32; w * h];
    k::cpu_gauss_cols_with(cfg, &tmp, p.taps, Slice2d::new(&mut out, w))?;
    Ok(out)
}

/// Within 1e-5 absolute: normalised positive taps, inputs in [-1, 1), two passes of 9 terms
/// whose roundings the GPU's fmas may change (~20 ulps of 1 at most).
pub fn gauss_compare(got: &[f32], want: &[f32]) -> Result<(), String> {
    compare_abs(got, want, 1e-5)
}
