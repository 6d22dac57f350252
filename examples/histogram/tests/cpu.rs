//! The kernel on the CPU executor against the scalar count.
use histogram::{compare, problem, reference, run_cpu, run_cpu_with_block, Problem, SIZES};

#[test]
fn cpu_matches_reference_for_every_size() {
    for (seed, &n) in SIZES.iter().enumerate() {
        let p = problem(seed as u64, n);
        let got = run_cpu(&p).unwrap();
        compare(&got, &reference(&p)).unwrap_or_else(|e| panic!("n = {n}: {e}"));
        assert_eq!(got.iter().map(|&c| c as usize).sum::<usize>(), n);
    }
}

/// Block sizes below and above the bin count (with 32 threads each zeroes and merges 8 bins;
/// with 1024, threads past 256 only count), including one that is not a power of two.
#[test]
fn cpu_matches_reference_for_other_block_sizes() {
    for block in [32, 96, 1024] {
        for &n in &[5, 4097, 300_001] {
            let p = problem(n as u64 + block as u64, n);
            let got = run_cpu_with_block(&p, block).unwrap();
            compare(&got, &reference(&p)).unwrap_or_else(|e| panic!("block {block}, n = {n}: {e}"));
        }
    }
}

/// All bytes equal: every block hammers one shared bin (maximal contention).
#[test]
fn one_hot_bin_counts_exactly() {
    let p = Problem { bytes: vec![0xab; 123_457] };
    let got = run_cpu(&p).unwrap();
    assert_eq!(got[0xab], 123_457);
    assert_eq!(got.iter().map(|&c| c as u64).sum::<u64>(), 123_457);
}
