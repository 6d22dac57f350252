//! The Rust kernels, next to the CUDA C++ ones of `legacy/filters.cu`. Compiled twice: for the
//! host (typed launchers, CPU executor) and for nvptx64 (PTX).
use oxide_rt::device::*;

// `FilterParams` (from shared/filter.h) and the CUDA C++ launchers: `launch_box_filter`,
// `launch_threshold_f32`, `launch_threshold_f64`.
oxide_rt::include_cuda!();

// SAFETY: `clamp_to_edge` (legacy/edge.cu) is a pure function of two integers: it reads and
// writes no memory, so any arguments are fine and callers need no `unsafe`.
unsafe extern "C" {
    /// `legacy/edge.cu`: `v` clamped to `0..=hi`, the filters' edge rule (C++, linked into this
    /// module on the device and into the binary on the host).
    safe fn clamp_to_edge(v: i32, hi: i32) -> i32;
}

/// The box filter of `legacy/filters.cu`, in Rust, taking the very same params struct and
/// calling the same C++ edge rule.
#[kernel(dims = 2)]
pub fn box_filter_rs(input: &[f32], p: FilterParams, mut out: DisjointSlice2d<f32>) {
    let (x, y) = thread::index_2d();
    let (w, h, r) = (p.width, p.height, p.radius);
    if let Some(o) = out.get_mut() {
        let mut sum = 0.0f32;
        for dy in -r..=r {
            let yy = clamp_to_edge(y as i32 + dy, h - 1);
            for dx in -r..=r {
                let xx = clamp_to_edge(x as i32 + dx, w - 1);
                sum += input.get((yy * w + xx) as usize).copied().unwrap_or(0.0);
            }
        }
        *o = math::fma(sum, p.scale, p.bias);
    }
}
