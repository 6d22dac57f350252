//! softmax, 65536 rows x 4096 columns (1 GiB in, 1 GiB out, far beyond L2), one block of 256
//! threads per row (the row kept in registers).

use super::saxpy::cfg_raw;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::PushKernelArg;

pub fn run(b: &Bench) -> Res<Row> {
    let (rows, cols) = (softmax::BENCH_ROWS, softmax::BENCH_COLS);
    let n = rows * cols;
    let s = &b.stream;
    let p = softmax::problem_with(1, rows, cols);
    let (r32, c32) = (rows as u32, cols as u32);
    let cfg = softmax::config(r32);
    let dx = s.clone_htod(&p.x)?;
    let mut dy = s.alloc_zeros::<f32>(n)?;
    let oxide_ms =
        b.time(|| Ok(softmax::kernels::launch_softmax_rows_with(s, cfg, &dx, oxide_rt::Slice2d::new(&mut dy, cols))?))?;

    let (_m, f) = b.twin("softmax", "softmax_rows")?;
    let mut ty = s.alloc_zeros::<f32>(n)?;
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&dx).arg(&r32).arg(&c32).arg(&mut ty);
        // SAFETY: the twin's signature is (const float*, unsigned, unsigned, float*), y has n floats.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    // Both results (of the last timed runs) against the f64 reference.
    let want = softmax::reference(&p);
    let got: Vec<f32> = s.clone_dtoh(&dy)?;
    softmax::compare(&got, &want).map_err(|e| format!("oxide softmax differs from the reference: {e}"))?;
    softmax::compare(&s.clone_dtoh(&ty)?, &want).map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    let max_error = got.iter().zip(&want).map(|(g, w)| (g - w).abs() as f64).fold(0.0, f64::max);
    Ok(Row {
        kernel: "softmax".into(),
        size: format!("{rows} x {cols} (x read from DRAM once)"),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(2.0 * 4.0 * n as f64),
        reference: None,
        regs: None,
        max_error,
    })
}
