//! stencil3d kernels: problems, CPU references, CPU-executor runs.
//!
//! Grids are row-major `nx × ny × nz` f32 (x fastest), values in [-1, 1). Both kernels run one
//! thread per cell on `BLOCK` (32 × 4 × 2) blocks.
use crate::kernels::stencil3d as k;
use example_common::Rng;
use oxide_rt::{LaunchConfig, Slice3d};

/// Block shape of both 3-D kernels.
pub const BLOCK: (u32, u32, u32) = (32, 4, 2);

/// A 3-D grid and the stencil's weights.
pub struct Grid3 {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    pub input: Vec<f32>,
    /// Weight of the centre cell (7-point stencil).
    pub c0: f32,
    /// Weight of each of the six neighbours (7-point stencil).
    pub c1: f32,
}

/// One thread per cell of an `nx × ny × nz` grid.
pub fn config3d(nx: usize, ny: usize, nz: usize) -> LaunchConfig {
    let blocks = |n: usize, b: u32| u32::try_from(n.div_ceil(b as usize)).unwrap_or(u32::MAX).max(1);
    LaunchConfig::new((blocks(nx, BLOCK.0), blocks(ny, BLOCK.1), blocks(nz, BLOCK.2)), BLOCK)
}

fn grid_problem(seed: u64, nx: usize, ny: usize, nz: usize) -> Grid3 {
    let mut rng = Rng::new(seed);
    let c0 = 0.5 + 0.25 * rng.f32();
    let c1 = (1.0 - c0) / 6.0;
    Grid3 { nx, ny, nz, input: rng.vec_f32(nx * ny * nz), c0, c1 }
}

fn dims(p: &Grid3) -> Result<u32, oxide_rt::Error> {
    if p.input.len() != p.nx * p.ny * p.nz {
        return Err(oxide_rt::Error::Config(format!(
            "stencil3d: input has {} cells, nx * ny * nz = {}",
            p.input.len(),
            p.nx * p.ny * p.nz
        )));
    }
    u32::try_from(p.nz).map_err(|_| oxide_rt::Error::Config(format!("stencil3d: nz = {} exceeds u32", p.nz)))
}

// ---- 7-point stencil -------------------------------------------------------------------------

pub fn stencil7_problem(seed: u64, nx: usize, ny: usize, nz: usize) -> Grid3 {
    grid_problem(seed, nx, ny, nz)
}

/// Interior cells `c0 * c + c1 * (w + e + s + n + b + a)` (same summation order as the
/// kernel), face cells copy the input.
pub fn stencil7_reference(p: &Grid3) -> Vec<f32> {
    let (nx, ny, nz) = (p.nx, p.ny, p.nz);
    let plane = nx * ny;
    let inp = &p.input;
    let mut out = vec![0.0f32; inp.len()];
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                let i = (z * ny + y) * nx + x;
                out[i] = if x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1 {
                    inp[i]
                } else {
                    let s = inp[i - 1] + inp[i + 1] + inp[i - nx] + inp[i + nx] + inp[i - plane] + inp[i + plane];
                    p.c0 * inp[i] + p.c1 * s
                };
            }
        }
    }
    out
}

pub fn stencil7_config(p: &Grid3) -> LaunchConfig {
    config3d(p.nx, p.ny, p.nz)
}

pub fn stencil7_cpu(p: &Grid3) -> Result<Vec<f32>, oxide_rt::Error> {
    let nz = dims(p)?;
    let mut out = vec![0.0f32; p.input.len()];
    k::cpu_stencil7_3d_with(stencil7_config(p), &p.input, nz, p.c0, p.c1, Slice3d::new(&mut out, p.nx, p.ny))?;
    Ok(out)
}

/// Within 1e-5 absolute: the GPU (oxide and nvcc alike) may contract `c0 * c + c1 * s` into
/// one fma, the reference rounds the product; with |c0| + 6 |c1| <= 1 and inputs in [-1, 1)
/// that changes the result by at most a few ulps of 1 (~2.4e-7 each).
pub fn stencil7_compare(got: &[f32], want: &[f32]) -> Result<(), String> {
    compare_abs(got, want, 1e-5)
}

// ---- 27-point box filter ---------------------------------------------------------------------

pub fn box27_problem(seed: u64, nx: usize, ny: usize, nz: usize) -> Grid3 {
    grid_problem(seed, nx, ny, nz)
}

/// The mean of the clamped 3×3×3 neighbourhood, summed z, y, x outermost to innermost (as
/// the kernel), times `1 / 27`.
pub fn box27_reference(p: &Grid3) -> Vec<f32> {
    let (nx, ny, nz) = (p.nx, p.ny, p.nz);
    let mut out = vec![0.0f32; p.input.len()];
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                let mut sum = 0.0f32;
                for zz in [z.saturating_sub(1), z, (z + 1).min(nz - 1)] {
                    for yy in [y.saturating_sub(1), y, (y + 1).min(ny - 1)] {
                        for xx in [x.saturating_sub(1), x, (x + 1).min(nx - 1)] {
                            sum += p.input[(zz * ny + yy) * nx + xx];
                        }
                    }
                }
                out[(z * ny + y) * nx + x] = sum * (1.0 / 27.0);
            }
        }
    }
    out
}

pub fn box27_config(p: &Grid3) -> LaunchConfig {
    config3d(p.nx, p.ny, p.nz)
}

pub fn box27_cpu(p: &Grid3) -> Result<Vec<f32>, oxide_rt::Error> {
    let nz = dims(p)?;
    let mut out = vec![0.0f32; p.input.len()];
    k::cpu_box27_3d_with(box27_config(p), &p.input, nz, Slice3d::new(&mut out, p.nx, p.ny))?;
    Ok(out)
}

/// Exact: additions only (no multiply-add to contract) in the same order, then one multiply.
pub fn box27_compare(got: &[f32], want: &[f32]) -> Result<(), String> {
    example_common::compare_exact(got, want, "cell", |g, w| g.to_bits() == w.to_bits())
}

/// `|got - want| <= tol` for every element, else the first one that is not.
pub(crate) fn compare_abs(got: &[f32], want: &[f32], tol: f32) -> Result<(), String> {
    example_common::compare_exact(got, want, "element", |g, w| (g - w).abs() <= tol)
        .map_err(|e| format!("{e} (tolerance {tol:e})"))
}
