//! `hopper-gemm [size] [bf16|f16|e4m3]`: C = A * B for size^3 (default 4096, bf16; e4m3: FP8
//! inputs, C in bf16) on an sm_90 GPU, checked against an f64 reference (every 61st row and
//! column above 1024). It needs that GPU: the CPU executor runs neither TMA nor wgmma.
//!
//! `hopper-gemm bench [size..]` (GPU only): the bf16, f16 and e4m3 kernels' median time over 20
//! runs (CUDA events, after 3 warm-up runs) per size, default 4096 and 8192, as CSV lines
//! `hopper_gemm_<type>,size,ms,tflops`; `bench/gpu/hopper_gemm.sh` prints them next to cuBLAS
//! (through PyTorch) with the ratio.

use example_common::{differs, run_main, size_arg};
use hopper_gemm::Elem;
use oxide_rt::cuda::sys::CUevent_flags;
use oxide_rt::host::Gpu;
use oxide_rt::{Bf16, E4M3, F16};
use std::error::Error;
use std::process::ExitCode;

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some("bench") {
        return run_main(|_, gpu| bench(gpu.ok_or("bench needs a GPU (OXIDE_BACKEND=cuda)")?));
    }
    run_main(|_, gpu| {
        let gpu =
            gpu.ok_or("hopper-gemm needs an sm_90 GPU (H100 / H200): the CPU executor runs neither TMA nor wgmma")?;
        let size = size_arg(1, hopper_gemm::DEFAULT_SIZE, "size")?;
        match std::env::args().nth(2).as_deref() {
            None | Some("bf16") => check::<Bf16>(gpu, size),
            Some("f16") => check::<F16>(gpu, size),
            Some("e4m3") => check::<E4M3>(gpu, size),
            Some(other) => Err(format!("element type `{other}`: use bf16, f16 or e4m3").into()),
        }
    })
}

fn check<T: Elem>(gpu: &Gpu, size: usize) -> Result<(), Box<dyn Error>> {
    let p = hopper_gemm::problem::<T>(42, size, size, size);
    let t = std::time::Instant::now();
    let got = hopper_gemm::run_gpu(&gpu.stream, &p)?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    println!("hopper-gemm: {size}^3 {}, {ms:.1} ms including transfers", T::NAME);
    let sample = if size > 1024 { 61 } else { 1 };
    let worst = hopper_gemm::compare(&p, &got, sample).map_err(differs)?;
    println!(
        "hopper-gemm: OK, within the {} error bound (max abs error {worst:.2e}, every {sample} row/column)",
        T::NAME
    );
    Ok(())
}

fn bench(gpu: &Gpu) -> Result<(), Box<dyn Error>> {
    let sizes: Vec<usize> = match std::env::args().skip(2).map(|s| s.parse()).collect::<Result<Vec<_>, _>>()? {
        v if v.is_empty() => vec![4096, 8192],
        v => v,
    };
    for size in sizes {
        bench_one::<Bf16>(gpu, size)?;
        bench_one::<F16>(gpu, size)?;
        bench_one::<E4M3>(gpu, size)?;
    }
    Ok(())
}

/// The median of 20 timed runs of `launch` (CUDA events), after 3 warm-up runs.
fn time(gpu: &Gpu, mut launch: impl FnMut() -> Result<(), oxide_rt::Error>) -> Result<f64, Box<dyn Error>> {
    let s = &gpu.stream;
    for _ in 0..3 {
        launch()?;
    }
    oxide_rt::host::synchronize(s)?;
    let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let mut ms = Vec::new();
    for _ in 0..20 {
        let (start, end) = (gpu.ctx.new_event(flags)?, gpu.ctx.new_event(flags)?);
        start.record(s)?;
        launch()?;
        end.record(s)?;
        end.synchronize()?;
        ms.push(start.elapsed_ms(&end)? as f64);
    }
    oxide_rt::host::synchronize(s)?;
    ms.sort_by(f64::total_cmp);
    Ok(ms[ms.len() / 2])
}

fn bench_one<T: Elem>(gpu: &Gpu, size: usize) -> Result<(), Box<dyn Error>> {
    let s = &gpu.stream;
    let p = hopper_gemm::problem::<T>(7, size, size, size);
    let (g, mut c) = hopper_gemm::upload(s, &p)?;
    let maps = hopper_gemm::maps(&p, &g)?;
    let blocks = oxide_rt::host::multiprocessors(s)?;
    let median = time(gpu, || hopper_gemm::launch(s, &p, &maps, &mut c, blocks))?;
    let tflops = 2.0 * (size as f64).powi(3) / (median * 1e-3) / 1e12;
    println!("hopper_gemm_{},{size},{median:.4},{tflops:.1}", T::NAME);
    // A spot check that the timed kernel computes the product.
    let got = s.clone_dtoh(&c)?;
    hopper_gemm::compare(&p, &got, 509).map_err(differs)?;
    Ok(())
}
