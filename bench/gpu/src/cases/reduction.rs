//! reduction: sum of 2^28 f32s (1 GiB, far beyond L2), block 256, at most 1024 blocks.

use super::saxpy::cfg_raw;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::PushKernelArg;

pub fn run(b: &Bench) -> Res<Row> {
    let n: usize = 1 << 28;
    let s = &b.stream;
    let p = reduction::problem(1, n);
    let cfg = reduction::config_for(n, reduction::BLOCK);
    let dx = s.clone_htod(&p.x)?;
    // Timed runs keep adding into the same cell (an atomic add either way); the check below
    // uses a fresh, zeroed one.
    let mut out = s.alloc_zeros::<f32>(1)?;
    let oxide_ms = b.time(|| Ok(reduction::kernels::launch_reduce_sum_with(s, cfg, &dx, &mut out)?))?;

    let (_m, f) = b.twin("reduction", "reduce_sum")?;
    let mut tout = s.alloc_zeros::<f32>(1)?;
    let (n64, one) = (n as u64, 1u64);
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&dx).arg(&n64).arg(&mut tout).arg(&one);
        // SAFETY: the twin's signature is (const float*, u64 n, float* out, u64 out_len); x has n floats, out one.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let want = reduction::reference(&p);
    let mut out = s.alloc_zeros::<f32>(1)?;
    reduction::kernels::launch_reduce_sum_with(s, cfg, &dx, &mut out)?;
    let sum = s.clone_dtoh(&out)?.into_iter().next().unwrap_or(f32::NAN) as f64;
    let got = reduction::Output { sum, tolerance: 0.0 };
    reduction::compare(&got, &want).map_err(|e| format!("oxide reduction differs from the reference: {e}"))?;
    let mut tout = s.alloc_zeros::<f32>(1)?;
    let mut l = s.launch_builder(&f);
    l.arg(&dx).arg(&n64).arg(&mut tout).arg(&one);
    // SAFETY: as above.
    unsafe { l.launch(cfg_raw(cfg)) }?;
    let tsum = s.clone_dtoh(&tout)?[0] as f64;
    reduction::compare(&reduction::Output { sum: tsum, tolerance: 0.0 }, &want)
        .map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    Ok(Row {
        kernel: "reduction".into(),
        size: "n = 2^28 f32".into(),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(4.0 * n as f64),
        reference: None,
        regs: None,
        max_error: (sum - want.sum).abs(),
    })
}
