//! The Rust kernels, next to the CUDA C++ ones of `legacy/filters.cu`. Compiled twice: for the
//! host (typed launchers, CPU executor) and for nvptx64 (PTX).
use oxide_rt::device::*;

// `FilterParams` (from shared/filter.h) and the CUDA C++ launchers: `launch_box_filter`,
// `launch_threshold_f32`, `launch_threshold_f64`.
oxide_rt::include_cuda!();

/// The box filter of `legacy/filters.cu`, in Rust, taking the very same params struct.
#[kernel(dims = 2)]
pub fn box_filter_rs(input: &[f32], p: FilterParams, mut out: DisjointSlice2d<f32>) {
    let (x, y) = thread::index_2d();
    let (w, h, r) = (p.width, p.height, p.radius);
    if let Some(o) = out.get_mut() {
        let mut sum = 0.0f32;
        for dy in -r..=r {
            let yy = (y as i32 + dy).clamp(0, h - 1);
            for dx in -r..=r {
                let xx = (x as i32 + dx).clamp(0, w - 1);
                sum += input.get((yy * w + xx) as usize).copied().unwrap_or(0.0);
            }
        }
        *o = math::fma(sum, p.scale, p.bias);
    }
}
