//! Matrix transpose as a library: the kernel plus the uniform example API (random problem,
//! scalar reference, CPU and GPU runs, comparison) shared by main.rs, the differential tests
//! and the benchmarks.
pub mod kernels;

use example_common::{driver_err as err, Rng};
use oxide_rt::cuda::CudaStream;
use oxide_rt::LaunchConfig;
use std::sync::Arc;

pub use kernels::{ROWS, TILE};

/// main.rs / benchmark size: a 16384 x 16384 matrix (1 GiB).
pub const DEFAULT_SIZE: usize = 16384;
/// Sizes for `problem`: rows = size, cols = size * 3 / 2 + 1 (neither a tile multiple unless
/// the size makes one), small and large.
pub const SIZES: &[usize] = &[1, 7, 31, 63, 64, 65, 100, 257, 1000];

pub struct Problem {
    pub rows: usize,
    pub cols: usize,
    /// rows x cols, row-major.
    pub input: Vec<f32>,
}

/// cols x rows, row-major.
pub type Output = Vec<f32>;

/// Square for the default size, else `size x (size * 3/2 + 1)`.
pub fn problem(seed: u64, size: usize) -> Problem {
    if size == DEFAULT_SIZE {
        problem_dims(seed, size, size)
    } else {
        problem_dims(seed, size, size * 3 / 2 + 1)
    }
}

pub fn problem_dims(seed: u64, rows: usize, cols: usize) -> Problem {
    Problem { rows, cols, input: Rng::new(seed).vec_f32(rows * cols) }
}

pub fn reference(p: &Problem) -> Output {
    let mut out = vec![0.0; p.rows * p.cols];
    for r in 0..p.rows {
        for c in 0..p.cols {
            out[c * p.rows + r] = p.input[r * p.cols + c];
        }
    }
    out
}

/// One (TILE, ROWS) = (64, 8) block per 64 x 64 tile; block x walks the input's columns (the
/// output's rows).
pub fn config(rows: usize, cols: usize) -> LaunchConfig {
    LaunchConfig::new((cols.div_ceil(TILE) as u32, rows.div_ceil(TILE) as u32, 1), (TILE as u32, ROWS as u32, 1))
}

fn dims(p: &Problem) -> Result<(u32, u32), oxide_rt::Error> {
    let bad = |reason: String| oxide_rt::Error::InvalidLaunch { kernel: "transpose", reason };
    let rows = u32::try_from(p.rows).map_err(|_| bad(format!("rows = {} does not fit u32", p.rows)))?;
    let cols = u32::try_from(p.cols).map_err(|_| bad(format!("cols = {} does not fit u32", p.cols)))?;
    if p.input.len() != p.rows * p.cols {
        return Err(bad(format!("the input holds {} elements, not rows * cols = {}", p.input.len(), p.rows * p.cols)));
    }
    Ok((rows, cols))
}

pub fn run_cpu(p: &Problem) -> Result<Output, oxide_rt::Error> {
    let (rows, cols) = dims(p)?;
    let mut out = vec![0.0f32; p.input.len()];
    let (rows, cols) = (rows as usize, cols as usize);
    kernels::cpu_transpose_with(
        config(p.rows, p.cols),
        oxide_rt::Matrix::new(&p.input[..], rows, cols),
        oxide_rt::Slice2d::new(&mut out[..], rows),
    )?;
    Ok(out)
}

pub fn run_gpu(stream: &Arc<CudaStream>, p: &Problem) -> Result<Output, oxide_rt::Error> {
    let (rows, cols) = dims(p)?;
    let input = stream.clone_htod(&p.input).map_err(err("copying the matrix to the GPU"))?;
    let mut out = stream.alloc_zeros::<f32>(p.input.len()).map_err(err("allocating the output"))?;
    let (rows, cols) = (rows as usize, cols as usize);
    kernels::launch_transpose_with(
        stream,
        config(p.rows, p.cols),
        oxide_rt::Matrix::new(&input, rows, cols),
        oxide_rt::Slice2d::new(&mut out, rows),
    )?;
    stream.clone_dtoh(&out).map_err(err("copying the result back"))
}

/// A transpose only moves values: exact comparison (bit patterns, so -0.0 and NaN count too).
pub fn compare(got: &Output, want: &Output) -> Result<(), String> {
    example_common::compare_exact(got, want, "element", |g, w| g.to_bits() == w.to_bits())
}
