//! math kernels: problems, CPU references, CPU-executor runs.
use crate::kernels::math as k;
use example_common::Rng;
use oxide_rt::{LaunchConfig, Slice2d};

/// Threads per block of the 1D map kernels.
pub const BLOCK: u32 = 256;
/// Block shape of [`k::mandelbrot`].
pub const MANDEL_BLOCK: (u32, u32) = (32, 8);

fn config_1d(n: usize) -> LaunchConfig {
    LaunchConfig::new(u32::try_from(n.div_ceil(BLOCK as usize).max(1)).unwrap_or(u32::MAX), BLOCK)
}

// ---------------------------------------------------------------------------------------------
// Mandelbrot

pub struct MandelProblem {
    pub width: usize,
    pub height: usize,
    pub x0: f32,
    pub y0: f32,
    pub step: f32,
    pub max_iter: u32,
}

/// The view `[-2.25, 0.75] x [-1.5, 1.5)`-ish at `width x height` pixels (square pixels of
/// `3 / width`); `seed` shifts the view by up to a few pixels.
pub fn mandel_problem(seed: u64, width: usize, height: usize, max_iter: u32) -> MandelProblem {
    let mut rng = Rng::new(seed);
    let step = 3.0 / width.max(1) as f32;
    let x0 = -2.25 + 2.0 * step * rng.f32();
    let y0 = -0.5 * step * height as f32 + 2.0 * step * rng.f32();
    MandelProblem { width, height, x0, y0, step, max_iter }
}

/// The escape time of every pixel, row-major, with the kernel's f32 arithmetic.
pub fn mandel_reference(p: &MandelProblem) -> Vec<u32> {
    let mut out = Vec::with_capacity(p.width * p.height);
    for y in 0..p.height {
        for x in 0..p.width {
            let cx = p.x0 + x as f32 * p.step;
            let cy = p.y0 + y as f32 * p.step;
            let (mut zx, mut zy) = (0.0f32, 0.0f32);
            let mut n = 0;
            while n < p.max_iter && zx * zx + zy * zy <= 4.0 {
                let t = zx * zx - zy * zy + cx;
                zy = 2.0 * zx * zy + cy;
                zx = t;
                n += 1;
            }
            out.push(n);
        }
    }
    out
}

/// A 2D grid of [`MANDEL_BLOCK`] blocks over the image.
pub fn mandel_config(width: usize, height: usize) -> LaunchConfig {
    let (bx, by) = MANDEL_BLOCK;
    let gx = u32::try_from(width.div_ceil(bx as usize).max(1)).unwrap_or(u32::MAX);
    let gy = u32::try_from(height.div_ceil(by as usize).max(1)).unwrap_or(u32::MAX);
    LaunchConfig::new((gx, gy, 1), (bx, by, 1))
}

pub fn mandel_cpu(p: &MandelProblem) -> Result<Vec<u32>, oxide_rt::Error> {
    let mut out = vec![0u32; p.width * p.height];
    k::cpu_mandelbrot_with(
        mandel_config(p.width, p.height),
        p.x0,
        p.y0,
        p.step,
        p.max_iter,
        Slice2d::new(&mut out, p.width),
    )?;
    Ok(out)
}

/// The escape time is chaotic near the set's boundary: there one rounding more or less (the
/// GPU contracts `a * b + c` into one fma, in an order of its compiler's choosing) changes the
/// count. So at most `max_mismatch` of the pixels (a fraction) may differ; 0 demands equality
/// (the CPU executor rounds exactly as the reference).
pub fn mandel_compare(got: &[u32], want: &[u32], max_mismatch: f64) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    let bad: Vec<usize> = got.iter().zip(want).enumerate().filter(|(_, (g, w))| g != w).map(|(i, _)| i).collect();
    if bad.len() as f64 > max_mismatch * got.len() as f64 {
        let i = bad[0];
        return Err(format!(
            "{} of {} pixels differ (allowed fraction {max_mismatch}); first at {i}: got {}, want {}",
            bad.len(),
            got.len(),
            got[i],
            want[i]
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Transcendental maps

/// Inputs in [0.05, 4.05).
pub fn transcend_problem_f32(seed: u64, n: usize) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| 2.05 + 2.0 * rng.f32()).collect()
}

/// Inputs in [0.05, 4.05).
pub fn transcend_problem_f64(seed: u64, n: usize) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| 0.05 + 4.0 * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64).collect()
}

/// `f(v)` of [`k::transcend_f32`] in f64, and the sum of the magnitudes of its terms.
pub fn transcend_exact(v: f64) -> (f64, f64) {
    let a = (-0.5 * v).exp();
    let b = (1.0 + v * v).ln();
    let c = (3.0 * v).sin();
    let d = v.powf(1.5);
    let terms = [a * c, b * d, -(a + b).sqrt(), v.cos() / (1.0 + v)];
    (terms.iter().sum(), terms.iter().map(|t| t.abs()).sum())
}

