//! CPU executor benchmark (a binary, not a test; no GPU needed).
//!
//! 1. saxpy over `n` elements (first argument, default 2^24) on the CPU executor against a
//!    plain Rust loop over the same data, best of several runs each, and their ratio.
//! 2. A block reduction with a barrier per step at 1024 threads per block (every thread a
//!    fiber): time, and peak resident memory (VmHWM) against the resident memory before.
//!
//! `BENCH_ONLY=saxpy|reduce` runs one of the two.

mod kernels;

use oxide_rt::LaunchConfig;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const RUNS: usize = 5;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A field of /proc/self/status in KiB (Linux), e.g. "VmHWM" or "VmRSS".
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field) && l[field.len()..].starts_with(':'))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or("n/a".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
}

fn best(mut f: impl FnMut() -> Result<(), Box<dyn std::error::Error>>) -> Result<Duration, Box<dyn std::error::Error>> {
    let mut best = Duration::MAX;
    for _ in 0..RUNS {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed());
    }
    Ok(best)
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = match std::env::args().nth(1) {
        Some(s) => s.parse().map_err(|_| format!("element count `{s}` is not a number"))?,
        None => 1 << 24,
    };
    let n32 = u32::try_from(n).map_err(|_| format!("{n} elements do not fit one 1D launch"))?;
    let cores = std::thread::available_parallelism().map(|c| c.get()).unwrap_or(1);
    println!("cpu executor bench: {cores} core(s), n = {n}, best of {RUNS} runs");

    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    if only != "saxpy" {
        reduction(n, n32, cores)?;
    }
    if only != "reduce" {
        saxpy(n, n32, cores)?;
    }
    Ok(())
}

/// Runs first, so its peak memory is not hidden under saxpy's buffers.
fn reduction(n: usize, n32: u32, cores: usize) -> Result<(), Box<dyn std::error::Error>> {
    let block = 1024u32;
    let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let mut sums = vec![-1f32; n]; // written now (not lazily zeroed), so VmRSS below counts it
    let cfg = LaunchConfig::for_num_elems(n32, block);
    let rss_before = status_kib("VmRSS");
    let t = best(|| Ok(kernels::cpu_block_sum_with(cfg, &x, &mut sums)?))?;
    let hwm = status_kib("VmHWM");
    let blocks = n.div_ceil(block as usize);
    let bad = (0..blocks)
        .filter(|b| {
            let want: f32 = x[b * block as usize..((b + 1) * block as usize).min(n)].iter().sum();
            sums[b * block as usize] != want
        })
        .count();
    if bad != 0 {
        return Err(format!("block_sum: {bad} of {blocks} block sums are wrong").into());
    }
    let barriers = blocks as f64 * block.trailing_zeros() as f64;
    println!(
        "block_sum: {blocks} blocks x {block} threads (fibers), {:.1} ms, {:.0} ns per thread, {:.1} us per block barrier",
        t.as_secs_f64() * 1e3,
        t.as_secs_f64() * 1e9 / n as f64,
        t.as_secs_f64() * 1e6 / barriers,
    );
    println!(
        "block_sum memory: VmRSS before {}, peak VmHWM after {} (+{} for the executor: fiber stacks of {cores} worker(s) x {block} threads)",
        mib(rss_before),
        mib(hwm),
        mib(hwm.zip(rss_before).map(|(h, r)| h.saturating_sub(r))),
    );
    Ok(())
}

/// saxpy: executor vs a plain loop over the same data.
fn saxpy(n: usize, n32: u32, cores: usize) -> Result<(), Box<dyn std::error::Error>> {
    let a = 2.5f32;
    let x: Vec<f32> = (0..n).map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 8) as f32 / 16_777_216.0).collect();
    let mut y_exec: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.001).collect();
    let mut y_loop = y_exec.clone();
    let cfg = LaunchConfig::for_num_elems(n32, 256);
    let t_loop = best(|| {
        for (yi, xi) in y_loop.iter_mut().zip(&x) {
            *yi += a * xi;
        }
        std::hint::black_box(&mut y_loop);
        Ok(())
    })?;
    let t_exec = best(|| Ok(kernels::cpu_saxpy_with(cfg, a, &x, &mut y_exec)?))?;
    if y_exec != y_loop {
        return Err("saxpy: executor and plain loop disagree".into());
    }
    let gbs = |t: Duration| 12.0 * n as f64 / t.as_secs_f64() / 1e9;
    println!("saxpy plain loop (1 thread): {:.2} ms ({:.1} GB/s)", t_loop.as_secs_f64() * 1e3, gbs(t_loop));
    println!(
        "saxpy cpu executor ({cores} workers, plain-loop mode): {:.2} ms ({:.1} GB/s)",
        t_exec.as_secs_f64() * 1e3,
        gbs(t_exec)
    );
    println!("saxpy ratio executor / plain loop: {:.2}x (target <= 2x)", t_exec.as_secs_f64() / t_loop.as_secs_f64());
    Ok(())
}
