//! math kernels of the suite against their CUDA C++ twins (`cuda/suite/math.cu`).

use crate::cases::saxpy::cfg_raw;
use crate::cases::Case;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::PushKernelArg;
use oxide_rt::Slice2d;
use oxide_suite::kernels::math as k;
use oxide_suite::math::*;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![
        ("mandelbrot", mandelbrot),
        ("transcend_f32", transcend_f32),
        ("transcend_f64", transcend_f64),
        ("bits_mix", bits_mix),
    ]
}

/// Fraction of pixels whose escape time may differ from the f32 reference on the GPU (see
/// `mandel_compare`: the compilers contract different multiply-adds near the set's boundary).
const MANDEL_MISMATCH: f64 = 0.02;

/// Mandelbrot, 4096 x 4096 pixels, at most 256 iterations, 32 x 8 blocks.
fn mandelbrot(b: &Bench) -> Res<Row> {
    let (w, h) = (4096usize, 4096usize);
    let s = &b.stream;
    let p = mandel_problem(1, w, h, 256);
    let cfg = mandel_config(w, h);
    let mut dout = s.alloc_zeros::<u32>(w * h)?;
    let oxide_ms =
        b.time(|| Ok(k::launch_mandelbrot_with(s, cfg, p.x0, p.y0, p.step, p.max_iter, Slice2d::new(&mut dout, w))?))?;

    let (_m, f) = b.twin("suite/math", "mandelbrot")?;
    let mut tout = s.alloc_zeros::<u32>(w * h)?;
    let (w32, h32) = (w as i32, h as i32);
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&p.x0).arg(&p.y0).arg(&p.step).arg(&p.max_iter).arg(&w32).arg(&h32).arg(&mut tout);
        // SAFETY: the twin's signature is (float x0, float y0, float step, unsigned max_iter, int width, int height, unsigned* out); out holds width * height values.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = mandel_reference(&p);
    mandel_compare(&s.clone_dtoh(&dout)?, &want, MANDEL_MISMATCH)
        .map_err(|e| format!("oxide mandelbrot differs from the reference: {e}"))?;
    mandel_compare(&s.clone_dtoh(&tout)?, &want, MANDEL_MISMATCH)
        .map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    let iterations: f64 = want.iter().map(|&n| n as f64).sum();
    Ok(Row {
        kernel: "mandelbrot".into(),
        size: format!("{w} x {h}; 256 iterations"),
        oxide_ms,
        cuda_ms,
        // 7 flops per iteration (3 products, 4 sums), taking the reference's counts.
        work: Work::Flops(7.0 * iterations),
        reference: None,
        regs: Some(b.regs("mandelbrot", &f)?),
        max_error: 0.0,
    })
}

/// The f32 map over 2^26 values (256 MiB in, 256 MiB out); checked on every 61st value.
fn transcend_f32(b: &Bench) -> Res<Row> {
    let n: usize = 1 << 26;
    let s = &b.stream;
    let x = transcend_problem_f32(1, n);
    let cfg = transcend_config(n);
    let dx = s.clone_htod(&x)?;
    let mut dy = s.alloc_zeros::<f32>(n)?;
    let oxide_ms = b.time(|| Ok(k::launch_transcend_f32_with(s, cfg, &dx, &mut dy)?))?;

    let (_m, f) = b.twin("suite/math", "transcend_f32")?;
    let mut ty = s.alloc_zeros::<f32>(n)?;
    let n32 = n as i32;
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&dx).arg(&mut ty).arg(&n32);
        // SAFETY: the twin's signature is (const float* x, float* y, int n); both buffers hold n floats.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let step = 61;
    let want = transcend_reference(x.iter().step_by(step).map(|&v| v as f64));
    let pick = |v: Vec<f32>| v.into_iter().step_by(step).map(f64::from).collect::<Vec<f64>>();
    let got = pick(s.clone_dtoh(&dy)?);
    transcend_compare(&got, &want, U_F32)
        .map_err(|e| format!("oxide transcend_f32 differs from the reference: {e}"))?;
    transcend_compare(&pick(s.clone_dtoh(&ty)?), &want, U_F32)
        .map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    let max_error = got.iter().zip(&want).map(|(g, w)| (g - w.0).abs()).fold(0.0, f64::max);
    Ok(Row {
        kernel: "transcend_f32".into(),
        size: "n = 2^26".into(),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(2.0 * 4.0 * n as f64),
        reference: None,
        regs: Some(b.regs("transcend_f32", &f)?),
        max_error,
    })
}

