//! image kernels: problems, CPU references, CPU-executor runs. Images are row-major with
//! interleaved channels.
use crate::kernels::image as k;
use example_common::Rng;
use oxide_rt::{LaunchConfig, Slice2d};

/// Block shape of the 2-D image kernels.
pub const BLOCK_2D: (u32, u32) = (32, 8);
/// Block size of the 1-D image kernels.
pub const BLOCK_1D: u32 = 256;

/// One thread per pixel of a `width × height` image, `BLOCK_2D` blocks.
pub fn config2d(width: usize, height: usize) -> LaunchConfig {
    let blocks = |n: usize, b: u32| u32::try_from(n.div_ceil(b as usize)).unwrap_or(u32::MAX).max(1);
    LaunchConfig::new((blocks(width, BLOCK_2D.0), blocks(height, BLOCK_2D.1)), BLOCK_2D)
}

/// One thread per element of `n`, `BLOCK_1D` blocks.
pub fn config1d(n: usize) -> LaunchConfig {
    let blocks = u32::try_from(n.div_ceil(BLOCK_1D as usize)).unwrap_or(u32::MAX).max(1);
    LaunchConfig::new(blocks, BLOCK_1D)
}

fn bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.u32() as u8).collect()
}

fn check_len(what: &str, len: usize, want: usize) -> Result<(), oxide_rt::Error> {
    if len == want {
        Ok(())
    } else {
        Err(oxide_rt::Error::Config(format!("{what}: input has {len} values, expected {want}")))
    }
}

// ---- RGB -> gray ------------------------------------------------------------------------------

pub struct RgbImage {
    pub width: usize,
    pub height: usize,
    /// `[r, g, b, r, g, b, ..]`, `3 * width * height` bytes.
    pub rgb: Vec<u8>,
}

pub fn rgb_to_gray_problem(seed: u64, width: usize, height: usize) -> RgbImage {
    let mut rng = Rng::new(seed);
    RgbImage { width, height, rgb: bytes(&mut rng, 3 * width * height) }
}

/// `(77 r + 150 g + 29 b + 128) >> 8` per pixel.
pub fn rgb_to_gray_reference(p: &RgbImage) -> Vec<u8> {
    p.rgb
        .chunks_exact(3)
        .map(|c| ((77 * c[0] as u32 + 150 * c[1] as u32 + 29 * c[2] as u32 + 128) >> 8) as u8)
        .collect()
}

pub fn rgb_to_gray_config(p: &RgbImage) -> LaunchConfig {
    config2d(p.width, p.height)
}

pub fn rgb_to_gray_cpu(p: &RgbImage) -> Result<Vec<u8>, oxide_rt::Error> {
    check_len("rgb_to_gray", p.rgb.len(), 3 * p.width * p.height)?;
    let mut out = vec![0u8; p.width * p.height];
    k::cpu_rgb_to_gray_with(rgb_to_gray_config(p), &p.rgb, Slice2d::new(&mut out, p.width))?;
    Ok(out)
}

/// Exact (integer arithmetic).
pub fn rgb_to_gray_compare(got: &[u8], want: &[u8]) -> Result<(), String> {
    example_common::compare_exact(got, want, "pixel", |g, w| g == w)
}

// ---- RGBA u16 levels -------------------------------------------------------------------------

pub struct Rgba16Image {
    /// Pixels (4 values each).
    pub pixels: usize,
    /// `[r, g, b, a, ..]`, `4 * pixels` values.
    pub px: Vec<u16>,
    pub contrast: f32,
    pub brightness: f32,
}

pub fn rgba16_levels_problem(seed: u64, pixels: usize) -> Rgba16Image {
    let mut rng = Rng::new(seed);
    let contrast = 1.25 + 0.25 * rng.f32();
    let brightness = 0.05 * rng.f32();
    let px = (0..4 * pixels).map(|_| rng.u32() as u16).collect();
    Rgba16Image { pixels, px, contrast, brightness }
}

/// One channel value through the levels map (the kernel's expression, evaluated on the CPU).
pub fn levels(v: u16, contrast: f32, brightness: f32) -> u16 {
    let t = v as f32 / 65535.0;
    let t = ((t - 0.5) * contrast + 0.5 + brightness).clamp(0.0, 1.0);
    (t.sqrt() * 65535.0 + 0.5) as u16
}

