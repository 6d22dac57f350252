//! image kernels of the suite against their CUDA C++ twins (`cuda/suite/image.cu`).

use super::stencil3d::check_both;
use crate::cases::saxpy::cfg_raw;
use crate::cases::Case;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::PushKernelArg;
use oxide_suite::image as im;
use oxide_suite::kernels::image as k;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![("rgb_to_gray", rgb_to_gray), ("rgba16_levels", rgba16_levels), ("box_blur_rgb", box_blur_rgb)]
}

/// 16384 x 16384 RGB u8 (768 MiB in, 256 MiB out), 32x8 blocks.
fn rgb_to_gray(b: &Bench) -> Res<Row> {
    let (w, h) = (16384usize, 16384usize);
    let s = &b.stream;
    let p = im::rgb_to_gray_problem(1, w, h);
    let cfg = im::rgb_to_gray_config(&p);
    let din = s.clone_htod(&p.rgb)?;
    let mut dout = s.alloc_zeros::<u8>(w * h)?;
    let oxide_ms = b.time(|| Ok(k::launch_rgb_to_gray_with(s, cfg, &din, oxide_rt::Slice2d::new(&mut dout, w))?))?;

    let (_m, f) = b.twin("suite/image", "rgb_to_gray")?;
    let mut tout = s.alloc_zeros::<u8>(w * h)?;
    let (wi, hi) = (w as i32, h as i32);
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&din).arg(&mut tout).arg(&wi).arg(&hi);
        // SAFETY: the twin's signature is (const unsigned char* rgb, unsigned char* gray, int width, int height); rgb holds 3 * w * h bytes, gray w * h.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = im::rgb_to_gray_reference(&p);
    let (got, twin) = (s.clone_dtoh(&dout)?, s.clone_dtoh(&tout)?);
    check_both("rgb_to_gray", im::rgb_to_gray_compare(&got, &want), im::rgb_to_gray_compare(&twin, &want))?;
    Ok(Row {
        kernel: "rgb_to_gray".into(),
        size: format!("{w} x {h} RGB u8"),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(4.0 * (w * h) as f64),
        reference: None,
        regs: Some(b.regs("rgb_to_gray", &f)?),
        max_error: 0.0,
    })
}

/// 2^26 RGBA u16 pixels (512 MiB in, 512 MiB out), blocks of 256.
fn rgba16_levels(b: &Bench) -> Res<Row> {
    let pixels = 1usize << 26;
    let s = &b.stream;
    let p = im::rgba16_levels_problem(2, pixels);
    let cfg = im::rgba16_levels_config(&p);
    let din = s.clone_htod(&p.px)?;
    let mut dout = s.alloc_zeros::<u16>(4 * pixels)?;
    let oxide_ms = b.time(|| Ok(k::launch_rgba16_levels_with(s, cfg, &din, p.contrast, p.brightness, &mut dout)?))?;

    let (_m, f) = b.twin("suite/image", "rgba16_levels")?;
    let mut tout = s.alloc_zeros::<u16>(4 * pixels)?;
    let pi = pixels as i32;
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&din).arg(&mut tout).arg(&pi).arg(&p.contrast).arg(&p.brightness);
        // SAFETY: the twin's signature is (const unsigned short* px, unsigned short* out, int pixels, float contrast, float brightness); both buffers hold 4 * pixels values.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = im::rgba16_levels_reference(&p);
    let (got, twin) = (s.clone_dtoh(&dout)?, s.clone_dtoh(&tout)?);
    check_both("rgba16_levels", im::rgba16_levels_compare(&got, &want), im::rgba16_levels_compare(&twin, &want))?;
    let max_error = got.iter().zip(&want).map(|(g, w)| g.abs_diff(*w) as f64).fold(0.0, f64::max);
    Ok(Row {
        kernel: "rgba16_levels".into(),
        size: "2^26 RGBA u16 pixels".into(),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(2.0 * 8.0 * pixels as f64),
        reference: None,
        regs: Some(b.regs("rgba16_levels", &f)?),
        max_error,
    })
}

/// 16384 x 8192 RGB u8 (384 MiB in, 384 MiB out), 32x8 blocks.
fn box_blur_rgb(b: &Bench) -> Res<Row> {
    let (w, h) = (16384usize, 8192usize);
    let s = &b.stream;
    let p = im::box_blur_rgb_problem(3, w, h);
    let cfg = im::box_blur_rgb_config(&p);
    let din = s.clone_htod(&p.px)?;
    let mut dout = s.alloc_zeros::<[u8; 3]>(w * h)?;
    let oxide_ms = b.time(|| Ok(k::launch_box_blur_rgb_with(s, cfg, &din, oxide_rt::Slice2d::new(&mut dout, w))?))?;

    let (_m, f) = b.twin("suite/image", "box_blur_rgb")?;
    let mut tout = s.alloc_zeros::<[u8; 3]>(w * h)?;
    let (wi, hi) = (w as i32, h as i32);
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&din).arg(&mut tout).arg(&wi).arg(&hi);
        // SAFETY: the twin's signature is (const unsigned char* src, unsigned char* dst, int width, int height); both buffers hold w * h pixels of 3 bytes ([u8; 3]).
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = im::box_blur_rgb_reference(&p);
    let (got, twin) = (s.clone_dtoh(&dout)?, s.clone_dtoh(&tout)?);
    check_both("box_blur_rgb", im::box_blur_rgb_compare(&got, &want), im::box_blur_rgb_compare(&twin, &want))?;
    Ok(Row {
        kernel: "box_blur_rgb".into(),
        size: format!("{w} x {h} RGB u8"),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(2.0 * 3.0 * (w * h) as f64),
        reference: None,
        regs: Some(b.regs("box_blur_rgb", &f)?),
        max_error: 0.0,
    })
}
