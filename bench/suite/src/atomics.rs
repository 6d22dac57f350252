//! atomic kernels: problems, CPU references, CPU-executor runs.
use crate::kernels::atomics as k;
use example_common::Rng;
use oxide_rt::device::atomic::{AtomicF32, AtomicU32, Ordering};
use oxide_rt::{Append, LaunchConfig};

/// Threads per block.
pub const BLOCK: u32 = 256;

fn config_1d(n: usize) -> LaunchConfig {
    LaunchConfig::new(u32::try_from(n.div_ceil(BLOCK as usize).max(1)).unwrap_or(u32::MAX), BLOCK)
}

// ---------------------------------------------------------------------------------------------
// Float scatter-add

pub struct ScatterProblem {
    /// Positions, mostly in [lo, hi), some outside (clamped into the first and last bins).
    pub x: Vec<f32>,
    /// Weights in [-1, 1).
    pub w: Vec<f32>,
    pub lo: f32,
    pub inv_width: f32,
    pub bins: usize,
}

/// `n` values over `bins` bins spanning [-4, 4), about 3% of them outside.
pub fn scatter_problem(seed: u64, n: usize, bins: usize) -> ScatterProblem {
    let mut rng = Rng::new(seed);
    let x = (0..n).map(|_| 4.125 * rng.f32()).collect();
    let w = rng.vec_f32(n);
    ScatterProblem { x, w, lo: -4.0, inv_width: bins as f32 / 8.0, bins }
}

/// The kernel's bin of `x`.
pub fn scatter_bin(x: f32, lo: f32, inv_width: f32, bins: usize) -> usize {
    (((x - lo) * inv_width) as i32).clamp(0, bins as i32 - 1) as usize
}

/// Per bin `(sum, sum of |w|, count)` in f64.
pub fn scatter_reference(p: &ScatterProblem) -> Vec<(f64, f64, usize)> {
    let mut out = vec![(0.0, 0.0, 0usize); p.bins];
    if p.bins == 0 {
        return out;
    }
    for (&x, &w) in p.x.iter().zip(&p.w) {
        let b = &mut out[scatter_bin(x, p.lo, p.inv_width, p.bins)];
        b.0 += w as f64;
        b.1 += w.abs() as f64;
        b.2 += 1;
    }
    out
}

/// One thread per value.
pub fn scatter_config(n: usize) -> LaunchConfig {
    config_1d(n)
}

pub fn scatter_cpu(p: &ScatterProblem) -> Result<Vec<f32>, oxide_rt::Error> {
    let out: Vec<AtomicF32> = (0..p.bins).map(|_| AtomicF32::new(0.0)).collect();
    k::cpu_scatter_add_with(scatter_config(p.x.len()), &p.x, &p.w, p.lo, p.inv_width, &out)?;
    Ok(out.iter().map(|a| a.load(Ordering::Relaxed)).collect())
}

/// The atomics add in any order: a bin of `count` values errs by at most `count u` of its sum
/// of magnitudes.
pub fn scatter_compare(got: &[f32], want: &[(f64, f64, usize)]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    let u = 1.0 / (1u64 << 24) as f64;
    for (i, (&g, &(w, mag, count))) in got.iter().zip(want).enumerate() {
        let tol = count as f64 * u * mag;
        let err = (g as f64 - w).abs();
        if err.is_nan() || err > tol {
            return Err(format!("bin {i}: got {g}, want {w} (tolerance {tol:e}, {count} values)"));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Integer histogram

pub struct HistogramProblem {
    pub keys: Vec<u32>,
    pub bins: usize,
}

/// `n` keys, a fifth of them small (so the low bins are crowded), over `bins` bins.
pub fn histogram_problem(seed: u64, n: usize, bins: usize) -> HistogramProblem {
    let mut rng = Rng::new(seed);
    let keys = (0..n).map(|i| if i % 5 == 0 { rng.u32() % 16 } else { rng.u32() }).collect();
    HistogramProblem { keys, bins }
}

pub fn histogram_reference(p: &HistogramProblem) -> Vec<u32> {
    let mut h = vec![0u32; p.bins];
    if p.bins > 0 {
        for &kk in &p.keys {
            h[kk as usize % p.bins] += 1;
        }
    }
    h
}

/// One thread per key.
pub fn histogram_config(n: usize) -> LaunchConfig {
    config_1d(n)
}

pub fn histogram_cpu(p: &HistogramProblem) -> Result<Vec<u32>, oxide_rt::Error> {
    let bins: Vec<AtomicU32> = (0..p.bins).map(|_| AtomicU32::new(0)).collect();
    k::cpu_histogram_keys_with(histogram_config(p.keys.len()), &p.keys, &bins)?;
    Ok(bins.iter().map(|a| a.load(Ordering::Relaxed)).collect())
}

/// Exact.
pub fn histogram_compare(got: &[u32], want: &[u32]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        Some(i) => Err(format!("bin {i}: got {}, want {}", got[i], want[i])),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// Stream compaction

pub struct CompactProblem {
    pub keys: Vec<u32>,
    pub threshold: u32,
}

/// `n` random keys; about half are below the threshold.
pub fn compact_problem(seed: u64, n: usize) -> CompactProblem {
    let mut rng = Rng::new(seed);
    CompactProblem { keys: (0..n).map(|_| rng.u32()).collect(), threshold: 1 << 31 }
}

/// The kept keys, sorted (the kernel's order is the order of its claims).
pub fn compact_reference(p: &CompactProblem) -> Vec<u32> {
    let mut kept: Vec<u32> = p.keys.iter().copied().filter(|&k| k < p.threshold).collect();
    kept.sort_unstable();
    kept
}

/// One thread per key.
pub fn compact_config(n: usize) -> LaunchConfig {
    config_1d(n)
}

/// The kept keys in claim order and the final count, with room for every key.
pub fn compact_cpu(p: &CompactProblem) -> Result<(Vec<u32>, u64), oxide_rt::Error> {
    let (mut out, mut count) = (vec![0u32; p.keys.len()], [0u64]);
    k::cpu_compact_keys_with(compact_config(p.keys.len()), &p.keys, p.threshold, Append::new(&mut out, &mut count))?;
    Ok((out, count[0]))
}

/// `count` keys arrived, and sorted they are exactly the reference.
pub fn compact_compare(got: &[u32], count: u64, want: &[u32]) -> Result<(), String> {
    if count != want.len() as u64 || got.len() < want.len() {
        return Err(format!("count {count} (buffer {}), want {}", got.len(), want.len()));
    }
    let mut kept = got[..want.len()].to_vec();
    kept.sort_unstable();
    match kept.iter().zip(want).position(|(g, w)| g != w) {
        Some(i) => Err(format!("sorted kept key {i}: got {}, want {}", kept[i], want[i])),
        None => Ok(()),
    }
}
