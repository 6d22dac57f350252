//! Row-wise softmax as a library: the kernel plus the uniform example API (random problem,
//! scalar reference, CPU and GPU runs, comparison) shared by main.rs, the differential tests and
//! the benchmarks.
pub mod kernels;

use example_common::{driver_err as err, Rng};
use oxide_rt::cuda::CudaStream;
use oxide_rt::{LaunchConfig, Slice2d};
use std::sync::Arc;

/// Default column count (main.rs); the bench uses `BENCH_ROWS x BENCH_COLS`.
pub const DEFAULT_SIZE: usize = 4096;
pub const BENCH_ROWS: usize = 1 << 16;
pub const BENCH_COLS: usize = 4096;
/// Differential-test sizes: the column count (rows follow from [`rows_for`]). Shorter than a
/// warp, one off a warp, one off a block's 256 columns, typical widths, the longest row kept in
/// registers (4096) and one past it (the three-pass path), odd widths.
pub const SIZES: &[usize] = &[1, 31, 33, 255, 257, 1000, 1025, 4096, 4097, 9001];
/// The widest row [`compare`]'s tolerance is derived for.
pub const MAX_COLS: usize = 16384;

pub struct Problem {
    pub rows: usize,
    pub cols: usize,
    /// Row-major `rows x cols`, values in [-8, 8).
    pub x: Vec<f32>,
}

/// Row-major `rows x cols` softmax.
pub type Output = Vec<f32>;

/// Rows for a test of `cols` columns: about 2^17 elements, odd.
pub fn rows_for(cols: usize) -> usize {
    ((1usize << 17) / cols.max(1)).clamp(5, 517) | 1
}

/// `size` is the column count; see [`rows_for`].
pub fn problem(seed: u64, size: usize) -> Problem {
    problem_with(seed, rows_for(size), size)
}

pub fn problem_with(seed: u64, rows: usize, cols: usize) -> Problem {
    let mut rng = Rng::new(seed);
    Problem { rows, cols, x: (0..rows * cols).map(|_| 8.0 * rng.f32()).collect() }
}

/// The scalar reference, in f64: max, sum of exp(x - max), quotient.
pub fn reference(p: &Problem) -> Output {
    let mut y = Vec::with_capacity(p.x.len());
    for row in p.x.chunks(p.cols.max(1)) {
        let m = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
        let sum: f64 = row.iter().map(|&v| (v as f64 - m).exp()).sum();
        y.extend(row.iter().map(|&v| ((v as f64 - m).exp() / sum) as f32));
    }
    y
}

fn check(p: &Problem) -> Result<(u32, u32), oxide_rt::Error> {
    let bad = |why: String| Err(oxide_rt::Error::Config(why));
    if p.x.len() != p.rows * p.cols {
        return bad(format!(
            "softmax: x has {} elements, rows x cols = {}; build it with `problem_with`",
            p.x.len(),
            p.rows * p.cols
        ));
    }
    match (u32::try_from(p.rows), u32::try_from(p.cols)) {
        (Ok(r), Ok(c)) => Ok((r, c)),
        _ => bad(format!("softmax: {} x {} does not fit u32 row/column counts; split the matrix", p.rows, p.cols)),
    }
}

/// One block of [`kernels::THREADS`] threads per row.
pub fn config(rows: u32) -> LaunchConfig {
    LaunchConfig::new(rows.max(1), kernels::THREADS)
}

pub fn run_cpu(p: &Problem) -> Result<Output, oxide_rt::Error> {
    let (rows, cols) = check(p)?;
    if p.x.is_empty() {
        return Ok(Vec::new());
    }
    let mut y = vec![0f32; p.x.len()];
    kernels::cpu_softmax_rows_with(config(rows), &p.x, Slice2d::new(&mut y, cols as usize))?;
    Ok(y)
}

pub fn run_gpu(stream: &Arc<CudaStream>, p: &Problem) -> Result<Output, oxide_rt::Error> {
    let (rows, cols) = check(p)?;
    if p.x.is_empty() {
        return Ok(Vec::new());
    }
    let x = stream.clone_htod(&p.x).map_err(err("copying x to the GPU"))?;
    let mut y = stream.alloc_zeros::<f32>(p.x.len()).map_err(err("allocating y on the GPU"))?;
    kernels::launch_softmax_rows_with(stream, config(rows), &x, Slice2d::new(&mut y, cols as usize))?;
    stream.clone_dtoh(&y).map_err(err("copying y back"))
}

/// Relative tolerance. Per element the kernel's error against the exact value is bounded by
/// (in units of u = 2^-24): the f32 sum of exponentials, whose longest chain is
/// cols/256 terms per thread plus 5 butterfly adds and 7 adds joining the warps
/// (<= 64 + 12 for cols <= MAX_COLS); `x - max` rounded (|x - max| < 16, so <= 2^-20 absolute,
/// 16 u relative after exp); exp itself (libdevice expf <= 2 ulp, host libm <= 1 ulp);
/// reciprocal and product (1 u). That is < 160 u ~ 9.5e-6; the GPU and CPU runs may each err
/// so, hence 2 x 160 u. The f64 reference is exact at this scale.
pub const REL_TOL: f32 = 320.0 / (1u32 << 24) as f32;

pub fn compare(got: &Output, want: &Output) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = REL_TOL * w.abs();
        let err = (g - w).abs();
        if err.is_nan() || err > tol {
            return Err(format!("element {i}: got {g}, want {w} (tolerance {tol})"));
        }
    }
    Ok(())
}
