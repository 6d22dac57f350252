//! stencil3d kernels of the suite against their CUDA C++ twins (`cuda/suite/stencil3d.cu`).

use crate::cases::saxpy::cfg_raw;
use crate::cases::Case;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::PushKernelArg;
use oxide_suite::kernels::stencil3d as k;
use oxide_suite::stencil3d as st;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![("stencil7_3d", stencil7_3d), ("box27_3d", box27_3d)]
}

/// The largest `|got - want|` (for the report).
pub(super) fn max_abs_error(got: &[f32], want: &[f32]) -> f64 {
    got.iter().zip(want).map(|(g, w)| (g - w).abs() as f64).fold(0.0, f64::max)
}

/// Both results checked against the reference: `Err` names which differs.
pub(super) fn check_both(kernel: &str, oxide: Result<(), String>, twin: Result<(), String>) -> Res<()> {
    oxide.map_err(|e| format!("oxide {kernel} differs from the CPU reference: {e}"))?;
    twin.map_err(|e| format!("CUDA twin {kernel} differs from the CPU reference: {e}"))?;
    Ok(())
}

/// 512^3 f32 (512 MiB in, 512 MiB out), 32x4x2 blocks.
fn stencil7_3d(b: &Bench) -> Res<Row> {
    let (nx, ny, nz) = (512usize, 512usize, 512usize);
    let s = &b.stream;
    let p = st::stencil7_problem(1, nx, ny, nz);
    let n = p.input.len();
    let cfg = st::stencil7_config(&p);
    let din = s.clone_htod(&p.input)?;
    let mut dout = s.alloc_zeros::<f32>(n)?;
    let nz32 = nz as u32;
    let oxide_ms = b.time(|| {
        Ok(k::launch_stencil7_3d_with(s, cfg, &din, nz32, p.c0, p.c1, oxide_rt::Slice3d::new(&mut dout, nx, ny))?)
    })?;

    let (_m, f) = b.twin("suite/stencil3d", "stencil7_3d")?;
    let mut tout = s.alloc_zeros::<f32>(n)?;
    let (nxi, nyi, nzi) = (nx as i32, ny as i32, nz as i32);
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&din).arg(&mut tout).arg(&nxi).arg(&nyi).arg(&nzi).arg(&p.c0).arg(&p.c1);
        // SAFETY: the twin's signature is (const float*, float*, int nx, int ny, int nz, float c0, float c1); both buffers hold nx * ny * nz floats.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = st::stencil7_reference(&p);
    let (got, twin) = (s.clone_dtoh(&dout)?, s.clone_dtoh(&tout)?);
    check_both("stencil7_3d", st::stencil7_compare(&got, &want), st::stencil7_compare(&twin, &want))?;
    Ok(Row {
        kernel: "stencil7_3d".into(),
        size: format!("{nx} x {ny} x {nz} f32"),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(2.0 * 4.0 * n as f64),
        reference: None,
        regs: Some(b.regs("stencil7_3d", &f)?),
        max_error: max_abs_error(&got, &want),
    })
}

/// 512 x 512 x 256 f32 (256 MiB in, 256 MiB out), 32x4x2 blocks.
fn box27_3d(b: &Bench) -> Res<Row> {
    let (nx, ny, nz) = (512usize, 512usize, 256usize);
    let s = &b.stream;
    let p = st::box27_problem(2, nx, ny, nz);
    let n = p.input.len();
    let cfg = st::box27_config(&p);
    let din = s.clone_htod(&p.input)?;
    let mut dout = s.alloc_zeros::<f32>(n)?;
    let nz32 = nz as u32;
    let oxide_ms =
        b.time(|| Ok(k::launch_box27_3d_with(s, cfg, &din, nz32, oxide_rt::Slice3d::new(&mut dout, nx, ny))?))?;

    let (_m, f) = b.twin("suite/stencil3d", "box27_3d")?;
    let mut tout = s.alloc_zeros::<f32>(n)?;
    let (nxi, nyi, nzi) = (nx as i32, ny as i32, nz as i32);
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&din).arg(&mut tout).arg(&nxi).arg(&nyi).arg(&nzi);
        // SAFETY: the twin's signature is (const float*, float*, int nx, int ny, int nz); both buffers hold nx * ny * nz floats.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = st::box27_reference(&p);
    let (got, twin) = (s.clone_dtoh(&dout)?, s.clone_dtoh(&tout)?);
    check_both("box27_3d", st::box27_compare(&got, &want), st::box27_compare(&twin, &want))?;
    Ok(Row {
        kernel: "box27_3d".into(),
        size: format!("{nx} x {ny} x {nz} f32"),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(2.0 * 4.0 * n as f64),
        reference: None,
        regs: Some(b.regs("box27_3d", &f)?),
        max_error: max_abs_error(&got, &want),
    })
}