/// `(f(x), scale)` per input, in f64 (see [`transcend_exact`]).
pub fn transcend_reference(x: impl IntoIterator<Item = f64>) -> Vec<(f64, f64)> {
    x.into_iter().map(transcend_exact).collect()
}

/// One thread per element in blocks of [`BLOCK`].
pub fn transcend_config(n: usize) -> LaunchConfig {
    config_1d(n)
}

pub fn transcend_f32_cpu(x: &[f32]) -> Result<Vec<f32>, oxide_rt::Error> {
    let mut y = vec![0f32; x.len()];
    k::cpu_transcend_f32_with(transcend_config(x.len()), x, &mut y)?;
    Ok(y)
}

pub fn transcend_f64_cpu(x: &[f64]) -> Result<Vec<f64>, oxide_rt::Error> {
    let mut y = vec![0f64; x.len()];
    k::cpu_transcend_f64_with(transcend_config(x.len()), x, &mut y)?;
    Ok(y)
}

/// Tolerance in units of the type's roundoff `u`, relative to the sum of the terms' magnitudes:
/// each of exp, log, sin, cos, pow, sqrt errs by at most 2 ulp in libdevice (1 in the host's
/// libm), the arguments `-v/2`, `1 + v^2`, `3v` and `1 + v` carry one rounding each (which
/// `sin(3v)` amplifies by up to 3v < 13 u), and the products, quotient and sums one each. 64 u
/// covers that sum with room to spare.
pub const TRANSCEND_ULPS: f64 = 64.0;

/// Checks `got` (f32 or f64 results as f64) against the reference with [`TRANSCEND_ULPS`] of
/// `unit_roundoff` (2^-24 for f32, 2^-53 for f64).
pub fn transcend_compare(got: &[f64], want: &[(f64, f64)], unit_roundoff: f64) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    for (i, (&g, &(w, scale))) in got.iter().zip(want).enumerate() {
        let tol = TRANSCEND_ULPS * unit_roundoff * scale;
        let err = (g - w).abs();
        if err.is_nan() || err > tol {
            return Err(format!("element {i}: got {g}, want {w} (tolerance {tol:e})"));
        }
    }
    Ok(())
}

/// f32 unit roundoff, for [`transcend_compare`].
pub const U_F32: f64 = 1.0 / (1u64 << 24) as f64;
/// f64 unit roundoff, for [`transcend_compare`].
pub const U_F64: f64 = 1.0 / (1u64 << 53) as f64;

// ---------------------------------------------------------------------------------------------
// Integer hash and bit operations

pub struct BitsProblem {
    pub keys: Vec<u32>,
    pub seed: u32,
}

pub fn bits_problem(seed: u64, n: usize) -> BitsProblem {
    let mut rng = Rng::new(seed);
    let mut keys = rng.vec_u32(n);
    // A few keys with many leading zeros and the extremes.
    for (i, kk) in keys.iter_mut().enumerate().step_by(7) {
        *kk >>= i % 32;
    }
    if let Some(first) = keys.first_mut() {
        *first = 0;
    }
    if let Some(last) = keys.last_mut() {
        *last = u32::MAX;
    }
    BitsProblem { keys, seed: rng.u32() }
}

/// The hash of [`k::bits_mix`], scalar.
pub fn bits_mix_one(k: u32, seed: u32) -> u32 {
    let mut h = k ^ seed;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    for _ in 0..8 {
        h ^= h << 13;
        h ^= h >> 17;
        h ^= h << 5;
        h = h.wrapping_mul(0x9e37_79b1);
    }
    let bits = k.count_ones() + (k.reverse_bits() >> 7) + k.leading_zeros() * 0x0101_0101;
    h ^ bits.rotate_left(h & 31)
}

pub fn bits_reference(p: &BitsProblem) -> Vec<u32> {
    p.keys.iter().map(|&k| bits_mix_one(k, p.seed)).collect()
}

/// One thread per key in blocks of [`BLOCK`].
pub fn bits_config(n: usize) -> LaunchConfig {
    config_1d(n)
}

pub fn bits_cpu(p: &BitsProblem) -> Result<Vec<u32>, oxide_rt::Error> {
    let mut out = vec![0u32; p.keys.len()];
    k::cpu_bits_mix_with(bits_config(p.keys.len()), &p.keys, p.seed, &mut out)?;
    Ok(out)
}

/// Integer arithmetic: equal, bit for bit.
pub fn bits_compare(got: &[u32], want: &[u32]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        Some(i) => Err(format!("key {i}: got {:#010x}, want {:#010x}", got[i], want[i])),
        None => Ok(()),
    }
}
