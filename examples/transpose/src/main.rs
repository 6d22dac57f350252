//! Transposes a 16384 x 16384 f32 matrix (or `size` from the first argument: size x size*3/2+1)
//! on the GPU when one is present, else on the CPU executor (`OXIDE_BACKEND=cpu|cuda` forces
//! one), checked exactly against a scalar transpose.

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
    let size: usize = match std::env::args().nth(1) {
        Some(s) => s.parse().map_err(|_| format!("size `{s}` is not a number"))?,
        None => transpose::DEFAULT_SIZE,
    };
    let p = transpose::problem(42, size);
    let t = Instant::now();
    let got = match Backend::from_env()? {
        Backend::Cuda => {
            let gpu = Gpu::new(0)?;
            println!("backend: cuda on {}", gpu.describe());
            transpose::run_gpu(&gpu.stream, &p)?
        }
        Backend::Cpu => {
            println!("backend: cpu (no GPU found or OXIDE_BACKEND=cpu)");
            transpose::run_cpu(&p)?
        }
    };
    let elapsed = t.elapsed();
    println!("transpose: {} x {} -> {} x {}, {:.1} ms including transfers", p.rows, p.cols, p.cols, p.rows, elapsed.as_secs_f64() * 1e3);
    transpose::compare(&got, &transpose::reference(&p)).map_err(|e| format!("result differs from the CPU reference: {e}"))?;
    println!("transpose: OK, all {} elements match the CPU transpose exactly", got.len());
    Ok(())
}
