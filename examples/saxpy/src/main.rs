//! saxpy over 2^26 elements (or the count given as the first argument) on the GPU when one is
//! present, else on the CPU executor (`OXIDE_BACKEND=cpu|cuda` forces one), checked against a
//! plain loop.

use saxpy::kernels;
use oxide_rt::host::Gpu;
use oxide_rt::{Backend, LaunchConfig};
use std::process::ExitCode;
use std::time::Instant;

const BLOCK: u32 = 256;

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
        None => 1 << 26,
    };
    let n32 = u32::try_from(n).map_err(|_| format!("{n} elements do not fit one 1D launch"))?;
    let a = 2.5f32;
    // Deterministic inputs without a RNG dependency: a cheap integer hash.
    let x: Vec<f32> = (0..n).map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 8) as f32 / 16_777_216.0).collect();
    let y0: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.001).collect();
    let expected = saxpy::reference(a, &x, &y0);
    let cfg = LaunchConfig::for_num_elems(n32, BLOCK);

    let backend = Backend::from_env()?;
    let t = Instant::now();
    let y = match backend {
        Backend::Cuda => {
            let gpu = Gpu::new(0)?;
            println!("backend: cuda on {}", gpu.describe());
            let s = &gpu.stream;
            let dx = s.clone_htod(&x)?;
            let mut dy = s.clone_htod(&y0)?;
            kernels::launch_saxpy_with(s, cfg, a, &dx, &mut dy)?;
            s.clone_dtoh(&dy)?
        }
        Backend::Cpu => {
            println!("backend: cpu (no GPU found or OXIDE_BACKEND=cpu)");
            let mut y = y0.clone();
            kernels::cpu_saxpy_with(cfg, a, &x, &mut y)?;
            y
        }
    };
    let elapsed = t.elapsed();
    // a*x + y is one rounding with FMA contraction on the GPU, two on the CPU: allow 1 ulp-ish.
    let bad = y.iter().zip(&expected).filter(|(g, e)| (*g - *e).abs() > 1e-6 * e.abs().max(1.0)).count();
    println!("saxpy: n = {n}, a = {a}, {:.1} ms including transfers, mismatches = {bad}", elapsed.as_secs_f64() * 1e3);
    if bad != 0 {
        return Err(format!("{bad} of {n} elements differ from the CPU reference").into());
    }
    println!("saxpy: OK, result matches the CPU reference");
    Ok(())
}
