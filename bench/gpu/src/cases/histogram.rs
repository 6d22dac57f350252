//! histogram: 256 bins over 2^30 bytes (1 GiB, far beyond L2), block 256, at most 1024 blocks.

use super::saxpy::cfg_raw;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::PushKernelArg;

pub fn run(b: &Bench) -> Res<Row> {
    let n: usize = 1 << 30;
    let s = &b.stream;
    let p = histogram::problem(1, n);
    let words = histogram::pack(&p.bytes);
    let cfg = histogram::config_for(n, histogram::BLOCK);
    let dw = s.clone_htod(&words)?;
    let mut hist = s.alloc_zeros::<u32>(histogram::BINS)?;
    let oxide_ms = b.time(|| Ok(histogram::kernels::launch_histogram256_with(s, cfg, &dw, n, &mut hist)?))?;

    let (_m, f) = b.twin("histogram", "histogram256")?;
    let (wlen, n64, bins) = (words.len() as u64, n as u64, histogram::BINS as u64);
    let twin = |out: &mut cudarc::driver::CudaSlice<u32>| -> Res<()> {
        let mut l = s.launch_builder(&f);
        l.arg(&dw).arg(&wlen).arg(&n64).arg(out).arg(&bins);
        // SAFETY: the twin's signature is (const unsigned* words, u64 words_len, u64 n, unsigned* hist, u64 hist_len); words holds ceil(n / 4) words, hist 256 bins.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    };
    let mut thist = s.alloc_zeros::<u32>(histogram::BINS)?;
    let cuda_ms = b.time(|| twin(&mut thist))?;

    // Fresh runs of both, exact against the CPU count.
    let want = histogram::reference(&p);
    let mut hist = s.alloc_zeros::<u32>(histogram::BINS)?;
    histogram::kernels::launch_histogram256_with(s, cfg, &dw, n, &mut hist)?;
    let got = s.clone_dtoh(&hist)?;
    histogram::compare(&got, &want).map_err(|e| format!("oxide histogram differs from the reference: {e}"))?;
    let mut thist = s.alloc_zeros::<u32>(histogram::BINS)?;
    twin(&mut thist)?;
    histogram::compare(&s.clone_dtoh(&thist)?, &want)
        .map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    Ok(Row {
        kernel: "histogram".into(),
        size: "2^30 bytes, 256 bins".into(),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(n as f64),
        reference: None,
        regs: None,
        max_error: 0.0,
    })
}
