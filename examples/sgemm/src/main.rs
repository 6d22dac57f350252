//! C = alpha*A*B + beta*C for 4096^3 on the GPU when one is present, else 256-ish on the CPU
//! executor (`OXIDE_BACKEND=cpu|cuda` forces one; the first argument sets the size), checked
//! against an f64 triple loop.

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
    let size: Option<usize> = match std::env::args().nth(1) {
        Some(s) => Some(s.parse().map_err(|_| format!("size `{s}` is not a number"))?),
        None => None,
    };
    let backend = Backend::from_env()?;
    let size = size.unwrap_or(match backend {
        Backend::Cuda => sgemm::DEFAULT_SIZE,
        Backend::Cpu => sgemm::CPU_DEFAULT_SIZE,
    });
    let p = sgemm::problem(42, size);
    let t = Instant::now();
    let got = match backend {
        Backend::Cuda => {
            let gpu = Gpu::new(0)?;
            println!("backend: cuda on {}", gpu.describe());
            sgemm::run_gpu(&gpu.stream, &p)?
        }
        Backend::Cpu => {
            println!("backend: cpu (no GPU found or OXIDE_BACKEND=cpu)");
            sgemm::run_cpu(&p)?
        }
    };
    let elapsed = t.elapsed();
    println!("sgemm: m = {}, n = {}, k = {}, {:.1} ms including transfers", p.m, p.n, p.k, elapsed.as_secs_f64() * 1e3);
    let want = sgemm::reference(&p);
    sgemm::compare(&got, &want).map_err(|e| format!("result differs from the CPU reference: {e}"))?;
    println!("sgemm: OK, all {} elements within the f32 error bound (max abs error {:.2e})", got.c.len(), sgemm::max_abs_error(&got.c, &want.c));
    Ok(())
}
