//! 5-point stencil, 16384 x 16384 f32 (1 GiB in, 1 GiB out, far beyond L2), 32x8 blocks with a
//! shared tile and halo.

use super::saxpy::cfg_raw;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::PushKernelArg;

pub fn run(b: &Bench) -> Res<Row> {
    let side = stencil::BENCH_SIDE;
    let n = side * side;
    let s = &b.stream;
    let p = stencil::problem_with(1, side, side);
    let (r32, c32) = (side as u32, side as u32);
    let [wc, wn, ws, ww, we] = p.w;
    let cfg = stencil::config(r32, c32);
    let din = s.clone_htod(&p.input)?;
    let mut dout = s.alloc_zeros::<f32>(n)?;
    let oxide_ms = b.time(|| {
        Ok(stencil::kernels::launch_stencil5_with(
            s,
            cfg,
            &din,
            r32,
            c32,
            wc,
            wn,
            ws,
            ww,
            we,
            oxide_rt::Slice2d::new(&mut dout, c32 as usize),
        )?)
    })?;

    let (_m, f) = b.twin("stencil", "stencil5")?;
    let mut tout = s.alloc_zeros::<f32>(n)?;
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&din).arg(&r32).arg(&c32).arg(&wc).arg(&wn).arg(&ws).arg(&ww).arg(&we).arg(&mut tout);
        // SAFETY: the twin's signature is (const float*, unsigned, unsigned, float x5, float*), both buffers hold n floats.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    // Both results must equal the reference bit for bit.
    let want = stencil::reference(&p);
    let got = s.clone_dtoh(&dout)?;
    stencil::compare(&got, &want).map_err(|e| format!("oxide stencil differs from the reference: {e}"))?;
    stencil::compare(&s.clone_dtoh(&tout)?, &want).map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    let max_error = got.iter().zip(&want).map(|(g, w)| (g - w).abs() as f64).fold(0.0, f64::max);
    Ok(Row {
        kernel: "stencil".into(),
        size: format!("{side} x {side}"),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(2.0 * 4.0 * n as f64),
        reference: None,
        regs: None,
        max_error,
    })
}
