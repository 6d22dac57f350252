//! A crate whose kernels come prebuilt: `cargo build` works with only the stable toolchain
//! (try `OXIDE_NO_DEVICE_TOOLCHAIN=1 cargo run -p prebuilt`). It runs `affine` on the GPU when
//! one is present (else on the CPU executor; `OXIDE_BACKEND=cpu|cuda` forces one) and prints
//! where the kernels came from and which image the GPU loaded (cubin for sm_90, else PTX).

mod kernels;

use oxide_rt::host::{loaded_image, Gpu};
use oxide_rt::{Backend, LaunchConfig};
use std::process::ExitCode;

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
    let n: u32 = 1 << 20;
    let (a, b) = (1.8f32, 32.0f32);
    // Celsius → Fahrenheit over a ramp of temperatures.
    let x: Vec<f32> = (0..n).map(|i| (i % 200) as f32 - 50.0).collect();
    let cfg = LaunchConfig::for_num_elems(n, 256);
    println!("kernels: {}", env!("OXIDE_KERNELS_ORIGIN"));
    let out = match Backend::from_env()? {
        Backend::Cuda => {
            let gpu = Gpu::new(0)?;
            let s = &gpu.stream;
            let dx = s.clone_htod(&x)?;
            let mut dout = s.alloc_zeros::<f32>(x.len())?;
            kernels::launch_affine_with(s, cfg, a, b, &dx, &mut dout)?;
            let out = s.clone_dtoh(&dout)?;
            let image = loaded_image(&gpu.ctx).map(|i| i.to_string()).unwrap_or_else(|| "none".into());
            println!("backend: cuda on {}; image: {image}", gpu.describe());
            out
        }
        Backend::Cpu => {
            println!(
                "backend: cpu (no GPU found or OXIDE_BACKEND=cpu); image: none (the CPU executor runs the host build)"
            );
            let mut out = vec![0.0f32; x.len()];
            kernels::cpu_affine_with(cfg, a, b, &x, &mut out)?;
            out
        }
    };
    let bad = x.iter().zip(&out).filter(|(x, o)| (a * **x + b - **o).abs() > 1e-4).count();
    if bad != 0 {
        return Err(format!("{bad} of {n} results are wrong").into());
    }
    println!("affine: OK ({n} elements, e.g. {} °C = {} °F)", x[130], out[130]);
    Ok(())
}
