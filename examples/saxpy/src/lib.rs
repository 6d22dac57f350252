//! saxpy as a library: the kernels plus the uniform example API (random problem, scalar
//! reference, CPU and GPU runs, comparison) shared by main.rs, the differential tests and the
//! benchmarks.
pub mod kernels;

use example_common::{driver_err as err, Rng};
use oxide_rt::cuda::CudaStream;
use oxide_rt::LaunchConfig;
use std::sync::Arc;

pub const BLOCK: u32 = 256;
pub const DEFAULT_SIZE: usize = 1 << 26;
/// Sizes for differential tests: tiny, one short of / one past a block, not block multiples, large.
pub const SIZES: &[usize] = &[1, 255, 257, 1000, 4099, 65_537, 1_000_003];

pub struct Problem {
    pub a: f32,
    pub x: Vec<f32>,
    pub y: Vec<f32>,
}

pub type Output = Vec<f32>;

pub fn problem(seed: u64, size: usize) -> Problem {
    let mut rng = Rng::new(seed);
    let a = rng.f32() * 4.0;
    Problem { a, x: rng.vec_f32(size), y: rng.vec_f32(size) }
}

/// The scalar reference: `a * x[i] + y[i]`.
pub fn reference(p: &Problem) -> Output {
    p.x.iter().zip(&p.y).map(|(x, y)| p.a * x + y).collect()
}

/// Blocks of [`BLOCK`] threads, each thread covering [`kernels::PER_THREAD`] elements.
pub fn config(n: usize) -> LaunchConfig {
    let blocks = n.div_ceil(BLOCK as usize * kernels::PER_THREAD).max(1);
    LaunchConfig::new(u32::try_from(blocks).unwrap_or(u32::MAX), BLOCK)
}

pub fn run_cpu(p: &Problem) -> Result<Output, oxide_rt::Error> {
    let mut y = p.y.clone();
    kernels::cpu_saxpy_with(config(p.x.len()), p.a, &p.x, &mut y)?;
    Ok(y)
}

pub fn run_gpu(stream: &Arc<CudaStream>, p: &Problem) -> Result<Output, oxide_rt::Error> {
    let x = stream.clone_htod(&p.x).map_err(err("copying x to the GPU"))?;
    let mut y = stream.clone_htod(&p.y).map_err(err("copying y to the GPU"))?;
    kernels::launch_saxpy_with(stream, config(p.x.len()), p.a, &x, &mut y)?;
    stream.clone_dtoh(&y).map_err(err("copying y back"))
}

/// The GPU contracts `a*x + y` into one fma (one rounding), the CPU may round twice: the
/// results differ by at most one rounding of the product, |a*x| * 2^-24, plus 1 ulp of the sum.
pub fn compare(got: &Output, want: &Output) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = 4.0 * f32::EPSILON * (w.abs() + 4.0);
        if (g - w).abs() > tol {
            return Err(format!("element {i}: got {g}, want {w} (tolerance {tol})"));
        }
    }
    Ok(())
}

/// The PTX oxide-build embedded for these kernels (used by the launch-overhead benchmark to
/// launch the very same kernel through raw cudarc).
pub const PTX: &str = include_str!(env!("OXIDE_PTX"));
