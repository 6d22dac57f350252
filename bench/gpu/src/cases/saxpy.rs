//! saxpy, 2^28 elements (1 GiB per array, far beyond L2), block 256, 4 elements per thread.

use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::PushKernelArg;
use oxide_rt::LaunchConfig;

pub fn run(b: &Bench) -> Res<Row> {
    let n: usize = 1 << 28;
    let s = &b.stream;
    let p = saxpy::problem(1, n);
    let (a, x, y) = (p.a, &p.x, &p.y);
    let dx = s.clone_htod(x)?;
    let mut dy = s.clone_htod(y)?;
    let cfg = saxpy::config(n);
    let oxide_ms = b.time(|| Ok(saxpy::kernels::launch_saxpy_with(s, cfg, a, &dx, &mut dy)?))?;

    let (_m, f) = b.twin("saxpy", "saxpy")?;
    let mut ty = s.clone_htod(y)?;
    let n64 = n as u64;
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&a).arg(&dx).arg(&mut ty).arg(&n64);
        // SAFETY: the twin's signature is (float, const float*, float*, unsigned long long).
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    // Check one fresh run of each against the CPU.
    let mut dy = s.clone_htod(y)?;
    saxpy::kernels::launch_saxpy_with(s, cfg, a, &dx, &mut dy)?;
    let got = s.clone_dtoh(&dy)?;
    let want = saxpy::reference(&p);
    let mut ty = s.clone_htod(y)?;
    let mut l = s.launch_builder(&f);
    l.arg(&a).arg(&dx).arg(&mut ty).arg(&n64);
    // SAFETY: as above.
    unsafe { l.launch(cfg_raw(cfg)) }?;
    saxpy::compare(&s.clone_dtoh(&ty)?, &want).map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    saxpy::compare(&got, &want).map_err(|e| format!("oxide saxpy differs from the reference: {e}"))?;
    let max_error = got.iter().zip(&want).map(|(g, w)| (g - w).abs() as f64).fold(0.0, f64::max);
    Ok(Row {
        kernel: "saxpy".into(),
        size: "n = 2^28".into(),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(3.0 * 4.0 * n as f64),
        reference: None,
        regs: None,
        max_error,
    })
}

pub fn cfg_raw(c: LaunchConfig) -> cudarc::driver::LaunchConfig {
    cudarc::driver::LaunchConfig {
        grid_dim: (c.grid.x, c.grid.y, c.grid.z),
        block_dim: (c.block.x, c.block.y, c.block.z),
        shared_mem_bytes: c.shared_mem_bytes,
    }
}
