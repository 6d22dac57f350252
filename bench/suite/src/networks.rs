//! network kernels: problems, CPU references, CPU-executor runs.
use crate::kernels::networks as k;
use example_common::Rng;
use oxide_rt::{LaunchConfig, Pairs};

/// Threads per block.
pub const BLOCK: u32 = 256;

fn config_1d(threads: usize) -> LaunchConfig {
    LaunchConfig::new(u32::try_from(threads.div_ceil(BLOCK as usize).max(1)).unwrap_or(u32::MAX), BLOCK)
}

// ---------------------------------------------------------------------------------------------
// Bitonic sort

/// `n` (a power of two) random keys, some repeated.
pub fn bitonic_problem(seed: u64, n: usize) -> Vec<u32> {
    let mut rng = Rng::new(seed);
    (0..n).map(|i| if i % 5 == 0 { rng.u32() % 64 } else { rng.u32() }).collect()
}

/// The keys sorted ascending.
pub fn bitonic_reference(keys: &[u32]) -> Vec<u32> {
    let mut s = keys.to_vec();
    s.sort_unstable();
    s
}

/// One thread per key.
pub fn bitonic_config(n: usize) -> LaunchConfig {
    config_1d(n)
}

/// The `(k, j)` of every step of a bitonic sort of `n` keys (a power of two), in order.
pub fn bitonic_steps(n: usize) -> Vec<(u32, usize)> {
    let mut steps = Vec::new();
    let mut k = 2;
    while k <= n {
        let mut j = k / 2;
        while j > 0 {
            steps.push((k as u32, j));
            j /= 2;
        }
        k *= 2;
    }
    steps
}

/// The whole sort on the CPU executor, one launch per step. `n` must be a power of two.
pub fn bitonic_cpu(keys: &[u32]) -> Result<Vec<u32>, oxide_rt::Error> {
    let n = keys.len();
    if !n.is_power_of_two() && n > 1 {
        return Err(oxide_rt::Error::Config(format!("bitonic sort: {n} keys is no power of two")));
    }
    let mut data = keys.to_vec();
    for (kk, j) in bitonic_steps(n) {
        k::cpu_bitonic_step_with(bitonic_config(n), kk, Pairs::new(&mut data, j))?;
    }
    Ok(data)
}

/// Exact.
pub fn bitonic_compare(got: &[u32], want: &[u32]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        Some(i) => Err(format!("position {i}: got {}, want {}", got[i], want[i])),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// FFT stages

pub struct FftProblem {
    /// Points per FFT, a power of two >= 2.
    pub n: usize,
    /// `batch * n` complex values `[re, im]` in [-1, 1)^2, FFT after FFT.
    pub data: Vec<[f32; 2]>,
    /// `twiddles[t] = exp(-2 pi i t / n)`, `t < n / 2`.
    pub twiddles: Vec<[f32; 2]>,
}

pub fn fft_problem(seed: u64, n: usize, batch: usize) -> FftProblem {
    let mut rng = Rng::new(seed);
    let data = (0..n * batch).map(|_| [rng.f32(), rng.f32()]).collect();
    let twiddles = (0..n / 2)
        .map(|t| {
            let a = -2.0 * std::f64::consts::PI * t as f64 / n as f64;
            [a.cos() as f32, a.sin() as f32]
        })
        .collect();
    FftProblem { n, data, twiddles }
}

/// The stage distances `h = n/2, n/4, .., 1`.
pub fn fft_halves(n: usize) -> Vec<usize> {
    let mut h = n / 2;
    let mut out = Vec::new();
    while h >= 1 {
        out.push(h);
        h /= 2;
    }
    out
}

fn bit_reverse(i: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        i.reverse_bits() >> (usize::BITS - bits)
    }
}

