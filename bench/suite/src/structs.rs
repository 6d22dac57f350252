//! struct kernels: problems, CPU references, CPU-executor runs.
use crate::kernels::structs as k;
pub use crate::kernels::structs::{Mat4, StepParams};
use example_common::Rng;
use oxide_rt::LaunchConfig;

/// Threads per block.
pub const BLOCK: u32 = 256;

fn config_1d(n: usize) -> LaunchConfig {
    LaunchConfig::new(u32::try_from(n.div_ceil(BLOCK as usize).max(1)).unwrap_or(u32::MAX), BLOCK)
}

// ---------------------------------------------------------------------------------------------
// Particles, structure of arrays

/// Positions and velocities in separate arrays.
#[derive(Clone, Debug, PartialEq)]
pub struct Particles {
    pub px: Vec<f32>,
    pub py: Vec<f32>,
    pub pz: Vec<f32>,
    pub vx: Vec<f32>,
    pub vy: Vec<f32>,
    pub vz: Vec<f32>,
}

pub struct ParticlesProblem {
    pub params: StepParams,
    pub state: Particles,
}

/// Positions in [-1, 1) (y in [0, 0.25), so many particles cross the floor at 0 in one step),
/// velocities in [-4, 4). The time step is a power of two (2^-6), so every product with it is
/// exact and a fused multiply-add rounds like the separate multiply and add: the kernel's
/// result is the same bit for bit whatever the compiler contracts.
pub fn particles_problem(seed: u64, n: usize) -> ParticlesProblem {
    let mut rng = Rng::new(seed);
    let mut v = |s: f32, o: f32| (0..n).map(|_| o + s * rng.f32()).collect::<Vec<f32>>();
    let state = Particles {
        px: v(1.0, 0.0),
        py: v(0.125, 0.125),
        pz: v(1.0, 0.0),
        vx: v(4.0, 0.0),
        vy: v(4.0, 0.0),
        vz: v(4.0, 0.0),
    };
    let params = StepParams { dt: 1.0 / 64.0, gravity: 9.81, floor: 0.0, restitution: 0.8, drag: 0.995 };
    ParticlesProblem { params, state }
}

/// The step, scalar, in the kernel's order of f32 operations.
pub fn particles_reference(p: &ParticlesProblem) -> Particles {
    let mut s = p.state.clone();
    let q = &p.params;
    for i in 0..s.px.len() {
        s.vx[i] *= q.drag;
        s.vz[i] *= q.drag;
        s.vy[i] -= q.gravity * q.dt;
        s.px[i] += s.vx[i] * q.dt;
        s.py[i] += s.vy[i] * q.dt;
        s.pz[i] += s.vz[i] * q.dt;
        if s.py[i] < q.floor {
            s.py[i] = q.floor;
            s.vy[i] = -s.vy[i] * q.restitution;
        }
    }
    s
}

/// One thread per particle in blocks of [`BLOCK`].
pub fn particles_config(n: usize) -> LaunchConfig {
    config_1d(n)
}

pub fn particles_cpu(p: &ParticlesProblem) -> Result<Particles, oxide_rt::Error> {
    let mut s = p.state.clone();
    k::cpu_particles_step_with(
        particles_config(s.px.len()),
        p.params,
        &mut s.px,
        &mut s.py,
        &mut s.pz,
        &mut s.vx,
        &mut s.vy,
        &mut s.vz,
    )?;
    Ok(s)
}

/// Exact: every product with the power-of-two time step is exact (see [`particles_problem`]),
/// so there is one rounding per operation however the compiler fuses them.
pub fn particles_compare(got: &Particles, want: &Particles) -> Result<(), String> {
    let fields = [
        ("px", &got.px, &want.px),
        ("py", &got.py, &want.py),
        ("pz", &got.pz, &want.pz),
        ("vx", &got.vx, &want.vx),
        ("vy", &got.vy, &want.vy),
        ("vz", &got.vz, &want.vz),
    ];
    for (name, g, w) in fields {
        if g.len() != w.len() {
            return Err(format!("{name}: length {} != {}", g.len(), w.len()));
        }
        if let Some(i) = g.iter().zip(w.iter()).position(|(a, b)| a.to_bits() != b.to_bits()) {
            return Err(format!("{name}[{i}]: got {}, want {}", g[i], w[i]));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Batched 4x4 matrix products

pub struct Mat4Problem {
    pub a: Vec<Mat4>,
    pub b: Vec<Mat4>,
}

fn random_mat(rng: &mut Rng) -> Mat4 {
    let mut m = [[0.0f32; 4]; 4];
    for row in m.iter_mut() {
        for v in row.iter_mut() {
            *v = rng.f32();
        }
    }
    Mat4 { m }
}

/// `n` pairs of matrices with entries in [-1, 1).
pub fn mat4_problem(seed: u64, n: usize) -> Mat4Problem {
    let mut rng = Rng::new(seed);
    let a = (0..n).map(|_| random_mat(&mut rng)).collect();
    let b = (0..n).map(|_| random_mat(&mut rng)).collect();
    Mat4Problem { a, b }
}

/// A product in f64 and, per entry, the sum of the magnitudes of its four terms.
pub type Mat4Exact = ([[f64; 4]; 4], [[f64; 4]; 4]);

/// `a * b` in f64, with the sum of the magnitudes of the products per entry.
pub fn mat4_exact(a: &Mat4, b: &Mat4) -> Mat4Exact {
    let mut out = [[0.0f64; 4]; 4];
    let mut mag = [[0.0f64; 4]; 4];
    for r in 0..4 {
        for c in 0..4 {
            for kk in 0..4 {
                let t = a.m[r][kk] as f64 * b.m[kk][c] as f64;
                out[r][c] += t;
                mag[r][c] += t.abs();
            }
        }
    }
    (out, mag)
}

pub fn mat4_reference(p: &Mat4Problem) -> Vec<Mat4Exact> {
    p.a.iter().zip(&p.b).map(|(a, b)| mat4_exact(a, b)).collect()
}

/// One thread per product in blocks of [`BLOCK`].
pub fn mat4_config(n: usize) -> LaunchConfig {
    config_1d(n)
}

pub fn mat4_cpu(p: &Mat4Problem) -> Result<Vec<Mat4>, oxide_rt::Error> {
    let mut out = vec![Mat4 { m: [[0.0; 4]; 4] }; p.a.len()];
    k::cpu_mat4_batch_with(mat4_config(p.a.len()), &p.a, &p.b, &mut out)?;
    Ok(out)
}

/// Each entry is a sum of four products: a sequential f32 sum (fused or not) errs by at most
/// `5 u` of the sum of the products' magnitudes; 8 u allows for it.
pub fn mat4_compare(got: &[Mat4], want: &[Mat4Exact]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    let u = 1.0 / (1u64 << 24) as f64;
    for (i, (g, (w, mag))) in got.iter().zip(want).enumerate() {
        for r in 0..4 {
            for c in 0..4 {
                let tol = 8.0 * u * mag[r][c];
                let err = (g.m[r][c] as f64 - w[r][c]).abs();
                if err.is_nan() || err > tol {
                    return Err(format!(
                        "matrix {i} entry ({r}, {c}): got {}, want {} (tolerance {tol:e})",
                        g.m[r][c], w[r][c]
                    ));
                }
            }
        }
    }
    Ok(())
}
