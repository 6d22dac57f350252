//! A 5-point stencil over a `rows x cols` grid (default 4096 x 4096; `stencil [cols] [rows]`)
//! on the GPU when one is present, else on the CPU executor (`OXIDE_BACKEND=cpu|cuda` forces
//! one), checked bit for bit against a plain loop.

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

fn arg(i: usize, default: usize, what: &str) -> Result<usize, String> {
    match std::env::args().nth(i) {
        Some(s) => s.parse().map_err(|_| format!("{what} `{s}` is not a number")),
        None => Ok(default),
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let cols = arg(1, stencil::DEFAULT_SIZE, "column count")?;
    let rows = arg(2, cols, "row count")?;
    let p = stencil::problem_with(42, rows, cols);
    let t = Instant::now();
    let out = match Backend::from_env()? {
        Backend::Cuda => {
            let gpu = Gpu::new(0)?;
            println!("backend: cuda on {}", gpu.describe());
            stencil::run_gpu(&gpu.stream, &p)?
        }
        Backend::Cpu => {
            println!("backend: cpu (no GPU found or OXIDE_BACKEND=cpu)");
            stencil::run_cpu(&p)?
        }
    };
    let elapsed = t.elapsed();
    let checked = stencil::compare(&out, &stencil::reference(&p));
    println!("stencil: {rows} x {cols}, weights {:?}, {:.1} ms including transfers", p.w, elapsed.as_secs_f64() * 1e3);
    checked.map_err(|e| format!("result differs from the CPU reference: {e}"))?;
    println!("stencil: OK, all {} cells match the CPU reference exactly", rows * cols);
    Ok(())
}