/// Per value `(re, im, scale)`: the DFT of each FFT of the batch in f64 (by an f64 radix-2
/// FFT), placed in bit-reversed order like the kernel's output; `scale` is the FFT's sum of
/// input magnitudes (for the tolerance). `ffts` limits the check to the first FFTs.
pub fn fft_reference(p: &FftProblem, ffts: usize) -> Vec<(f64, f64, f64)> {
    let n = p.n;
    let bits = n.trailing_zeros();
    let mut out = Vec::with_capacity(ffts * n);
    for x in p.data.chunks(n).take(ffts) {
        let scale: f64 = x.iter().map(|v| (v[0] as f64).hypot(v[1] as f64)).sum();
        // Iterative DIT on the bit-reversed input gives natural order.
        let mut a: Vec<(f64, f64)> =
            (0..n).map(|i| x[bit_reverse(i, bits)]).map(|v| (v[0] as f64, v[1] as f64)).collect();
        let mut len = 2;
        while len <= n {
            let ang = -2.0 * std::f64::consts::PI / len as f64;
            for start in (0..n).step_by(len) {
                for j in 0..len / 2 {
                    let (wr, wi) = ((ang * j as f64).cos(), (ang * j as f64).sin());
                    let (ur, ui) = a[start + j];
                    let (vr, vi) = a[start + j + len / 2];
                    let (tr, ti) = (vr * wr - vi * wi, vr * wi + vi * wr);
                    a[start + j] = (ur + tr, ui + ti);
                    a[start + j + len / 2] = (ur - tr, ui - ti);
                }
            }
            len *= 2;
        }
        out.extend((0..n).map(|i| {
            let (re, im) = a[bit_reverse(i, bits)];
            (re, im, scale)
        }));
    }
    out
}

/// A naive O(n^2) DFT of one FFT of the batch, natural order (to check [`fft_reference`]).
pub fn dft(x: &[[f32; 2]]) -> Vec<(f64, f64)> {
    let n = x.len();
    (0..n)
        .map(|kk| {
            x.iter().enumerate().fold((0.0, 0.0), |(sr, si), (t, v)| {
                let a = -2.0 * std::f64::consts::PI * ((kk * t) % n) as f64 / n as f64;
                let (c, s) = (a.cos(), a.sin());
                (sr + v[0] as f64 * c - v[1] as f64 * s, si + v[0] as f64 * s + v[1] as f64 * c)
            })
        })
        .collect()
}

/// One thread per butterfly: `data.len() / 2`.
pub fn fft_config(len: usize) -> LaunchConfig {
    config_1d(len / 2)
}

/// All stages on the CPU executor; the result is in bit-reversed order within each FFT.
pub fn fft_cpu(p: &FftProblem) -> Result<Vec<[f32; 2]>, oxide_rt::Error> {
    if p.n < 2 || !p.n.is_power_of_two() {
        return Err(oxide_rt::Error::Config(format!("fft: {} points is no power of two >= 2", p.n)));
    }
    let mut data = p.data.clone();
    for h in fft_halves(p.n) {
        k::cpu_fft_stage_with(fft_config(data.len()), &p.twiddles, Pairs::new(&mut data, h))?;
    }
    Ok(data)
}

/// Tolerance per value `8 log2(n) u` of the FFT's sum of input magnitudes: every stage's values
/// are bounded by that sum, each stage adds a few roundings of its size (the butterfly's sum,
/// difference, complex product, and the twiddle's own rounding to f32). Checks the first
/// `want.len() / n` FFTs of `got`.
pub fn fft_compare(got: &[[f32; 2]], want: &[(f64, f64, f64)], n: usize) -> Result<(), String> {
    if got.len() < want.len() {
        return Err(format!("length {} < {}", got.len(), want.len()));
    }
    let u = 1.0 / (1u64 << 24) as f64;
    let stages = n.trailing_zeros().max(1) as f64;
    for (i, (g, &(wr, wi, scale))) in got.iter().zip(want).enumerate() {
        let tol = 8.0 * stages * u * scale;
        let err = (g[0] as f64 - wr).abs().max((g[1] as f64 - wi).abs());
        if err.is_nan() || err > tol {
            return Err(format!("value {i}: got ({}, {}), want ({wr}, {wi}) (tolerance {tol:e})", g[0], g[1]));
        }
    }
    Ok(())
}
