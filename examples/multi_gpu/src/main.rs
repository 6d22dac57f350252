//! Data-parallel histogram over every GPU with an NCCL all-reduce (see lib.rs), checked against
//! a CPU count and timed against one GPU. `multi_gpu [values] [reps]`; `OXIDE_GPUS=k` uses the
//! first k GPUs; `OXIDE_NCCL_LIB=/path/libnccl.so.2` where NCCL is not on the loader's path.
//! One GPU: 1 rank. No GPU (or `OXIDE_BACKEND=cpu`): the CPU executor.

use example_common::{differs, size_arg};
use multi_gpu::{compare, problem, reference, run_cpu, run_gpus, DEFAULT_SIZE, DEFAULT_SIZE_CPU};
use oxide_rt::host::Gpu;
use oxide_rt::Backend;
use std::error::Error;
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

fn run() -> Result<(), Box<dyn Error>> {
    let backend = Backend::from_env()?;
    let default = if backend == Backend::Cuda { DEFAULT_SIZE } else { DEFAULT_SIZE_CPU };
    let n = size_arg(1, default, "value count")?;
    let reps = size_arg(2, 20, "repetitions")?.max(1);
    let values = problem(7, n);
    let want = reference(&values);
    if backend == Backend::Cpu {
        println!("multi_gpu: no GPU (or OXIDE_BACKEND=cpu): 1 rank on the CPU executor, no NCCL");
        compare(&run_cpu(&values)?, &want).map_err(differs)?;
        println!("multi_gpu: OK, n = {n}: the histogram matches the CPU count exactly");
        return Ok(());
    }
    let gpus = match std::env::var("OXIDE_GPUS") {
        Ok(k) => k.parse::<usize>().map_err(|_| format!("OXIDE_GPUS={k:?} is not a number of GPUs"))?,
        Err(_) => Gpu::count(),
    };
    if gpus == 0 {
        return Err(Gpu::new(0).err().map_or_else(|| "no GPU".to_string(), |e| e.to_string()).into());
    }
    // Make sure requested GPUs exist before any thread starts (a clear NoSuchDevice error).
    Gpu::new(gpus - 1)?;
    // NVLink multicast (NVLS) is not needed for a 1 KiB all-reduce, and on shared machines it
    // can take the host's GPUs out of service: off unless the environment says otherwise (set
    // before any thread starts).
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
    }
    let nccl = multi_gpu::nccl::available()?;
    if gpus > 1 && !nccl {
        return Err(format!("{gpus} GPUs need NCCL for the all-reduce: {}", multi_gpu::nccl::MISSING).into());
    }
    for g in 0..gpus {
        println!("GPU {g}: {}", Gpu::new(g)?.describe());
    }
    let nccl_note = if nccl { "NCCL all-reduce" } else { "NCCL not found, nothing to reduce across" };
    let one = run_gpus(&values, 1, nccl, reps)?;
    check(&one.histograms, &want)?;
    println!("multi_gpu: 1 rank ({nccl_note}): n = {n}, {:.3} ms per repetition (kernel + all-reduce)", one.ms_per_rep);
    if gpus == 1 {
        println!("multi_gpu: OK, one GPU: ran 1 rank; the histogram matches the CPU count exactly");
        return Ok(());
    }
    let all = run_gpus(&values, gpus, true, reps)?;
    check(&all.histograms, &want)?;
    println!(
        "multi_gpu: {gpus} ranks (NCCL all-reduce): n = {n}, {:.3} ms per repetition, {:.2}x the 1-GPU speed",
        all.ms_per_rep,
        one.ms_per_rep / all.ms_per_rep
    );
    println!("multi_gpu: OK, every rank's all-reduced histogram matches the CPU count exactly");
    Ok(())
}

fn check(histograms: &[Vec<u32>], want: &[u32]) -> Result<(), String> {
    for (rank, h) in histograms.iter().enumerate() {
        compare(h, want).map_err(|e| format!("rank {rank}: {}", differs(e)))?;
    }
    Ok(())
}
