//! A 2-D box filter (default 2048 x 2048, radius 2; `interop [width] [height]`) run twice on the
//! GPU — the existing CUDA C++ kernel through its generated typed launcher, and the Rust kernel
//! taking the same params struct — and checked bit for bit against a CPU loop. Without a GPU
//! the Rust kernel runs on the CPU executor and the CUDA C++ one is skipped with its reason.

use example_common::{differs, run_main, size_arg};
use std::process::ExitCode;

fn main() -> ExitCode {
    run_main(|_, gpu| {
        let width = size_arg(1, interop::DEFAULT_SIZE, "width")?;
        let height = size_arg(2, width, "height")?;
        let p = interop::problem(7, width, height, 2);
        let want = interop::reference(&p);
        match gpu {
            Some(gpu) => {
                let cpp = interop::run_cuda_cpp(&gpu.stream, &p)?;
                interop::compare(&cpp, &want).map_err(differs)?;
                println!("interop: CUDA C++ box_filter (legacy/filters.cu): OK, {width} x {height} pixels match");
                let rust = interop::run_rust_gpu(&gpu.stream, &p)?;
                interop::compare(&rust, &want).map_err(differs)?;
                println!("interop: Rust box_filter_rs on the GPU: OK, {width} x {height} pixels match");
            }
            None => {
                match interop::run_cuda_cpp_on_cpu(&p) {
                    Ok(_) => return Err("the CUDA C++ kernel claims to have run on the CPU".into()),
                    Err(e) => println!("interop: CUDA C++ box_filter skipped: {e}"),
                }
                let rust = interop::run_rust_cpu(&p)?;
                interop::compare(&rust, &want).map_err(differs)?;
                println!("interop: Rust box_filter_rs on the CPU executor: OK, {width} x {height} pixels match");
            }
        }
        Ok(())
    })
}
