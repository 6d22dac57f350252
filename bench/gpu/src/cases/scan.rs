//! Inclusive u32 scan of 2^28 elements (1 GiB in, 1 GiB out, far beyond L2): reduce-then-scan,
//! 1024-thread blocks, three levels, five launches per run (the same for the twin).

use super::saxpy::cfg_raw;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::{CudaSlice, PushKernelArg};
use scan::Step;

pub fn run(b: &Bench) -> Res<Row> {
    let n = scan::DEFAULT_SIZE;
    let s = &b.stream;
    let p = scan::problem(1, n);
    let dx = s.clone_htod(&p.x)?;
    let mut plan = scan::GpuScan::new(s, n)?;
    let oxide_ms = b.time(|| Ok(plan.launch(s, &dx)?))?;

    let (_m, totals) = b.twin("scan", "scan_block_totals")?;
    let (_m2, blocks) = b.twin("scan", "scan_blocks")?;
    let sizes = scan::levels(n);
    let mut outs: Vec<CudaSlice<u32>> =
        sizes.iter().map(|&m| s.alloc_zeros::<u32>(m.max(1))).collect::<Result<_, _>>()?;
    let dummy = s.alloc_zeros::<u32>(1)?;
    let schedule = scan::schedule(n);
    let cuda_ms = b.time(|| {
        for &(step, k) in &schedule {
            let (below, rest) = outs.split_at_mut(k);
            let (cur, above) = rest.split_at_mut(1);
            let input = if k == 0 { &dx } else { &below[k - 1] };
            let (stride, len) = (scan::stride(k) as u64, sizes[k] as u64);
            let cfg = cfg_raw(scan::config(sizes[k]));
            match step {
                Step::Totals => {
                    let mut l = s.launch_builder(&totals);
                    l.arg(input).arg(&stride).arg(&len).arg(&mut cur[0]).arg(&len);
                    // SAFETY: (const unsigned*, u64, u64, unsigned*, u64); the input holds len * stride elements, the output len.
                    unsafe { l.launch(cfg) }?;
                }
                Step::Scan => {
                    let offsets = above.first().unwrap_or(&dummy);
                    let mut l = s.launch_builder(&blocks);
                    l.arg(input).arg(&stride).arg(&len).arg(offsets).arg(&mut cur[0]).arg(&len);
                    // SAFETY: (const unsigned*, u64, u64, const unsigned*, unsigned*, u64), as above; offsets holds one scanned total per full block below.
                    unsafe { l.launch(cfg) }?;
                }
            }
        }
        Ok(())
    })?;

    let want = scan::reference(&p);
    let got = s.clone_dtoh(&plan.outs[0])?;
    scan::compare(&got, &want).map_err(|e| format!("oxide scan differs from the reference: {e}"))?;
    scan::compare(&s.clone_dtoh(&outs[0])?, &want).map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    let max_error = got.iter().zip(&want).filter(|(g, w)| g != w).count() as f64;
    Ok(Row {
        kernel: "scan".into(),
        size: "n = 2^28 u32 (x read twice)".into(),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(3.0 * 4.0 * n as f64),
        reference: None,
        regs: None,
        max_error,
    })
}