pub fn rgba16_levels_reference(p: &Rgba16Image) -> Vec<u16> {
    let mut out = Vec::with_capacity(p.px.len());
    for c in p.px.chunks_exact(4) {
        out.extend([
            levels(c[0], p.contrast, p.brightness),
            levels(c[1], p.contrast, p.brightness),
            levels(c[2], p.contrast, p.brightness),
            c[3],
        ]);
    }
    out
}

pub fn rgba16_levels_config(p: &Rgba16Image) -> LaunchConfig {
    config1d(p.pixels)
}

pub fn rgba16_levels_cpu(p: &Rgba16Image) -> Result<Vec<u16>, oxide_rt::Error> {
    check_len("rgba16_levels", p.px.len(), 4 * p.pixels)?;
    let mut out = vec![0u16; p.px.len()];
    k::cpu_rgba16_levels_with(rgba16_levels_config(p), &p.px, p.contrast, p.brightness, &mut out)?;
    Ok(out)
}

/// Colour channels within 1 (the GPU may contract `(t - 0.5) * contrast + 0.5` and
/// `sqrt(t) * 65535 + 0.5` into fmas, which can move a value across a rounding boundary);
/// alpha exact.
pub fn rgba16_levels_compare(got: &[u16], want: &[u16]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    let bad = got.iter().zip(want).enumerate().position(|(i, (&g, &w))| {
        let d = g.abs_diff(w);
        if i % 4 == 3 {
            d != 0
        } else {
            d > 1
        }
    });
    match bad {
        Some(i) => Err(format!("value {i} (pixel {}, channel {}): got {}, want {}", i / 4, i % 4, got[i], want[i])),
        None => Ok(()),
    }
}

// ---- 3x3 box blur on RGB u8 -------------------------------------------------------------------

pub struct RgbPixels {
    pub width: usize,
    pub height: usize,
    /// Row-major pixels `[r, g, b]` (the same bytes as an interleaved buffer).
    pub px: Vec<[u8; 3]>,
}

pub fn box_blur_rgb_problem(seed: u64, width: usize, height: usize) -> RgbPixels {
    let mut rng = Rng::new(seed);
    let px = (0..width * height).map(|_| [rng.u32() as u8, rng.u32() as u8, rng.u32() as u8]).collect();
    RgbPixels { width, height, px }
}

/// Per channel `(sum of the clamped 3×3 neighbourhood + 4) / 9`.
pub fn box_blur_rgb_reference(p: &RgbPixels) -> Vec<[u8; 3]> {
    let (w, h) = (p.width, p.height);
    let mut out = vec![[0u8; 3]; w * h];
    for y in 0..h {
        for x in 0..w {
            let mut sum = [0u32; 3];
            for yy in [y.saturating_sub(1), y, (y + 1).min(h - 1)] {
                for xx in [x.saturating_sub(1), x, (x + 1).min(w - 1)] {
                    let q = p.px[yy * w + xx];
                    for (s, v) in sum.iter_mut().zip(q) {
                        *s += v as u32;
                    }
                }
            }
            out[y * w + x] = sum.map(|s| ((s + 4) / 9) as u8);
        }
    }
    out
}

pub fn box_blur_rgb_config(p: &RgbPixels) -> LaunchConfig {
    config2d(p.width, p.height)
}

pub fn box_blur_rgb_cpu(p: &RgbPixels) -> Result<Vec<[u8; 3]>, oxide_rt::Error> {
    check_len("box_blur_rgb", p.px.len(), p.width * p.height)?;
    let mut out = vec![[0u8; 3]; p.px.len()];
    k::cpu_box_blur_rgb_with(box_blur_rgb_config(p), &p.px, Slice2d::new(&mut out, p.width))?;
    Ok(out)
}

/// Exact (integer arithmetic).
pub fn box_blur_rgb_compare(got: &[[u8; 3]], want: &[[u8; 3]]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        Some(i) => Err(format!("pixel {i}: got {:?}, want {:?}", got[i], want[i])),
        None => Ok(()),
    }
}
