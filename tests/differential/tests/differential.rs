//! Every example on the GPU and the CPU executor (random inputs, every size in its `SIZES`,
//! several seeds), compared with each other and with the scalar reference; plus a CPU-only run
//! of every example against its reference (which runs in CI). See the crate docs for seeds.

use differential::{check, example, for_each_example, master_seed, report, seeds_per_size, Tally};
use oxide_rt::host::{gpu_available, Gpu};

/// GPU vs CPU executor vs reference. Skips (printing why) without a GPU unless
/// `OXIDE_REQUIRE_GPU=1`.
#[test]
fn gpu_and_cpu_agree_with_each_other_and_the_references() {
    let require = std::env::var("OXIDE_REQUIRE_GPU").is_ok_and(|v| v == "1");
    if !gpu_available() {
        assert!(!require, "OXIDE_REQUIRE_GPU=1 but no CUDA driver or device was found");
        println!("skipped: no CUDA driver or GPU found (set OXIDE_REQUIRE_GPU=1 to make this a failure)");
        return;
    }
    let gpu = Gpu::new(0).unwrap_or_else(|e| panic!("a GPU was detected but could not be opened: {e}"));
    println!("GPU: {}", gpu.describe());
    let master = master_seed().unwrap();
    let seeds = seeds_per_size(3).unwrap();
    let mut tallies: Vec<Tally> = Vec::new();
    macro_rules! on_gpu {
        ($k:ident) => {{
            let run = |p: &$k::Problem| $k::run_gpu(&gpu.stream, p);
            let t = check(&example!($k), master, seeds, Some(&run));
            println!("{t}");
            tallies.push(t);
        }};
    }
    for_each_example!(on_gpu);
    let bad = report("GPU vs CPU executor vs reference", master, seeds, &tallies);
    assert_eq!(bad, 0, "{bad} mismatching case(s), listed above");
}

/// CPU executor vs reference for every example (no GPU needed).
#[test]
fn cpu_executor_agrees_with_the_references() {
    let master = master_seed().unwrap();
    let seeds = seeds_per_size(1).unwrap();
    let mut tallies: Vec<Tally> = Vec::new();
    macro_rules! on_cpu {
        ($k:ident) => {{
            let t = check(&example!($k), master, seeds, None);
            println!("{t}");
            tallies.push(t);
        }};
    }
    for_each_example!(on_cpu);
    let bad = report("CPU executor vs reference", master, seeds, &tallies);
    assert_eq!(bad, 0, "{bad} mismatching case(s), listed above");
}
