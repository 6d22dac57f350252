//! Row-wise softmax of a `rows x cols` matrix (default 65536 x 4096; `softmax [cols] [rows]`)
//! on the GPU when one is present, else on the CPU executor (`OXIDE_BACKEND=cpu|cuda` forces
//! one), checked against a plain f64 loop.

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
    let backend = Backend::from_env()?;
    // The CPU executor is far slower: a smaller default matrix there.
    let default_rows = if backend == Backend::Cuda { softmax::BENCH_ROWS } else { 1024 };
    let cols = arg(1, softmax::DEFAULT_SIZE, "column count")?;
    let rows = arg(2, default_rows, "row count")?;
    let p = softmax::problem_with(42, rows, cols);
    let t = Instant::now();
    let y = match backend {
        Backend::Cuda => {
            let gpu = Gpu::new(0)?;
            println!("backend: cuda on {}", gpu.describe());
            softmax::run_gpu(&gpu.stream, &p)?
        }
        Backend::Cpu => {
            println!("backend: cpu (no GPU found or OXIDE_BACKEND=cpu)");
            softmax::run_cpu(&p)?
        }
    };
    let elapsed = t.elapsed();
    let checked = softmax::compare(&y, &softmax::reference(&p));
    let row0: f32 = y.iter().take(cols).sum();
    println!("softmax: {rows} x {cols}, row 0 sums to {row0}, {:.1} ms including transfers", elapsed.as_secs_f64() * 1e3);
    checked.map_err(|e| format!("result differs from the CPU reference: {e}"))?;
    println!("softmax: OK, all {} elements match the CPU reference", rows * cols);
    Ok(())
}
