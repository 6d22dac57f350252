//! The kernel on the CPU executor against the scalar reference.
use reduction::{compare, problem, reference, run_cpu, run_cpu_with_block, Problem, SIZES};

#[test]
fn cpu_matches_reference_for_every_size() {
    for (seed, &n) in SIZES.iter().enumerate() {
        let p = problem(seed as u64, n);
        let got = run_cpu(&p).unwrap();
        compare(&got, &reference(&p)).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}

/// 1024-thread blocks (32 warps: the shared array of warp sums is full) and a single warp.
#[test]
fn cpu_matches_reference_with_1024_and_32_thread_blocks() {
    for block in [1024, 32] {
        for &n in &[1, 1023, 1025, 100_003, 1_048_583] {
            let p = problem(n as u64, n);
            let got = run_cpu_with_block(&p, block).unwrap();
            compare(&got, &reference(&p)).unwrap_or_else(|e| panic!("block {block}, n = {n}: {e}"));
        }
    }
}

/// Small integers sum exactly in f32 (all partial sums stay below 2^24), so a dropped or
/// doubled element cannot hide inside the rounding tolerance.
#[test]
fn integer_data_sums_exactly() {
    for &n in &[1usize, 33, 257, 4099, 65_537, 1_000_003] {
        let x: Vec<f32> = (0..n).map(|i| ((i * 7919) % 17) as f32 - 8.0).collect();
        let exact: f64 = x.iter().map(|&v| v as f64).sum();
        for block in [256, 1024] {
            let got = run_cpu_with_block(&Problem { x: x.clone() }, block).unwrap();
            assert_eq!(got.sum, exact, "block {block}, n = {n}");
        }
    }
}

#[test]
fn empty_input_sums_to_zero() {
    let got = run_cpu(&Problem { x: Vec::new() }).unwrap();
    assert_eq!(got.sum, 0.0);
}
