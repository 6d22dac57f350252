mod kernels;

use oxide_rt::host::Gpu;
use oxide_rt::{Backend, LaunchConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 1 << 20;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut y = vec![1.0f32; n];
    let cfg = LaunchConfig::for_num_elems(n as u32, 256);

    // The GPU when there is one, else the CPU executor (OXIDE_BACKEND=cpu|cuda picks one).
    match Backend::from_env()? {
        Backend::Cuda => {
            let gpu = Gpu::new(0)?; // a CUDA context and its stream
            let x_gpu = gpu.stream.clone_htod(&x)?;
            let mut y_gpu = gpu.stream.clone_htod(&y)?;
            kernels::launch_saxpy_with(&gpu.stream, cfg, 2.0, &x_gpu, &mut y_gpu)?;
            gpu.synchronize()?; // a kernel that panicked comes back here, as an error
            y = gpu.stream.clone_dtoh(&y_gpu)?;
            println!("ran on {}", gpu.describe());
        }
        Backend::Cpu => {
            kernels::cpu_saxpy_with(cfg, 2.0, &x, &mut y)?;
            println!("ran on the CPU executor");
        }
    }

    let wrong = (0..n).filter(|&i| y[i] != 2.0 * x[i] + 1.0).count();
    if wrong > 0 {
        return Err(format!("{wrong} of {n} elements are wrong").into());
    }
    println!("saxpy: y = 2x + 1 in all {n} elements");
    Ok(())
}
