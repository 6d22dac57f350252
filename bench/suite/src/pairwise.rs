//! pairwise kernels: problems, CPU references, CPU-executor runs.
use crate::kernels::pairwise as k;
use example_common::Rng;
use oxide_rt::LaunchConfig;

/// f32 unit roundoff.
const U32: f64 = 1.0 / (1u64 << 24) as f64;

fn blocks(n: usize, block: u32) -> u32 {
    u32::try_from(n.div_ceil(block as usize).max(1)).unwrap_or(u32::MAX)
}

// ---------------------------------------------------------------------------------------------
// n-body

pub struct NbodyProblem {
    /// `[x, y, z, mass]` per body: positions in [-1, 1)^3, masses in [0.5, 1).
    pub bodies: Vec<[f32; 4]>,
    /// Softening squared.
    pub soft2: f32,
}

pub fn nbody_problem(seed: u64, n: usize) -> NbodyProblem {
    let mut rng = Rng::new(seed);
    let bodies = (0..n).map(|_| [rng.f32(), rng.f32(), rng.f32(), 0.75 + 0.25 * rng.f32()]).collect();
    NbodyProblem { bodies, soft2: 0.01 }
}

/// The acceleration of body `i` in f64, and per component the sum of the magnitudes of the
/// terms (the scale of the rounding error of any summation order).
pub fn nbody_reference_one(p: &NbodyProblem, i: usize) -> ([f64; 3], [f64; 3]) {
    let me = p.bodies[i];
    let mut a = [0.0f64; 3];
    let mut mag = [0.0f64; 3];
    for b in &p.bodies {
        let d = [(b[0] - me[0]) as f64, (b[1] - me[1]) as f64, (b[2] - me[2]) as f64];
        let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + p.soft2 as f64;
        let s = b[3] as f64 / (d2 * d2.sqrt());
        for c in 0..3 {
            a[c] += s * d[c];
            mag[c] += (s * d[c]).abs();
        }
    }
    (a, mag)
}

/// All bodies' accelerations (see [`nbody_reference_one`]).
pub fn nbody_reference(p: &NbodyProblem) -> Vec<([f64; 3], [f64; 3])> {
    (0..p.bodies.len()).map(|i| nbody_reference_one(p, i)).collect()
}

/// Enough blocks of [`k::NBODY_BLOCK`] threads for one thread per body.
pub fn nbody_config(n: usize) -> LaunchConfig {
    LaunchConfig::new(blocks(n, k::NBODY_BLOCK), k::NBODY_BLOCK)
}

pub fn nbody_cpu(p: &NbodyProblem) -> Result<Vec<[f32; 4]>, oxide_rt::Error> {
    let mut acc = vec![[0.0f32; 4]; p.bodies.len()];
    k::cpu_nbody_tile_with(nbody_config(p.bodies.len()), &p.bodies, p.soft2, &mut acc)?;
    Ok(acc)
}

/// Checks `got[i]` (the kernel's acceleration of body `i`) against the reference `want` of
/// that body. Tolerance per component: `(n + 16) u` times the sum of the terms' magnitudes —
/// the bound of a sequential f32 sum of `n` terms (each addition errs by at most `u` of a
/// partial sum, which is at most that magnitude), plus a few `u` per term for the term itself
/// (a difference, the softened distance, `rsqrt`'s 2 ulp, three products).
pub fn nbody_compare_one(i: usize, n: usize, got: [f32; 4], want: &([f64; 3], [f64; 3])) -> Result<(), String> {
    for (c, &g) in got.iter().take(3).enumerate() {
        let tol = (n as f64 + 16.0) * U32 * want.1[c] + 1e-30;
        let err = (g as f64 - want.0[c]).abs();
        if err.is_nan() || err > tol {
            return Err(format!("body {i} component {c}: got {g}, want {} (tolerance {tol:e})", want.0[c]));
        }
    }
    if got[3] != 0.0 {
        return Err(format!("body {i}: w = {}, want 0", got[3]));
    }
    Ok(())
}

pub fn nbody_compare(got: &[[f32; 4]], want: &[([f64; 3], [f64; 3])]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        nbody_compare_one(i, got.len(), *g, w)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// k-means assignment

pub struct KmeansProblem {
    pub dims: usize,
    /// Row-major `n x dims`, values in [-1, 1).
    pub points: Vec<f32>,
    /// Row-major `k x dims`, values in [-1, 1).
    pub centroids: Vec<f32>,
}

impl KmeansProblem {
    pub fn n(&self) -> usize {
        self.points.len().checked_div(self.dims).unwrap_or(0)
    }

    pub fn k(&self) -> usize {
        self.centroids.len().checked_div(self.dims).unwrap_or(0)
    }
}

/// `n` points and `k` centroids of `dims` dimensions (`k * dims` at most
/// [`k::KMEANS_MAX_CENTROID_VALUES`]).
pub fn kmeans_problem(seed: u64, n: usize, k: usize, dims: usize) -> KmeansProblem {
    let mut rng = Rng::new(seed);
    KmeansProblem { dims, points: rng.vec_f32(n * dims), centroids: rng.vec_f32(k * dims) }
}

fn sq_dist(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(&x, &y)| (x as f64 - y as f64).powi(2)).sum()
}

/// The nearest centroid of each point, in f64 (the first on ties).
pub fn kmeans_reference(p: &KmeansProblem) -> Vec<u32> {
    if p.dims == 0 {
        return vec![0; p.n()];
    }
    p.points
        .chunks(p.dims)
        .map(|pt| {
            let mut best = (f64::INFINITY, 0u32);
            for (c, cent) in p.centroids.chunks(p.dims).enumerate() {
                let d = sq_dist(pt, cent);
                if d < best.0 {
                    best = (d, c as u32);
                }
            }
            best.1
        })
        .collect()
}

/// Enough blocks of [`k::KMEANS_BLOCK`] threads for one thread per point.
pub fn kmeans_config(n: usize) -> LaunchConfig {
    LaunchConfig::new(blocks(n, k::KMEANS_BLOCK), k::KMEANS_BLOCK)
}

pub fn kmeans_cpu(p: &KmeansProblem) -> Result<Vec<u32>, oxide_rt::Error> {
    let mut labels = vec![0u32; p.n()];
    k::cpu_kmeans_assign_with(kmeans_config(p.n()), &p.points, &p.centroids, p.dims, &mut labels)?;
    Ok(labels)
}

/// Labels equal to the reference's, except where two centroids are nearly equally far: the
/// kernel sums `dims` f32 squares (error at most `(dims + 2) u` of the distance), so a label
/// whose f64 distance is within `2 (dims + 2) u` (relative) of the nearest one is accepted.
pub fn kmeans_compare(p: &KmeansProblem, got: &[u32], want: &[u32]) -> Result<(), String> {
    if got.len() != want.len() || got.len() != p.n() {
        return Err(format!("length {} != {} (n = {})", got.len(), want.len(), p.n()));
    }
    let d = p.dims;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if g == w {
            continue;
        }
        let pt = &p.points[i * d..(i + 1) * d];
        let Some(cg) = p.centroids.get(g as usize * d..(g as usize + 1) * d) else {
            return Err(format!("point {i}: label {g} is no centroid (k = {})", p.k()));
        };
        let (dg, dw) = (sq_dist(pt, cg), sq_dist(pt, &p.centroids[w as usize * d..(w as usize + 1) * d]));
        if dg > dw * (1.0 + 2.0 * (d as f64 + 2.0) * U32) {
            return Err(format!("point {i}: label {g} at distance^2 {dg}, want {w} at {dw}"));
        }
    }
    Ok(())
}
