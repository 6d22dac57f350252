//! network kernels of the suite against their CUDA C++ twins (`cuda/suite/networks.cu`).

use crate::cases::saxpy::cfg_raw;
use crate::cases::Case;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::{CudaSlice, PushKernelArg};
use oxide_rt::Pairs;
use oxide_suite::kernels::networks as k;
use oxide_suite::networks::*;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![("bitonic_sort", bitonic), ("fft_radix2", fft)]
}

/// A full bitonic sort of 2^22 u32 keys: 253 step launches, plus (in each timed run, for both)
/// a 16 MiB device copy restoring the unsorted keys first.
fn bitonic(b: &Bench) -> Res<Row> {
    let n: usize = 1 << 22;
    let s = &b.stream;
    let keys = bitonic_problem(1, n);
    let cfg = bitonic_config(n);
    let steps = bitonic_steps(n);
    let dkeys = s.clone_htod(&keys)?;
    let mut work = s.alloc_zeros::<u32>(n)?;
    let oxide_sort = |work: &mut CudaSlice<u32>| -> Res<()> {
        s.memcpy_dtod(&dkeys, work)?;
        for &(kk, j) in &steps {
            k::launch_bitonic_step_with(s, cfg, kk, Pairs::new(work, j))?;
        }
        Ok(())
    };
    let oxide_ms = b.time(|| oxide_sort(&mut work))?;

    let (_m, f) = b.twin("suite/networks", "bitonic_step")?;
    let n32 = n as u32;
    let twin_sort = |work: &mut CudaSlice<u32>| -> Res<()> {
        s.memcpy_dtod(&dkeys, work)?;
        for &(kk, j) in &steps {
            let j32 = j as u32;
            let mut l = s.launch_builder(&f);
            l.arg(&mut *work).arg(&j32).arg(&kk).arg(&n32);
            // SAFETY: the twin's signature is (unsigned* keys, unsigned j, unsigned k, unsigned n); keys holds n values.
            unsafe { l.launch(cfg_raw(cfg)) }?;
        }
        Ok(())
    };
    let mut twork = s.alloc_zeros::<u32>(n)?;
    let cuda_ms = b.time(|| twin_sort(&mut twork))?;

    let want = bitonic_reference(&keys);
    oxide_sort(&mut work)?;
    bitonic_compare(&s.clone_dtoh(&work)?, &want)
        .map_err(|e| format!("oxide bitonic sort differs from the reference: {e}"))?;
    twin_sort(&mut twork)?;
    bitonic_compare(&s.clone_dtoh(&twork)?, &want).map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    Ok(Row {
        kernel: "bitonic_sort".into(),
        size: format!("2^22 u32 keys; {} steps", steps.len()),
        oxide_ms,
        cuda_ms,
        // Each step reads and writes every key (the first time through).
        work: Work::Bytes(steps.len() as f64 * 2.0 * 4.0 * n as f64),
        reference: None,
        regs: Some(b.regs("bitonic_step", &f)?),
        max_error: 0.0,
    })
}

/// All 10 stages of 32768 FFTs of 1024 complex f32 points (256 MiB, read and written per
/// stage). The timed runs transform the same data again and again (its values grow, and
/// overflow after a dozen transforms, which costs the GPU nothing); a fresh copy is checked,
/// its first 64 FFTs against the f64 reference.
fn fft(b: &Bench) -> Res<Row> {
    let (n, batch): (usize, usize) = (1024, 1 << 15);
    let len = n * batch;
    let s = &b.stream;
    let p = fft_problem(1, n, batch);
    let cfg = fft_config(len);
    let halves = fft_halves(n);
    let dtw = s.clone_htod(&p.twiddles)?;
    let oxide_fft = |data: &mut CudaSlice<[f32; 2]>| -> Res<()> {
        for &h in &halves {
            k::launch_fft_stage_with(s, cfg, &dtw, Pairs::new(data, h))?;
        }
        Ok(())
    };
    let mut ddata = s.clone_htod(&p.data)?;
    let oxide_ms = b.time(|| oxide_fft(&mut ddata))?;

    let (_m, f) = b.twin("suite/networks", "fft_stage")?;
    let (n32, half32) = (n as i32, (len / 2) as i32);
    let twin_fft = |data: &mut CudaSlice<[f32; 2]>| -> Res<()> {
        for &h in &halves {
            let h32 = h as i32;
            let mut l = s.launch_builder(&f);
            l.arg(&dtw).arg(&n32).arg(&mut *data).arg(&half32).arg(&h32);
            // SAFETY: the twin's signature is (const float2* twiddles, int n, float2* data, int half_total, int h); twiddles holds n / 2 values, data 2 * half_total, h divides n / 2.
            unsafe { l.launch(cfg_raw(cfg)) }?;
        }
        Ok(())
    };
    let mut tdata = s.clone_htod(&p.data)?;
    let cuda_ms = b.time(|| twin_fft(&mut tdata))?;

    let checked = 64;
    let want = fft_reference(&p, checked);
    let mut ddata = s.clone_htod(&p.data)?;
    oxide_fft(&mut ddata)?;
    let got = s.clone_dtoh(&ddata)?;
    fft_compare(&got, &want, n).map_err(|e| format!("oxide fft_stage differs from the reference: {e}"))?;
    let mut tdata = s.clone_htod(&p.data)?;
    twin_fft(&mut tdata)?;
    fft_compare(&s.clone_dtoh(&tdata)?, &want, n).map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
    let max_error = got
        .iter()
        .zip(&want)
        .map(|(g, w)| (g[0] as f64 - w.0).abs().max((g[1] as f64 - w.1).abs()))
        .fold(0.0, f64::max);
    Ok(Row {
        kernel: "fft_radix2".into(),
        size: format!("{batch} x {n} complex; {} stages", halves.len()),
        oxide_ms,
        cuda_ms,
        work: Work::Bytes(halves.len() as f64 * 2.0 * 8.0 * len as f64),
        reference: None,
        regs: Some(b.regs("fft_stage", &f)?),
        max_error,
    })
}
