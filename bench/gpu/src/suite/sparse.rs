//! sparse kernels of the suite against their CUDA C++ twins (`cuda/suite/sparse.cu`).

use super::stencil3d::{check_both, max_abs_error};
use crate::cases::saxpy::cfg_raw;
use crate::cases::Case;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::PushKernelArg;
use oxide_suite::kernels::sparse as k;
use oxide_suite::sparse as sp;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![
        ("spmv_csr", spmv_csr),
        ("spmv_ell", spmv_ell),
        ("spmv_csr_warp", spmv_csr_warp),
        ("gather_indexed", gather_indexed),
    ]
}

/// Bytes of a CSR SpMV: values and columns, row offsets, `y`, and `x` once.
fn csr_bytes(p: &sp::Spmv) -> f64 {
    (8 * p.a.vals.len() + 4 * p.a.row_ptr.len() + 4 * p.a.rows + 4 * p.x.len()) as f64
}

/// 2^22 x 2^22, 8..=24 entries per row (~2^26 entries, ~520 MiB), thread per row, blocks of 256.
fn spmv_csr(b: &Bench) -> Res<Row> {
    let rows = 1usize << 22;
    let s = &b.stream;
    let p = sp::spmv_problem(1, rows, rows, 8, 24);
    let cfg = sp::spmv_csr_config(&p);
    let (drp, dci, dv, dx) =
        (s.clone_htod(&p.a.row_ptr)?, s.clone_htod(&p.a.col_idx)?, s.clone_htod(&p.a.vals)?, s.clone_htod(&p.x)?);
    let mut dy = s.alloc_zeros::<f32>(rows)?;
    let oxide_ms = b.time(|| Ok(k::launch_spmv_csr_with(s, cfg, &drp, &dci, &dv, &dx, &mut dy)?))?;

    let (_m, f) = b.twin("suite/sparse", "spmv_csr")?;
    let mut ty = s.alloc_zeros::<f32>(rows)?;
    let ri = rows as i32;
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&drp).arg(&dci).arg(&dv).arg(&dx).arg(&mut ty).arg(&ri);
        // SAFETY: the twin's signature is (const unsigned* row_ptr, const unsigned* cols, const float* vals, const float* x, float* y, int rows); row_ptr holds rows + 1 offsets into cols/vals, every column < x's length, y holds rows floats.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = sp::spmv_reference(&p);
    let (got, twin) = (s.clone_dtoh(&dy)?, s.clone_dtoh(&ty)?);
    check_both("spmv_csr", sp::spmv_compare(&p, &got, &want), sp::spmv_compare(&p, &twin, &want))?;
    Ok(Row {
        kernel: "spmv_csr".into(),
        size: format!("2^22 rows; {} entries", p.a.vals.len()),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(csr_bytes(&p)),
        reference: None,
        regs: Some(b.regs("spmv_csr", &f)?),
        max_error: max_abs_error(&got, &want),
    })
}

/// 2^22 x 2^22, 12..=16 entries per row, ELL width 16 (512 MiB of entries), thread per row.
fn spmv_ell(b: &Bench) -> Res<Row> {
    let rows = 1usize << 22;
    let s = &b.stream;
    let p = sp::spmv_problem(2, rows, rows, 12, 16);
    let e = sp::to_ell(&p.a);
    let cfg = sp::spmv_ell_config(&e);
    let (dci, dv, dx) = (s.clone_htod(&e.col_idx)?, s.clone_htod(&e.vals)?, s.clone_htod(&p.x)?);
    let mut dy = s.alloc_zeros::<f32>(rows)?;
    let width = e.width as u32;
    let oxide_ms = b.time(|| Ok(k::launch_spmv_ell_with(s, cfg, &dci, &dv, width, &dx, &mut dy)?))?;

    let (_m, f) = b.twin("suite/sparse", "spmv_ell")?;
    let mut ty = s.alloc_zeros::<f32>(rows)?;
    let (ri, wi) = (rows as i32, e.width as i32);
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&dci).arg(&dv).arg(&dx).arg(&mut ty).arg(&ri).arg(&wi);
        // SAFETY: the twin's signature is (const unsigned* cols, const float* vals, const float* x, float* y, int rows, int width); cols/vals hold width * rows entries, every column < x's length, y holds rows floats.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = sp::spmv_reference(&p);
    let (got, twin) = (s.clone_dtoh(&dy)?, s.clone_dtoh(&ty)?);
    check_both("spmv_ell", sp::spmv_compare(&p, &got, &want), sp::spmv_compare(&p, &twin, &want))?;
    Ok(Row {
        kernel: "spmv_ell".into(),
        size: format!("2^22 rows; width {}", e.width),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes((8 * e.vals.len() + 4 * rows + 4 * p.x.len()) as f64),
        reference: None,
        regs: Some(b.regs("spmv_ell", &f)?),
        max_error: max_abs_error(&got, &want),
    })
}

