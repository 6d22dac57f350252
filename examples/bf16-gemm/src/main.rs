//! `bf16-gemm [size]`: C = A * B, then C = gelu(A * B + bias) with the fused epilogue, for
//! size^3 (4096 on the GPU, 136 on the CPU executor; `OXIDE_BACKEND=cpu|cuda` forces one), each
//! checked against an f64 reference (sampled rows and columns for large sizes).
//!
//! `bf16-gemm bench [size..]` (GPU only): each kernel's median time over 20 runs (CUDA events,
//! after 3 warm-up runs) per size, default 4096 and 8192, as CSV lines
//! `<kernel>,size,ms,tflops`; `bench/gpu/gemm_cublas.py` measures cuBLAS (through PyTorch)
//! the same way, and `bench/gpu/bf16_gemm.sh` prints both with the ratio.

use bf16_gemm::Epilogue;
use example_common::{differs, run_main, run_timed, size_arg};
use oxide_rt::cuda::sys::CUevent_flags;
use oxide_rt::host::Gpu;
use oxide_rt::Backend;
use std::error::Error;
use std::process::ExitCode;

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some("bench") {
        return run_main(|_, gpu| bench(gpu.ok_or("bench needs a GPU (OXIDE_BACKEND=cuda)")?));
    }
    run_main(|backend, gpu| {
        let default = match backend {
            Backend::Cuda => bf16_gemm::DEFAULT_SIZE,
            Backend::Cpu => bf16_gemm::CPU_DEFAULT_SIZE,
        };
        let size = size_arg(1, default, "size")?;
        let p = bf16_gemm::problem(42, size, size, size);
        // The full f64 reference of 4096^3 takes minutes: every 61st row and column then.
        let sample = if size > 1024 { 61 } else { 1 };
        for epilogue in [Epilogue::None, Epilogue::BiasGelu] {
            let (got, ms) =
                run_timed(gpu, &p, |s, p| bf16_gemm::run_gpu(s, p, epilogue), |p| bf16_gemm::run_cpu(p, epilogue))?;
            let name = epilogue.kernel();
            println!("{name}: {size}^3, {ms:.1} ms including transfers");
            let worst = bf16_gemm::compare(&p, &got, sample, epilogue).map_err(differs)?;
            println!("{name}: OK, within the bf16 error bound (max abs error {worst:.2e}, every {sample} row/column)");
        }
        Ok(())
    })
}

fn bench(gpu: &Gpu) -> Result<(), Box<dyn Error>> {
    let sizes: Vec<usize> = match std::env::args().skip(2).map(|s| s.parse()).collect::<Result<Vec<_>, _>>()? {
        v if v.is_empty() => vec![4096, 8192],
        v => v,
    };
    let s = &gpu.stream;
    for (size, epilogue) in sizes.iter().flat_map(|&n| [(n, Epilogue::None), (n, Epilogue::BiasGelu)]) {
        let p = bf16_gemm::problem(7, size, size, size);
        let mut g = bf16_gemm::upload(s, &p)?;
        for _ in 0..3 {
            bf16_gemm::launch(s, &p, &mut g, epilogue)?;
        }
        oxide_rt::host::synchronize(s)?;
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let mut ms = Vec::new();
        for _ in 0..20 {
            let (start, end) = (gpu.ctx.new_event(flags)?, gpu.ctx.new_event(flags)?);
            start.record(s)?;
            bf16_gemm::launch(s, &p, &mut g, epilogue)?;
            end.record(s)?;
            end.synchronize()?;
            ms.push(start.elapsed_ms(&end)? as f64);
        }
        oxide_rt::host::synchronize(s)?;
        ms.sort_by(f64::total_cmp);
        let median = ms[ms.len() / 2];
        let tflops = 2.0 * (size as f64).powi(3) / (median * 1e-3) / 1e12;
        println!("{},{size},{median:.4},{tflops:.1}", epilogue.kernel());
        // A spot check that the timed kernel computes what it should.
        let got = s.clone_dtoh(&g.c)?;
        bf16_gemm::compare(&p, &got, 509, epilogue).map_err(differs)?;
    }
    Ok(())
}
