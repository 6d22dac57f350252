//! saxpy over 2^26 elements (or the count given as the first argument) on the GPU when one is
//! present, else on the CPU executor (`OXIDE_BACKEND=cpu|cuda` forces one), checked against a
//! plain loop.

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
        None => saxpy::DEFAULT_SIZE,
    };
    if n > u32::MAX as usize {
        return Err(format!("{n} elements do not fit one 1D launch").into());
    }
    let p = saxpy::problem(42, n);
    let t = Instant::now();
    let y = match Backend::from_env()? {
        Backend::Cuda => {
            let gpu = Gpu::new(0)?;
            println!("backend: cuda on {}", gpu.describe());
            saxpy::run_gpu(&gpu.stream, &p)?
        }
        Backend::Cpu => {
            println!("backend: cpu (no GPU found or OXIDE_BACKEND=cpu)");
            saxpy::run_cpu(&p)?
        }
    };
    let elapsed = t.elapsed();
    let checked = saxpy::compare(&y, &saxpy::reference(&p));
    println!("saxpy: n = {n}, a = {}, {:.1} ms including transfers", p.a, elapsed.as_secs_f64() * 1e3);
    checked.map_err(|e| format!("result differs from the CPU reference: {e}"))?;
    println!("saxpy: OK, all {n} elements match the CPU reference");
    Ok(())
}
