//! transpose: 16384 x 16384 f32 (1 GiB in, 1 GiB out, far beyond L2), 64x64 tiles, block (64, 8).

use super::saxpy::cfg_raw;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::PushKernelArg;

pub fn run(b: &Bench) -> Res<Row> {
    let (rows, cols) = (transpose::DEFAULT_SIZE, transpose::DEFAULT_SIZE);
    let n = rows * cols;
    let s = &b.stream;
    let p = transpose::problem_dims(1, rows, cols);
    let cfg = transpose::config(rows, cols);
    let (r32, c32) = (rows as u32, cols as u32);
    let din = s.clone_htod(&p.input)?;
    let mut out = s.alloc_zeros::<f32>(n)?;
    let (rows, cols) = (r32 as usize, c32 as usize);
    let oxide_ms = b.time(|| {
        Ok(transpose::kernels::launch_transpose_with(
            s,
            cfg,
            oxide_rt::Matrix::new(&din, rows, cols),
            oxide_rt::Slice2d::new(&mut out, rows),
        )?)
    })?;

    let (_m, f) = b.twin("transpose", "transpose")?;
    let mut tout = s.alloc_zeros::<f32>(n)?;
    let n64 = n as u64;
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&r32).arg(&c32).arg(&din).arg(&n64).arg(&mut tout).arg(&n64);
        // SAFETY: the twin's signature is (unsigned rows, unsigned cols, const float* in, u64 in_len, float* out, u64 out_len); both buffers hold rows * cols floats.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    // The last timed runs of both, exact against the CPU transpose.
    let want = transpose::reference(&p);
    let got: Vec<f32> = s.clone_dtoh(&out)?;
    transpose::compare(&got, &want).map_err(|e| format!("oxide transpose differs from the reference: {e}"))?;
    transpose::compare(&s.clone_dtoh(&tout)?, &want)
        .map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    Ok(Row {
        kernel: "transpose".into(),
        size: format!("{rows} x {cols} f32"),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(2.0 * 4.0 * n as f64),
        reference: None,
        regs: None,
        max_error: 0.0,
    })
}
