//! The kernel on the CPU executor against the f64 triple loop.
use sgemm::{compare, problem, problem_dims, reference, run_cpu, SIZES};

#[test]
fn cpu_matches_reference_for_every_size() {
    for (seed, &s) in SIZES.iter().enumerate() {
        let p = problem(seed as u64, s);
        let got = run_cpu(&p).unwrap();
        compare(&got, &reference(&p)).unwrap_or_else(|e| panic!("size {s} ({} x {} x {}): {e}", p.m, p.n, p.k));
    }
}

/// Shapes that stress one edge at a time: k a multiple of BK and not, one row, one column,
/// tiles exactly full, a single k; rows of 4-float multiples (vector reads) ending inside a
/// tile and a k-tile (the last two).
#[test]
fn cpu_matches_reference_for_edge_shapes() {
    let shapes = [
        (128, 128, 16),
        (1, 300, 9),
        (300, 1, 8),
        (130, 5, 1),
        (3, 257, 64),
        (256, 128, 13),
        (200, 260, 36),
        (129, 132, 20),
    ];
    for &(m, n, k) in &shapes {
        let p = problem_dims((m * n + k) as u64, m, n, k);
        let got = run_cpu(&p).unwrap();
        compare(&got, &reference(&p)).unwrap_or_else(|e| panic!("{m} x {n} x {k}: {e}"));
    }
}

/// k = 0 scales C by beta; beta = 0 ignores C (even NaN), as in BLAS.
#[test]
fn k_zero_and_beta_zero_follow_blas() {
    let p = problem_dims(3, 70, 90, 0);
    let got = run_cpu(&p).unwrap();
    for (g, c) in got.c.iter().zip(&p.c) {
        assert_eq!(*g, p.beta * c);
    }
    let mut p = problem_dims(4, 40, 50, 20);
    p.beta = 0.0;
    p.c.iter_mut().for_each(|v| *v = f32::NAN);
    let got = run_cpu(&p).unwrap();
    // The reference with C = 0 is what beta = 0 means (and keeps the input NaNs out of it).
    p.c.iter_mut().for_each(|v| *v = 0.0);
    compare(&got, &reference(&p)).unwrap();
}
