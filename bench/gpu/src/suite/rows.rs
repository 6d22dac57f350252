//! row kernels of the suite against their CUDA C++ twins (`cuda/suite/rows.cu`).

use crate::cases::saxpy::cfg_raw;
use crate::cases::Case;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::PushKernelArg;
use oxide_rt::Slice2d;
use oxide_suite::kernels::rows as k;
use oxide_suite::rows::*;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![("layernorm_rows", layernorm), ("matvec_warp", matvec), ("xent_rows", xent)]
}

/// Layer norm of 16384 rows of 4096 columns (256 MiB in, 256 MiB out), a block per row.
fn layernorm(b: &Bench) -> Res<Row> {
    let (rows, cols): (usize, usize) = (1 << 14, 4096);
    let s = &b.stream;
    let p = layernorm_problem(1, rows, cols);
    let cfg = layernorm_config(rows);
    let (dx, dg, db) = (s.clone_htod(&p.x)?, s.clone_htod(&p.gamma)?, s.clone_htod(&p.beta)?);
    let mut dy = s.alloc_zeros::<f32>(rows * cols)?;
    let oxide_ms =
        b.time(|| Ok(k::launch_layernorm_rows_with(s, cfg, &dx, &dg, &db, p.eps, Slice2d::new(&mut dy, cols))?))?;

    let (_m, f) = b.twin("suite/rows", "layernorm_rows")?;
    let mut ty = s.alloc_zeros::<f32>(rows * cols)?;
    let (r32, c32) = (rows as i32, cols as i32);
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&dx).arg(&dg).arg(&db).arg(&p.eps).arg(&mut ty).arg(&r32).arg(&c32);
        // SAFETY: the twin's signature is (const float* x, const float* gamma, const float* beta, float eps, float* y, int rows, int cols); x and y hold rows * cols floats, gamma and beta cols; blockDim.x is its ROW_BLOCK (256).
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = layernorm_reference(&p);
    let got = s.clone_dtoh(&dy)?;
    layernorm_compare(&got, &want).map_err(|e| format!("oxide layernorm_rows differs from the reference: {e}"))?;
    layernorm_compare(&s.clone_dtoh(&ty)?, &want).map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    let max_error = got.iter().zip(&want).map(|(&g, w)| (g as f64 - w.0).abs()).fold(0.0, f64::max);
    Ok(Row {
        kernel: "layernorm_rows".into(),
        size: format!("{rows} x {cols}"),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(2.0 * 4.0 * (rows * cols) as f64),
        reference: None,
        regs: Some(b.regs("layernorm_rows", &f)?),
        max_error,
    })
}

/// y = A x for A of 65536 x 4096 (1 GiB), a warp per row.
fn matvec(b: &Bench) -> Res<Row> {
    let (rows, cols): (usize, usize) = (1 << 16, 4096);
    let s = &b.stream;
    let p = matvec_problem(1, rows, cols);
    let cfg = matvec_config(rows);
    let (da, dx) = (s.clone_htod(&p.a)?, s.clone_htod(&p.x)?);
    let mut dy = s.alloc_zeros::<f32>(rows)?;
    let oxide_ms = b.time(|| Ok(k::launch_matvec_warp_with(s, cfg, &da, &dx, &mut dy)?))?;

    let (_m, f) = b.twin("suite/rows", "matvec_warp")?;
    let mut ty = s.alloc_zeros::<f32>(rows)?;
    let (r32, c32) = (rows as i32, cols as i32);
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&da).arg(&dx).arg(&mut ty).arg(&r32).arg(&c32);
        // SAFETY: the twin's signature is (const float* a, const float* x, float* y, int rows, int cols); a holds rows * cols floats, x cols, y rows.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = matvec_reference(&p);
    let got = s.clone_dtoh(&dy)?;
    matvec_compare(&got, &want, cols).map_err(|e| format!("oxide matvec_warp differs from the reference: {e}"))?;
    matvec_compare(&s.clone_dtoh(&ty)?, &want, cols)
        .map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    let max_error = got.iter().zip(&want).map(|(&g, w)| (g as f64 - w.0).abs()).fold(0.0, f64::max);
    Ok(Row {
        kernel: "matvec_warp".into(),
        size: format!("{rows} x {cols}"),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(4.0 * (rows * cols + cols + rows) as f64),
        reference: None,
        regs: Some(b.regs("matvec_warp", &f)?),
        max_error,
    })
}

/// Softmax cross-entropy of 65536 rows of 2048 logits (512 MiB), a block per row.
fn xent(b: &Bench) -> Res<Row> {
    let (rows, cols): (usize, usize) = (1 << 16, 2048);
    let s = &b.stream;
    let p = xent_problem(1, rows, cols);
    let cfg = xent_config(rows);
    let (dz, dl) = (s.clone_htod(&p.logits)?, s.clone_htod(&p.labels)?);
    let mut dloss = s.alloc_zeros::<f32>(rows)?;
    let oxide_ms = b.time(|| Ok(k::launch_xent_rows_with(s, cfg, &dz, &dl, cols, &mut dloss)?))?;

    let (_m, f) = b.twin("suite/rows", "xent_rows")?;
    let mut tloss = s.alloc_zeros::<f32>(rows)?;
    let (r32, c32) = (rows as i32, cols as i32);
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&dz).arg(&dl).arg(&mut tloss).arg(&r32).arg(&c32);
        // SAFETY: the twin's signature is (const float* logits, const unsigned* labels, float* loss, int rows, int cols); logits holds rows * cols floats, labels rows values < cols, loss rows; blockDim.x is its ROW_BLOCK (256).
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = xent_reference(&p);
    let got = s.clone_dtoh(&dloss)?;
    xent_compare(&got, &want, cols).map_err(|e| format!("oxide xent_rows differs from the reference: {e}"))?;
    xent_compare(&s.clone_dtoh(&tloss)?, &want, cols)
        .map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    let max_error = got.iter().zip(&want).map(|(&g, w)| (g as f64 - w.0).abs()).fold(0.0, f64::max);
    Ok(Row {
        kernel: "xent_rows".into(),
        size: format!("{rows} x {cols}"),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(4.0 * (rows * cols + 2 * rows) as f64),
        reference: None,
        regs: Some(b.regs("xent_rows", &f)?),
        max_error,
    })
}
