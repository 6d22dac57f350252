//! 2D 5-point stencil as a library: the kernel plus the uniform example API (random problem,
//! scalar reference, CPU and GPU runs, comparison) shared by main.rs, the differential tests and
//! the benchmarks.
pub mod kernels;

use example_common::{driver_err as err, Rng};
use oxide_rt::cuda::CudaStream;
use oxide_rt::LaunchConfig;
use std::sync::Arc;

pub use kernels::{BX, BY};
/// Default grid side (main.rs): 4096 x 4096.
pub const DEFAULT_SIZE: usize = 4096;
/// Bench grid: 16384 x 16384 f32 = 1 GiB per array.
pub const BENCH_SIDE: usize = 16384;
/// Differential-test sizes: the column count; rows follow from [`rows_for`]. Single cell, a
/// column narrower than the tile, one off the tile width, and larger non-multiples.
pub const SIZES: &[usize] = &[1, 2, 31, 33, 100, 257, 1000, 2049];

pub struct Problem {
    pub rows: usize,
    pub cols: usize,
    /// Row-major `rows x cols`, values in [-1, 1).
    pub input: Vec<f32>,
    /// Weights of the centre, north, south, west and east cells.
    pub w: [f32; 5],
}

/// Row-major `rows x cols` result.
pub type Output = Vec<f32>;

/// Rows for a test of `cols` columns: about 2^18 cells, never a multiple of [`BY`].
pub fn rows_for(cols: usize) -> usize {
    ((1usize << 18) / cols.max(1)).clamp(1, 4099) | 1
}

/// `size` is the column count; see [`rows_for`].
pub fn problem(seed: u64, size: usize) -> Problem {
    problem_with(seed, rows_for(size), size)
}

pub fn problem_with(seed: u64, rows: usize, cols: usize) -> Problem {
    let mut rng = Rng::new(seed);
    let w = [0.5 + 0.25 * rng.f32(), rng.f32(), rng.f32(), rng.f32(), rng.f32()];
    Problem { rows, cols, input: rng.vec_f32(rows * cols), w }
}

/// The scalar reference: the same clamped neighbours and the same chain of fused multiply-adds
/// as the kernel, so the result is bit-exact.
pub fn reference(p: &Problem) -> Output {
    let (rows, cols) = (p.rows, p.cols);
    let at = |y: usize, x: usize| p.input[y * cols + x];
    let [wc, wn, ws, ww, we] = p.w;
    let mut out = Vec::with_capacity(rows * cols);
    for y in 0..rows {
        for x in 0..cols {
            let c = at(y, x);
            let n = at(y.saturating_sub(1), x);
            let s = at((y + 1).min(rows - 1), x);
            let w = at(y, x.saturating_sub(1));
            let e = at(y, (x + 1).min(cols - 1));
            out.push(we.mul_add(e, ww.mul_add(w, ws.mul_add(s, wn.mul_add(n, wc * c)))));
        }
    }
    out
}

fn check(p: &Problem) -> Result<(u32, u32), oxide_rt::Error> {
    let bad = |why: String| Err(oxide_rt::Error::Config(why));
    if p.input.len() != p.rows * p.cols {
        return bad(format!(
            "stencil: input has {} cells, rows x cols = {}; build it with `problem_with`",
            p.input.len(),
            p.rows * p.cols
        ));
    }
    match (u32::try_from(p.rows), u32::try_from(p.cols)) {
        (Ok(r), Ok(c)) if r.div_ceil(BY) <= 65535 => Ok((r, c)),
        _ => bad(format!(
            "stencil: {} x {} exceeds the launch grid (rows <= {}, cols < 2^32); split the grid",
            p.rows,
            p.cols,
            65535 * BY
        )),
    }
}

/// One thread per cell, `BX x BY` blocks.
pub fn config(rows: u32, cols: u32) -> LaunchConfig {
    LaunchConfig::new((cols.div_ceil(BX).max(1), rows.div_ceil(BY).max(1)), (BX, BY))
}

pub fn run_cpu(p: &Problem) -> Result<Output, oxide_rt::Error> {
    let (rows, cols) = check(p)?;
    if p.input.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = vec![0.0f32; p.input.len()];
    let [wc, wn, ws, ww, we] = p.w;
    kernels::cpu_stencil5_with(
        config(rows, cols),
        &p.input,
        rows,
        cols,
        wc,
        wn,
        ws,
        ww,
        we,
        oxide_rt::Slice2d::new(&mut out, cols as usize),
    )?;
    Ok(out)
}

pub fn run_gpu(stream: &Arc<CudaStream>, p: &Problem) -> Result<Output, oxide_rt::Error> {
    let (rows, cols) = check(p)?;
    if p.input.is_empty() {
        return Ok(Vec::new());
    }
    let input = stream.clone_htod(&p.input).map_err(err("copying the input to the GPU"))?;
    let mut out = stream.alloc_zeros::<f32>(p.input.len()).map_err(err("allocating the output on the GPU"))?;
    let [wc, wn, ws, ww, we] = p.w;
    kernels::launch_stencil5_with(
        stream,
        config(rows, cols),
        &input,
        rows,
        cols,
        wc,
        wn,
        ws,
        ww,
        we,
        oxide_rt::Slice2d::new(&mut out, cols as usize),
    )?;
    stream.clone_dtoh(&out).map_err(err("copying the output back"))
}

/// Exact: the kernel and the reference read the same cells and evaluate the same expression,
/// `wc*C` (one rounding) followed by four fused multiply-adds (one rounding each), in the same
/// order, on the GPU (`fma.rn.f32`), the CPU executor and the reference (`f32::mul_add`).
pub fn compare(got: &Output, want: &Output) -> Result<(), String> {
    example_common::compare_exact(got, want, "element", |g, w| g.to_bits() == w.to_bits())
}
