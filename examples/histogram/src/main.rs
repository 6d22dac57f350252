//! Byte histogram of 2^28 random bytes (or the count given as the first argument) on the GPU
//! when one is present, else on the CPU executor (`OXIDE_BACKEND=cpu|cuda` forces one), checked
//! exactly against a scalar count.

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
        Some(s) => s.parse().map_err(|_| format!("byte count `{s}` is not a number"))?,
        None => histogram::DEFAULT_SIZE,
    };
    let p = histogram::problem(42, n);
    let t = Instant::now();
    let got = match Backend::from_env()? {
        Backend::Cuda => {
            let gpu = Gpu::new(0)?;
            println!("backend: cuda on {}", gpu.describe());
            histogram::run_gpu(&gpu.stream, &p)?
        }
        Backend::Cpu => {
            println!("backend: cpu (no GPU found or OXIDE_BACKEND=cpu)");
            histogram::run_cpu(&p)?
        }
    };
    let elapsed = t.elapsed();
    let peak = got.iter().enumerate().max_by_key(|(_, &c)| c).map_or(0, |(b, _)| b);
    println!("histogram: n = {n} bytes, fullest bin {peak} ({} bytes), {:.1} ms including transfers", got.get(peak).copied().unwrap_or(0), elapsed.as_secs_f64() * 1e3);
    histogram::compare(&got, &histogram::reference(&p)).map_err(|e| format!("result differs from the CPU reference: {e}"))?;
    println!("histogram: OK, all 256 bins match the CPU count exactly");
    Ok(())
}
