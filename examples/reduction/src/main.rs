//! Sums 2^26 random f32s (or the count given as the first argument) on the GPU when one is
//! present, else on the CPU executor (`OXIDE_BACKEND=cpu|cuda` forces one), checked against an
//! f64 sum.

use oxide_rt::host::Gpu;
use oxide_rt::Backend;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = match std::env::args().nth(1) {
        Some(s) => s.parse().map_err(|_| format!("element count `{s}` is not a number"))?,
        None => reduction::DEFAULT_SIZE,
    };
    let p = reduction::problem(42, n);
    let t = Instant::now();
    let got = match Backend::from_env()? {
        Backend::Cuda => {
            let gpu = Gpu::new(0)?;
            println!("backend: cuda on {}", gpu.describe());
            reduction::run_gpu(&gpu.stream, &p)?
        }
        Backend::Cpu => {
            println!("backend: cpu (no GPU found or OXIDE_BACKEND=cpu)");
            reduction::run_cpu(&p)?
        }
    };
    let elapsed = t.elapsed();
    let want = reduction::reference(&p);
    println!("reduction: n = {n}, sum = {} (exact {}), {:.1} ms including transfers", got.sum, want.sum, elapsed.as_secs_f64() * 1e3);
    reduction::compare(&got, &want).map_err(|e| format!("result differs from the CPU reference: {e}"))?;
    println!("reduction: OK, within {:.2e} of the exact sum (tolerance {:.2e})", (got.sum - want.sum).abs(), want.tolerance);
    Ok(())
}