/// 2^18 x 2^20, 128..=384 entries per row (~2^26 entries), warp per row, blocks of 256.
fn spmv_csr_warp(b: &Bench) -> Res<Row> {
    let rows = 1usize << 18;
    let s = &b.stream;
    let p = sp::spmv_problem(3, rows, 1 << 20, 128, 384);
    let cfg = sp::spmv_csr_warp_config(&p);
    let (drp, dci, dv, dx) =
        (s.clone_htod(&p.a.row_ptr)?, s.clone_htod(&p.a.col_idx)?, s.clone_htod(&p.a.vals)?, s.clone_htod(&p.x)?);
    let mut dy = s.alloc_zeros::<f32>(rows)?;
    let oxide_ms = b.time(|| Ok(k::launch_spmv_csr_warp_with(s, cfg, &drp, &dci, &dv, &dx, &mut dy)?))?;

    let (_m, f) = b.twin("suite/sparse", "spmv_csr_warp")?;
    let mut ty = s.alloc_zeros::<f32>(rows)?;
    let ri = rows as i32;
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&drp).arg(&dci).arg(&dv).arg(&dx).arg(&mut ty).arg(&ri);
        // SAFETY: the twin's signature is (const unsigned* row_ptr, const unsigned* cols, const float* vals, const float* x, float* y, int rows); as spmv_csr, with 32 threads per row.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = sp::spmv_reference(&p);
    let (got, twin) = (s.clone_dtoh(&dy)?, s.clone_dtoh(&ty)?);
    check_both("spmv_csr_warp", sp::spmv_compare(&p, &got, &want), sp::spmv_compare(&p, &twin, &want))?;
    Ok(Row {
        kernel: "spmv_csr_warp".into(),
        size: format!("2^18 rows; {} entries", p.a.vals.len()),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(csr_bytes(&p)),
        reference: None,
        regs: Some(b.regs("spmv_csr_warp", &f)?),
        max_error: max_abs_error(&got, &want),
    })
}

/// 2^26 random indices into 2^26 f32 (256 MiB each of idx, x, y), blocks of 256.
fn gather_indexed(b: &Bench) -> Res<Row> {
    let n = 1usize << 26;
    let s = &b.stream;
    let p = sp::gather_problem(4, n, n);
    let cfg = sp::gather_config(&p);
    let (didx, dx) = (s.clone_htod(&p.idx)?, s.clone_htod(&p.x)?);
    let mut dy = s.alloc_zeros::<f32>(n)?;
    let oxide_ms = b.time(|| Ok(k::launch_gather_indexed_with(s, cfg, &didx, &dx, &mut dy)?))?;

    let (_m, f) = b.twin("suite/sparse", "gather_indexed")?;
    let mut ty = s.alloc_zeros::<f32>(n)?;
    let ni = n as i32;
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&didx).arg(&dx).arg(&mut ty).arg(&ni);
        // SAFETY: the twin's signature is (const unsigned* idx, const float* x, float* y, int n); idx and y hold n values, every index < x's length.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = sp::gather_reference(&p);
    let (got, twin) = (s.clone_dtoh(&dy)?, s.clone_dtoh(&ty)?);
    check_both("gather_indexed", sp::gather_compare(&got, &want), sp::gather_compare(&twin, &want))?;
    Ok(Row {
        kernel: "gather_indexed".into(),
        size: "n = 2^26; x of 2^26 f32".into(),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(3.0 * 4.0 * n as f64),
        reference: None,
        regs: Some(b.regs("gather_indexed", &f)?),
        max_error: 0.0,
    })
}