/// The f64 map over 2^24 values (128 MiB in, 128 MiB out); checked on every 17th value.
fn transcend_f64(b: &Bench) -> Res<Row> {
    let n: usize = 1 << 24;
    let s = &b.stream;
    let x = transcend_problem_f64(1, n);
    let cfg = transcend_config(n);
    let dx = s.clone_htod(&x)?;
    let mut dy = s.alloc_zeros::<f64>(n)?;
    let oxide_ms = b.time(|| Ok(k::launch_transcend_f64_with(s, cfg, &dx, &mut dy)?))?;

    let (_m, f) = b.twin("suite/math", "transcend_f64")?;
    let mut ty = s.alloc_zeros::<f64>(n)?;
    let n32 = n as i32;
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&dx).arg(&mut ty).arg(&n32);
        // SAFETY: the twin's signature is (const double* x, double* y, int n); both buffers hold n doubles.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let step = 17;
    let want = transcend_reference(x.iter().step_by(step).copied());
    let pick = |v: Vec<f64>| v.into_iter().step_by(step).collect::<Vec<f64>>();
    let got = pick(s.clone_dtoh(&dy)?);
    transcend_compare(&got, &want, U_F64)
        .map_err(|e| format!("oxide transcend_f64 differs from the reference: {e}"))?;
    transcend_compare(&pick(s.clone_dtoh(&ty)?), &want, U_F64)
        .map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    let max_error = got.iter().zip(&want).map(|(g, w)| (g - w.0).abs()).fold(0.0, f64::max);
    Ok(Row {
        kernel: "transcend_f64".into(),
        size: "n = 2^24".into(),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(2.0 * 8.0 * n as f64),
        reference: None,
        regs: Some(b.regs("transcend_f64", &f)?),
        max_error,
    })
}

/// The integer hash over 2^26 keys (256 MiB in, 256 MiB out), exact.
fn bits_mix(b: &Bench) -> Res<Row> {
    let n: usize = 1 << 26;
    let s = &b.stream;
    let p = bits_problem(1, n);
    let cfg = bits_config(n);
    let dkeys = s.clone_htod(&p.keys)?;
    let mut dout = s.alloc_zeros::<u32>(n)?;
    let oxide_ms = b.time(|| Ok(k::launch_bits_mix_with(s, cfg, &dkeys, p.seed, &mut dout)?))?;

    let (_m, f) = b.twin("suite/math", "bits_mix")?;
    let mut tout = s.alloc_zeros::<u32>(n)?;
    let n32 = n as i32;
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&dkeys).arg(&p.seed).arg(&mut tout).arg(&n32);
        // SAFETY: the twin's signature is (const unsigned* keys, unsigned seed, unsigned* out, int n); both buffers hold n values.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = bits_reference(&p);
    bits_compare(&s.clone_dtoh(&dout)?, &want)
        .map_err(|e| format!("oxide bits_mix differs from the reference: {e}"))?;
    bits_compare(&s.clone_dtoh(&tout)?, &want).map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    Ok(Row {
        kernel: "bits_mix".into(),
        size: "n = 2^26".into(),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(2.0 * 4.0 * n as f64),
        reference: None,
        regs: Some(b.regs("bits_mix", &f)?),
        max_error: 0.0,
    })
}
