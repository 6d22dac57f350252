//! atomic kernels of the suite against their CUDA C++ twins (`cuda/suite/atomics.cu`).

use crate::cases::saxpy::cfg_raw;
use crate::cases::Case;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::{CudaSlice, PushKernelArg};
use oxide_suite::atomics::*;
use oxide_suite::kernels::atomics as k;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![("scatter_add", scatter), ("histogram_keys", histogram), ("compact_keys", compact)]
}

/// Float scatter-add of 2^25 weighted values into 1024 bins (256 MiB read), device-scope
/// atomics. The timed runs of both kernels keep adding into the same bins; fresh zeroed bins
/// are checked.
fn scatter(b: &Bench) -> Res<Row> {
    let (n, bins): (usize, usize) = (1 << 25, 1024);
    let s = &b.stream;
    let p = scatter_problem(1, n, bins);
    let cfg = scatter_config(n);
    let (dx, dw) = (s.clone_htod(&p.x)?, s.clone_htod(&p.w)?);
    let mut dout = s.alloc_zeros::<f32>(bins)?;
    let oxide_ms = b.time(|| Ok(k::launch_scatter_add_with(s, cfg, &dx, &dw, p.lo, p.inv_width, &mut dout)?))?;

    let (_m, f) = b.twin("suite/atomics", "scatter_add")?;
    let (n32, b32) = (n as i32, bins as i32);
    let twin = |out: &mut CudaSlice<f32>| -> Res<()> {
        let mut l = s.launch_builder(&f);
        l.arg(&dx).arg(&dw).arg(&n32).arg(&p.lo).arg(&p.inv_width).arg(out).arg(&b32);
        // SAFETY: the twin's signature is (const float* x, const float* w, int n, float lo, float inv_width, float* out, int bins); x and w hold n floats, out bins.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    };
    // Both add into the same bins: where the bins lie decides which L2 slices serve the hot
    // ones, so separate buffers would time the allocations too (the ratio swung from 1.00 to
    // 1.12 between runs of the same PTX).
    let cuda_ms = b.time(|| twin(&mut dout))?;

    let want = scatter_reference(&p);
    let mut dout = s.alloc_zeros::<f32>(bins)?;
    k::launch_scatter_add_with(s, cfg, &dx, &dw, p.lo, p.inv_width, &mut dout)?;
    let got = s.clone_dtoh(&dout)?;
    scatter_compare(&got, &want).map_err(|e| format!("oxide scatter_add differs from the reference: {e}"))?;
    let mut tout = s.alloc_zeros::<f32>(bins)?;
    twin(&mut tout)?;
    scatter_compare(&s.clone_dtoh(&tout)?, &want).map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    let max_error = got.iter().zip(&want).map(|(&g, w)| (g as f64 - w.0).abs()).fold(0.0, f64::max);
    Ok(Row {
        kernel: "scatter_add".into(),
        size: format!("n = 2^25; {bins} bins"),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(2.0 * 4.0 * n as f64),
        reference: None,
        regs: Some(b.regs("scatter_add", &f)?),
        max_error,
    })
}

/// Histogram of 2^25 u32 keys (128 MiB) into 1024 bins with device-scope atomics, exact.
fn histogram(b: &Bench) -> Res<Row> {
    let (n, bins): (usize, usize) = (1 << 25, 1024);
    let s = &b.stream;
    let p = histogram_problem(1, n, bins);
    let cfg = histogram_config(n);
    let dkeys = s.clone_htod(&p.keys)?;
    let mut dbins = s.alloc_zeros::<u32>(bins)?;
    let oxide_ms = b.time(|| Ok(k::launch_histogram_keys_with(s, cfg, &dkeys, &mut dbins)?))?;

    let (_m, f) = b.twin("suite/atomics", "histogram_keys")?;
    let (n32, b32) = (n as i32, bins as u32);
    let twin = |out: &mut CudaSlice<u32>| -> Res<()> {
        let mut l = s.launch_builder(&f);
        l.arg(&dkeys).arg(&n32).arg(out).arg(&b32);
        // SAFETY: the twin's signature is (const unsigned* keys, int n, unsigned* bins, unsigned nbins); keys holds n values, bins nbins.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    };
    // The same bins for both, as in `scatter`.
    let cuda_ms = b.time(|| twin(&mut dbins))?;

    let want = histogram_reference(&p);
    let mut dbins = s.alloc_zeros::<u32>(bins)?;
    k::launch_histogram_keys_with(s, cfg, &dkeys, &mut dbins)?;
    histogram_compare(&s.clone_dtoh(&dbins)?, &want)
        .map_err(|e| format!("oxide histogram_keys differs from the reference: {e}"))?;
    let mut tbins = s.alloc_zeros::<u32>(bins)?;
    twin(&mut tbins)?;
    histogram_compare(&s.clone_dtoh(&tbins)?, &want)
        .map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    Ok(Row {
        kernel: "histogram_keys".into(),
        size: format!("n = 2^25; {bins} bins"),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(4.0 * n as f64),
        reference: None,
        regs: Some(b.regs("histogram_keys", &f)?),
        max_error: 0.0,
    })
}

/// Stream compaction of 2^25 random u32 keys (about half kept) by claims on a u64 counter:
/// `DisjointAppend` against the twin's `out[atomicAdd(count, 1)] = key`. Each timed run resets
/// the counter first (both sides); the kept keys are checked as a sorted set.
fn compact(b: &Bench) -> Res<Row> {
    let n: usize = 1 << 25;
    let s = &b.stream;
    let p = compact_problem(1, n);
    let cfg = compact_config(n);
    let dkeys = s.clone_htod(&p.keys)?;
    let mut out = s.alloc_zeros::<u32>(n)?;
    let mut count = s.alloc_zeros::<u64>(1)?;
    let oxide = |out: &mut CudaSlice<u32>, count: &mut CudaSlice<u64>| -> Res<()> {
        s.memset_zeros(count)?;
        Ok(k::launch_compact_keys_with(s, cfg, &dkeys, p.threshold, oxide_rt::Append::new(out, count))?)
    };
    let oxide_ms = b.time(|| oxide(&mut out, &mut count))?;

    let (_m, f) = b.twin("suite/atomics", "compact_keys")?;
    let (n32, cap) = (n as i32, n as u64);
    let twin = |out: &mut CudaSlice<u32>, count: &mut CudaSlice<u64>| -> Res<()> {
        s.memset_zeros(count)?;
        let mut l = s.launch_builder(&f);
        l.arg(&dkeys).arg(&n32).arg(&p.threshold).arg(out).arg(&cap).arg(count);
        // SAFETY: the twin's signature is (const unsigned* keys, int n, unsigned threshold, unsigned* out, u64 cap, u64* count); keys and out hold n values, count one.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    };
    let (mut tout, mut tcount) = (s.alloc_zeros::<u32>(n)?, s.alloc_zeros::<u64>(1)?);
    let cuda_ms = b.time(|| twin(&mut tout, &mut tcount))?;

    let want = compact_reference(&p);
    oxide(&mut out, &mut count)?;
    compact_compare(&s.clone_dtoh(&out)?, s.clone_dtoh(&count)?[0], &want)
        .map_err(|e| format!("oxide compact_keys differs from the reference: {e}"))?;
    twin(&mut tout, &mut tcount)?;
    compact_compare(&s.clone_dtoh(&tout)?, s.clone_dtoh(&tcount)?[0], &want)
        .map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    Ok(Row {
        kernel: "compact_keys".into(),
        size: "n = 2^25 u32; half kept".into(),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(4.0 * (n + want.len()) as f64),
        reference: None,
        regs: Some(b.regs("compact_keys", &f)?),
        max_error: 0.0,
    })
}
