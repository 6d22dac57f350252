//! Sum reduction as a library: the kernel plus the uniform example API (random problem, scalar
//! reference, CPU and GPU runs, comparison) shared by main.rs, the differential tests and the
//! benchmarks.
pub mod kernels;

use example_common::{driver_err as err, Rng};
use oxide_rt::cuda::CudaStream;
use oxide_rt::device::AtomicF32;
use oxide_rt::LaunchConfig;
use std::sync::Arc;

pub const BLOCK: u32 = 256;
/// Enough blocks to fill an H200 (132 SMs x 8 resident blocks of 256) without making the
/// per-block atomics or the tail of the grid-stride loop matter.
pub const MAX_BLOCKS: u32 = 1024;
/// Each thread handles at least this many elements before the grid stops growing.
pub const PER_THREAD: usize = 4;
pub const DEFAULT_SIZE: usize = 1 << 26;
/// Differential-test sizes: tiny, around one block and one warp, not block multiples, and
/// large enough that the grid is capped and every thread loops.
pub const SIZES: &[usize] = &[1, 31, 255, 257, 1000, 4099, 65_537, 1_000_003, 4_194_319];

pub struct Problem {
    pub x: Vec<f32>,
}

/// The sum, and how far from the exact sum a correct f32 reduction may land.
#[derive(Clone, Copy, Debug)]
pub struct Output {
    pub sum: f64,
    /// How far this result may be from the exact sum ([`error_bound`]); doubled for kernel
    /// results, so two kernel runs (GPU vs CPU executor, any atomic order) compare too.
    pub tolerance: f64,
}

pub fn problem(seed: u64, size: usize) -> Problem {
    Problem { x: Rng::new(seed).vec_f32(size) }
}

/// Launch geometry for `n` elements and `block` threads: one block per `block * PER_THREAD`
/// elements, capped at [`MAX_BLOCKS`] (the kernel's grid-stride loop covers the rest).
pub fn config_for(n: usize, block: u32) -> LaunchConfig {
    let per_block = block as usize * PER_THREAD;
    let blocks = n.div_ceil(per_block).clamp(1, MAX_BLOCKS as usize) as u32;
    LaunchConfig::new(blocks, block)
}

/// The exact-as-f64 sum, plus the rounding tolerance of the kernel's f32 summation tree.
///
/// Tolerance: a sum computed by any tree of f32 additions of depth `d` differs from the exact
/// sum by at most `d * u * sum(|x|)` with `u = 2^-24` (Higham, *Accuracy and Stability of
/// Numerical Algorithms*, §4.2). The kernel's depth is at most: the per-accumulator chain
/// `ceil(n / (4 * threads)) + 1`, 2 to combine the four accumulators, 5 shuffle levels in the
/// warp, 5 over the block's warps, and one atomic add per block in any order; we bound the
/// thread count below by one warp per block so the same tolerance holds for every block size.
/// The f64 reference itself is exact to well below that.
pub fn reference(p: &Problem) -> Output {
    let sum: f64 = p.x.iter().map(|&v| v as f64).sum();
    Output { sum, tolerance: error_bound(p) }
}

/// The worst-case distance of the kernel's f32 sum from the exact sum (see [`reference`]).
pub fn error_bound(p: &Problem) -> f64 {
    let n = p.x.len();
    let abs: f64 = p.x.iter().map(|&v| (v as f64).abs()).sum();
    let blocks = config_for(n, 32).grid.x as usize;
    let threads = blocks * 32;
    let depth = n.div_ceil(4 * threads) + 1 + 2 + 5 + 5 + blocks;
    depth as f64 * f32::EPSILON as f64 / 2.0 * abs
}

/// Runs the kernel on the CPU executor with `block` threads per block (a multiple of 32).
pub fn run_cpu_with_block(p: &Problem, block: u32) -> Result<Output, oxide_rt::Error> {
    let out = [AtomicF32::new(0.0)];
    kernels::cpu_reduce_sum_with(config_for(p.x.len(), block), &p.x, &out)?;
    let [sum] = out;
    Ok(Output { sum: sum.into_inner() as f64, tolerance: 2.0 * error_bound(p) })
}

pub fn run_cpu(p: &Problem) -> Result<Output, oxide_rt::Error> {
    run_cpu_with_block(p, BLOCK)
}

pub fn run_gpu(stream: &Arc<CudaStream>, p: &Problem) -> Result<Output, oxide_rt::Error> {
    let x = stream.clone_htod(&p.x).map_err(err("copying x to the GPU"))?;
    let mut out = stream.alloc_zeros::<f32>(1).map_err(err("allocating the sum"))?;
    kernels::launch_reduce_sum_with(stream, config_for(p.x.len(), BLOCK), &x, &mut out)?;
    let sum = stream.clone_dtoh(&out).map_err(err("copying the sum back"))?;
    let sum = sum.into_iter().next().unwrap_or(f32::NAN);
    Ok(Output { sum: sum as f64, tolerance: 2.0 * error_bound(p) })
}

/// Passes when `got.sum` is within `want.tolerance` of `want.sum` (see [`reference`]).
pub fn compare(got: &Output, want: &Output) -> Result<(), String> {
    let err = (got.sum - want.sum).abs();
    if err.is_nan() || err > want.tolerance {
        return Err(format!(
            "sum {} differs from the exact {} by {err:e} (tolerance {:e})",
            got.sum, want.sum, want.tolerance
        ));
    }
    Ok(())
}
