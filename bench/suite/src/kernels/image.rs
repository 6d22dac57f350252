//! image kernels (device side): interleaved-channel images, one thread per pixel.
use oxide_rt::device::*;

/// RGB (interleaved `[r, g, b, r, g, b, ..]`, row-major) to gray with the fixed-point BT.601
/// weights: `(77 r + 150 g + 29 b + 128) >> 8`. 2-D launch over `width × height` pixels.
#[kernel]
pub fn rgb_to_gray(rgb: &[u8], mut gray: DisjointSlice2d<u8>) {
    let (x, y) = thread::index_2d();
    let width = gray.cols();
    if let Some(g) = gray.get_mut() {
        let p = 3 * (y * width + x);
        let (r, gr, b) = (rgb[p] as u32, rgb[p + 1] as u32, rgb[p + 2] as u32);
        *g = ((77 * r + 150 * gr + 29 * b + 128) >> 8) as u8;
    }
}

/// Levels on RGBA u16 pixels (interleaved): each colour channel `t = v / 65535` becomes
/// `sqrt(clamp((t - 0.5) * contrast + 0.5 + brightness, 0, 1))` (gamma 1/2) scaled back to
/// u16 with rounding; alpha is copied. 1-D launch, one thread per pixel.
#[kernel]
pub fn rgba16_levels(px: &[u16], contrast: f32, brightness: f32, mut out: DisjointChunks<u16, 4>) {
    let i = thread::index();
    if let Some(o) = out.get_mut(i) {
        let p = 4 * i.get();
        for c in 0..3 {
            let t = px[p + c] as f32 / 65535.0;
            let t = ((t - 0.5) * contrast + 0.5 + brightness).clamp(0.0, 1.0);
            o[c] = (math::sqrt(t) * 65535.0 + 0.5) as u16;
        }
        o[3] = px[p + 3];
    }
}

/// 3×3 box blur of an RGB u8 image (pixels `[r, g, b]`, row-major), neighbours past the
/// border repeating the border pixel; each channel `(sum + 4) / 9`. 2-D launch.
#[kernel]
pub fn box_blur_rgb(src: &[[u8; 3]], mut dst: DisjointSlice2d<[u8; 3]>) {
    let (x, y) = thread::index_2d();
    let (w, h) = (dst.cols(), dst.rows());
    if let Some(o) = dst.get_mut() {
        let mut sum = [0u32; 3];
        for yy in [y.saturating_sub(1), y, (y + 1).min(h - 1)] {
            for xx in [x.saturating_sub(1), x, (x + 1).min(w - 1)] {
                for (s, v) in sum.iter_mut().zip(src[yy * w + xx]) {
                    *s += v as u32;
                }
            }
        }
        *o = sum.map(|s| ((s + 4) / 9) as u8);
    }
}
