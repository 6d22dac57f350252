//! Inclusive prefix sum of 2^28 `u32`s (or the count given as the first argument) on the GPU
//! when one is present, else on the CPU executor (`OXIDE_BACKEND=cpu|cuda` forces one), checked
//! against a plain running sum.

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
    let backend = Backend::from_env()?;
    // The CPU executor is far slower: a smaller default there.
    let default = if backend == Backend::Cuda { scan::DEFAULT_SIZE } else { 1 << 22 };
    let n: usize = match std::env::args().nth(1) {
        Some(s) => s.parse().map_err(|_| format!("element count `{s}` is not a number"))?,
        None => default,
    };
    let p = scan::problem(42, n);
    let t = Instant::now();
    let y = match backend {
        Backend::Cuda => {
            let gpu = Gpu::new(0)?;
            println!("backend: cuda on {}", gpu.describe());
            scan::run_gpu(&gpu.stream, &p)?
        }
        Backend::Cpu => {
            println!("backend: cpu (no GPU found or OXIDE_BACKEND=cpu)");
            scan::run_cpu(&p)?
        }
    };
    let elapsed = t.elapsed();
    let checked = scan::compare(&y, &scan::reference(&p));
    println!("scan: n = {n} ({} levels), last = {:?}, {:.1} ms including transfers", scan::levels(n).len(), y.last(), elapsed.as_secs_f64() * 1e3);
    checked.map_err(|e| format!("result differs from the CPU reference: {e}"))?;
    println!("scan: OK, all {n} elements match the CPU reference");
    Ok(())
}
