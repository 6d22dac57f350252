//! The job on the CPU executor and, where there are GPUs, on all of them and on one: every
//! rank's all-reduced histogram is the CPU count of the whole input.

use multi_gpu::{compare, problem, reference, run_cpu, run_gpus};
use oxide_rt::host::Gpu;

#[test]
fn cpu_matches_reference() {
    for (seed, n) in [0usize, 1, 1000, (1 << 16) + 7].into_iter().enumerate() {
        let values = problem(seed as u64, n);
        compare(&run_cpu(&values).unwrap(), &reference(&values)).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}

#[test]
fn every_rank_ends_with_the_whole_histogram() {
    let gpus = Gpu::count();
    if gpus == 0 {
        assert!(std::env::var("OXIDE_REQUIRE_GPU").as_deref() != Ok("1"), "OXIDE_REQUIRE_GPU=1 but no GPU");
        eprintln!("skipped: no GPU");
        return;
    }
    // Uneven shards (n is not a multiple of the rank count), one rank without NCCL.
    let values = problem(3, (1 << 20) + 3);
    let want = reference(&values);
    let one = run_gpus(&values, 1, false, 2).unwrap();
    assert_eq!(one.histograms.len(), 1);
    compare(&one.histograms[0], &want).unwrap();
    if !multi_gpu::nccl::present() {
        eprintln!("NCCL not found: the all-reduce over {gpus} GPU(s) is not tested");
        return;
    }
    let all = run_gpus(&values, gpus, true, 2).unwrap();
    assert_eq!(all.histograms.len(), gpus);
    for (rank, h) in all.histograms.iter().enumerate() {
        compare(h, &want).unwrap_or_else(|e| panic!("rank {rank}: {e}"));
    }
}
