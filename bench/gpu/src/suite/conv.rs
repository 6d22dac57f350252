//! conv kernels of the suite against their CUDA C++ twins (`cuda/suite/conv.cu`).

use super::stencil3d::{check_both, max_abs_error};
use crate::cases::saxpy::cfg_raw;
use crate::cases::Case;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::PushKernelArg;
use oxide_suite::conv as cv;
use oxide_suite::kernels::conv as k;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![("conv1d_15", conv1d_15), ("conv2d_3x3", conv2d_3x3), ("gauss_separable", gauss_separable)]
}

/// 2^27 f32 (512 MiB in, 512 MiB out), 15 taps, blocks of 256.
fn conv1d_15(b: &Bench) -> Res<Row> {
    let n = 1usize << 27;
    let s = &b.stream;
    let p = cv::conv1d_problem(1, n);
    let cfg = cv::conv1d_config(&p);
    let dx = s.clone_htod(&p.x)?;
    let mut dy = s.alloc_zeros::<f32>(n)?;
    let oxide_ms = b.time(|| Ok(k::launch_conv1d_15_with(s, cfg, &dx, p.taps, &mut dy)?))?;

    let (_m, f) = b.twin("suite/conv", "conv1d_15")?;
    let mut ty = s.alloc_zeros::<f32>(n)?;
    let ni = n as i32;
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&dx).arg(&mut ty).arg(&ni).arg(&p.taps);
        // SAFETY: the twin's signature is (const float* x, float* y, int n, Taps15 taps), Taps15 being { float w[15]; } by value, the layout of [f32; 15]; both buffers hold n floats.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = cv::conv1d_reference(&p);
    let (got, twin) = (s.clone_dtoh(&dy)?, s.clone_dtoh(&ty)?);
    check_both("conv1d_15", cv::conv1d_compare(&got, &want), cv::conv1d_compare(&twin, &want))?;
    Ok(Row {
        kernel: "conv1d_15".into(),
        size: "n = 2^27 f32; 15 taps".into(),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(2.0 * 4.0 * n as f64),
        reference: None,
        regs: Some(b.regs("conv1d_15", &f)?),
        max_error: max_abs_error(&got, &want),
    })
}

/// 16384 x 8192 f32 (512 MiB in, 512 MiB out), 32x8 blocks.
fn conv2d_3x3(b: &Bench) -> Res<Row> {
    let (w, h) = (16384usize, 8192usize);
    let s = &b.stream;
    let p = cv::conv2d_problem(2, w, h);
    let cfg = cv::conv2d_config(&p);
    let din = s.clone_htod(&p.image.px)?;
    let mut dout = s.alloc_zeros::<f32>(w * h)?;
    let oxide_ms =
        b.time(|| Ok(k::launch_conv2d_3x3_with(s, cfg, &din, p.w, oxide_rt::Slice2d::new(&mut dout, w))?))?;

    let (_m, f) = b.twin("suite/conv", "conv2d_3x3")?;
    let mut tout = s.alloc_zeros::<f32>(w * h)?;
    let (wi, hi) = (w as i32, h as i32);
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&din).arg(&mut tout).arg(&wi).arg(&hi).arg(&p.w);
        // SAFETY: the twin's signature is (const float* in, float* out, int width, int height, Weights9 w), Weights9 being { float w[9]; } by value, the layout of [f32; 9]; both buffers hold w * h floats.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = cv::conv2d_reference(&p);
    let (got, twin) = (s.clone_dtoh(&dout)?, s.clone_dtoh(&tout)?);
    check_both("conv2d_3x3", cv::conv2d_compare(&got, &want), cv::conv2d_compare(&twin, &want))?;
    Ok(Row {
        kernel: "conv2d_3x3".into(),
        size: format!("{w} x {h} f32"),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(2.0 * 4.0 * (w * h) as f64),
        reference: None,
        regs: Some(b.regs("conv2d_3x3", &f)?),
        max_error: max_abs_error(&got, &want),
    })
}

/// 16384 x 8192 f32, row pass then column pass (each 512 MiB in, 512 MiB out), 32x8 blocks
/// with shared tiles; both launches timed together. Registers: the larger of the two kernels.
fn gauss_separable(b: &Bench) -> Res<Row> {
    let (w, h) = (16384usize, 8192usize);
    let s = &b.stream;
    let p = cv::gauss_problem(3, w, h);
    let cfg = cv::gauss_config(&p);
    let din = s.clone_htod(&p.image.px)?;
    let mut dtmp = s.alloc_zeros::<f32>(w * h)?;
    let mut dout = s.alloc_zeros::<f32>(w * h)?;
    let oxide_ms = b.time(|| {
        k::launch_gauss_rows_with(s, cfg, &din, p.taps, oxide_rt::Slice2d::new(&mut dtmp, w))?;
        k::launch_gauss_cols_with(s, cfg, &dtmp, p.taps, oxide_rt::Slice2d::new(&mut dout, w))?;
        Ok(())
    })?;

    let (_m, f_rows) = b.twin("suite/conv", "gauss_rows")?;
    let (_m2, f_cols) = b.twin("suite/conv", "gauss_cols")?;
    let mut ttmp = s.alloc_zeros::<f32>(w * h)?;
    let mut tout = s.alloc_zeros::<f32>(w * h)?;
    let (wi, hi) = (w as i32, h as i32);
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f_rows);
        l.arg(&din).arg(&mut ttmp).arg(&wi).arg(&hi).arg(&p.taps);
        // SAFETY: the twin's signature is (const float* in, float* out, int width, int height, Weights9 taps), Weights9 being { float w[9]; } by value, the layout of [f32; 9]; both buffers hold w * h floats; 32x8 blocks as it requires.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        let mut l = s.launch_builder(&f_cols);
        l.arg(&ttmp).arg(&mut tout).arg(&wi).arg(&hi).arg(&p.taps);
        // SAFETY: as above (gauss_cols has the same signature).
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = cv::gauss_reference(&p);
    let (got, twin) = (s.clone_dtoh(&dout)?, s.clone_dtoh(&tout)?);
    check_both("gauss_separable", cv::gauss_compare(&got, &want), cv::gauss_compare(&twin, &want))?;
    let (ro, rc) = b.regs("gauss_rows", &f_rows)?;
    let (co, cc) = b.regs("gauss_cols", &f_cols)?;
    Ok(Row {
        kernel: "gauss_separable".into(),
        size: format!("{w} x {h} f32; 9 taps; 2 passes"),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(2.0 * 2.0 * 4.0 * (w * h) as f64),
        reference: None,
        regs: Some((ro.max(co), rc.max(cc))),
        max_error: max_abs_error(&got, &want),
    })
}
