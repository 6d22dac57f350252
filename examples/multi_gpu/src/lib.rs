//! A data-parallel job over every GPU of the machine: the input is split into one shard per
//! GPU, a host thread per GPU runs an oxide kernel on its shard (a histogram of the values' top
//! bytes), and an NCCL all-reduce sums the partial histograms so every rank ends with the
//! histogram of the whole input. Checked exactly against a CPU count, and timed against the
//! same job on one GPU.

pub mod kernels;
pub mod nccl;

use cudarc::nccl::safe::{Comm, Id, ReduceOp};
use example_common::{compare_exact, driver_err, Rng};
use kernels::BINS;
use oxide_rt::cuda::CudaSlice;
use oxide_rt::host::Gpu;
use oxide_rt::{Error, LaunchConfig};
use std::sync::Barrier;
use std::time::Instant;

/// Values in the whole input by default (1 GiB of `u32`; the CPU executor takes fewer).
pub const DEFAULT_SIZE: usize = 1 << 28;
pub const DEFAULT_SIZE_CPU: usize = 1 << 22;
pub const BLOCK: u32 = 256;

/// `n` random values.
pub fn problem(seed: u64, n: usize) -> Vec<u32> {
    Rng::new(seed).vec_u32(n)
}

/// The histogram by top byte, counted on the CPU.
pub fn reference(values: &[u32]) -> Vec<u32> {
    let mut hist = vec![0u32; BINS];
    for v in values {
        hist[(v >> 24) as usize] += 1;
    }
    hist
}

pub fn compare(got: &[u32], want: &[u32]) -> Result<(), String> {
    compare_exact(got, want, "bin", |a, b| a == b)
}

/// One block per 16 values a thread, at most 8 per SM of an H200: enough to fill the GPU, few
/// atomics into `hist`.
pub fn config_for(n: usize) -> LaunchConfig {
    let blocks = n.div_ceil(BLOCK as usize * 16).clamp(1, 1056) as u32;
    LaunchConfig::new(blocks, BLOCK)
}

/// The job on the CPU executor (no GPU).
pub fn run_cpu(values: &[u32]) -> Result<Vec<u32>, Error> {
    use oxide_rt::device::atomic::AtomicU32;
    let hist: Vec<AtomicU32> = (0..BINS).map(|_| AtomicU32::new(0)).collect();
    kernels::cpu_top_byte_histogram_with(config_for(values.len()), values, &hist)?;
    Ok(hist.into_iter().map(AtomicU32::into_inner).collect())
}

/// What one run over `ranks` GPUs gave: every rank's histogram after the all-reduce, and the
/// time of one repetition (kernel and all-reduce, the slowest rank's).
pub struct Run {
    pub histograms: Vec<Vec<u32>>,
    pub ms_per_rep: f64,
}

/// An error of rank `rank`, as text (ranks run on their own threads).
fn on_rank(rank: usize) -> impl Fn(Error) -> String {
    move |e| format!("GPU {rank}: {e}")
}

/// The job on GPUs 0..`ranks`, one host thread each, `reps` times after a warm-up (which loads
/// the kernel in each context). With `nccl` false (one GPU and no NCCL) there is nothing to
/// reduce across and the all-reduce is skipped.
pub fn run_gpus(values: &[u32], ranks: usize, nccl: bool, reps: usize) -> Result<Run, String> {
    let id = if nccl { Some(Id::new().map_err(|e| format!("ncclGetUniqueId failed: {:?}", e.0))?) } else { None };
    let shard = values.len().div_ceil(ranks);
    // Every rank starts timing together, after all have loaded their shard and warmed up.
    let start = Barrier::new(ranks);
    let results: Vec<Result<(Vec<u32>, f64), String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..ranks)
            .map(|rank| {
                let part = &values[(rank * shard).min(values.len())..((rank + 1) * shard).min(values.len())];
                let start = &start;
                scope.spawn(move || rank_main(rank, ranks, id, part, reps, start))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a rank's thread panicked".into()))).collect()
    });
    let mut histograms = Vec::new();
    let mut ms_per_rep: f64 = 0.0;
    for r in results {
        let (hist, ms) = r?;
        histograms.push(hist);
        ms_per_rep = ms_per_rep.max(ms);
    }
    Ok(Run { histograms, ms_per_rep })
}

/// One rank: its GPU, its communicator, its shard.
fn rank_main(
    rank: usize,
    ranks: usize,
    id: Option<Id>,
    part: &[u32],
    reps: usize,
    start: &Barrier,
) -> Result<(Vec<u32>, f64), String> {
    let err = on_rank(rank);
    let gpu = Gpu::new(rank).map_err(&err)?;
    let s = &gpu.stream;
    let comm = match id {
        Some(id) => {
            // ncclCommInitRank works on the current device; every rank must call it at once.
            gpu.ctx.bind_to_thread().map_err(driver_err("making the GPU current")).map_err(&err)?;
            let comm = Comm::from_rank(s.clone(), rank, ranks, id)
                .map_err(|e| format!("GPU {rank}: ncclCommInitRank failed: {:?}", e.0))?;
            Some(comm)
        }
        None => None,
    };
    let x = s.clone_htod(part).map_err(driver_err("copying the shard to the GPU")).map_err(&err)?;
    let mut hist: CudaSlice<u32> = s.alloc_zeros(BINS).map_err(driver_err("allocating the histogram")).map_err(&err)?;
    let step = |hist: &mut CudaSlice<u32>| -> Result<(), String> {
        s.memset_zeros(hist).map_err(driver_err("zeroing the histogram")).map_err(&err)?;
        kernels::launch_top_byte_histogram_with(s, config_for(part.len()), &x, hist).map_err(&err)?;
        if let Some(comm) = &comm {
            comm.all_reduce_in_place(hist, &ReduceOp::Sum)
                .map_err(|e| format!("GPU {rank}: ncclAllReduce failed: {:?}", e.0))?;
        }
        Ok(())
    };
    step(&mut hist)?;
    gpu.synchronize().map_err(&err)?;
    start.wait();
    let t = Instant::now();
    for _ in 0..reps {
        step(&mut hist)?;
    }
    gpu.synchronize().map_err(&err)?;
    let ms = t.elapsed().as_secs_f64() * 1e3 / reps.max(1) as f64;
    let out = s.clone_dtoh(&hist).map_err(driver_err("copying the histogram back")).map_err(&err)?;
    Ok((out, ms))
}
