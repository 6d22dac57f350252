//! CUDA C++ next to Rust, as a library: the box filter of `legacy/filters.cu` launched through
//! its generated typed launcher, the Rust twin in `kernels.rs` taking the same `FilterParams`
//! (from `shared/filter.h`), and the CPU reference both are checked against.
pub mod kernels;

use example_common::{compare_exact, driver_err as err, Rng};
use kernels::FilterParams;
use oxide_rt::cuda::CudaStream;
use oxide_rt::{Dim3, Slice2d};
use std::sync::Arc;

/// Default image: 2048 x 2048.
pub const DEFAULT_SIZE: usize = 2048;
/// Block shape of both filters: 32 x 8.
pub const BLOCK: (u32, u32) = (32, 8);

pub struct Problem {
    /// Row-major `height x width`, values in [-1, 1).
    pub image: Vec<f32>,
    pub params: FilterParams,
}

pub fn problem(seed: u64, width: usize, height: usize, radius: i32) -> Problem {
    let mut rng = Rng::new(seed);
    let image = rng.vec_f32(width * height);
    let side = (2 * radius + 1) as f32;
    let params =
        FilterParams { width: width as i32, height: height as i32, radius, scale: 1.0 / (side * side), bias: 0.25 };
    Problem { image, params }
}

/// The scalar reference: the same clamped box, summed rows then columns, and the same fused
/// multiply-add as both kernels, so all three agree bit for bit.
pub fn reference(p: &Problem) -> Vec<f32> {
    let FilterParams { width: w, height: h, radius: r, scale, bias } = p.params;
    let mut out = Vec::with_capacity(p.image.len());
    for y in 0..h {
        for x in 0..w {
            let mut sum = 0.0f32;
            for dy in -r..=r {
                let yy = (y + dy).clamp(0, h - 1);
                for dx in -r..=r {
                    sum += p.image[(yy * w + (x + dx).clamp(0, w - 1)) as usize];
                }
            }
            out.push(sum.mul_add(scale, bias));
        }
    }
    out
}

/// Grid and block covering the image.
pub fn geometry(p: &FilterParams) -> (Dim3, Dim3) {
    let (bx, by) = BLOCK;
    let grid = Dim3::new((p.width as u32).div_ceil(bx), (p.height as u32).div_ceil(by), 1);
    (grid, Dim3::new(bx, by, 1))
}

/// The CUDA C++ kernel on the GPU, through its generated typed launcher.
pub fn run_cuda_cpp(stream: &Arc<CudaStream>, p: &Problem) -> Result<Vec<f32>, oxide_rt::Error> {
    let input = stream.clone_htod(&p.image).map_err(err("copying the image to the GPU"))?;
    let mut out = stream.alloc_zeros::<f32>(p.image.len()).map_err(err("allocating the output"))?;
    let (grid, block) = geometry(&p.params);
    let (w, h) = (p.params.width, p.params.height);
    if w <= 0 || h <= 0 || p.image.len() != w as usize * h as usize {
        let reason = format!("the image holds {} values, not width x height = {w} x {h}", p.image.len());
        return Err(oxide_rt::Error::InvalidLaunch { kernel: "box_filter", reason });
    }
    // SAFETY: box_filter (legacy/filters.cu) reads `in` only at rows clamped to [0, height) and
    // columns clamped to [0, width), and writes only `out[y * width + x]` of its own thread's
    // (x, y), x < width, y < height: both buffers hold width * height floats (checked above),
    // and no two threads write one element.
    unsafe { kernels::launch_box_filter(stream, grid, block, &input, &mut out, p.params)? };
    oxide_rt::host::synchronize(stream)?;
    stream.clone_dtoh(&out).map_err(err("copying the result back"))
}

/// The Rust kernel on the GPU.
pub fn run_rust_gpu(stream: &Arc<CudaStream>, p: &Problem) -> Result<Vec<f32>, oxide_rt::Error> {
    let input = stream.clone_htod(&p.image).map_err(err("copying the image to the GPU"))?;
    let mut out = stream.alloc_zeros::<f32>(p.image.len()).map_err(err("allocating the output"))?;
    let (grid, block) = geometry(&p.params);
    kernels::launch_box_filter_rs(
        stream,
        grid,
        block,
        &input,
        p.params,
        Slice2d::new(&mut out, p.params.width as usize),
    )?;
    oxide_rt::host::synchronize(stream)?;
    stream.clone_dtoh(&out).map_err(err("copying the result back"))
}

/// The Rust kernel on the CPU executor.
pub fn run_rust_cpu(p: &Problem) -> Result<Vec<f32>, oxide_rt::Error> {
    let mut out = vec![0.0f32; p.image.len()];
    let (grid, block) = geometry(&p.params);
    kernels::cpu_box_filter_rs(grid, block, &p.image, p.params, Slice2d::new(&mut out, p.params.width as usize))?;
    Ok(out)
}

/// The CUDA C++ kernel "on the CPU": always `Err`, saying it runs only on a GPU.
pub fn run_cuda_cpp_on_cpu(p: &Problem) -> Result<Vec<f32>, oxide_rt::Error> {
    let mut out = vec![0.0f32; p.image.len()];
    let (grid, block) = geometry(&p.params);
    kernels::cpu_box_filter(grid, block, &p.image, &mut out, p.params)?;
    Ok(out)
}

pub fn compare(got: &[f32], want: &[f32]) -> Result<(), String> {
    compare_exact(got, want, "pixel", |g, w| g.to_bits() == w.to_bits())
}
