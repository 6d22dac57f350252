//! The kernel on the CPU executor against the f64 reference: one tile, edge tiles in every
//! direction, several k-tiles (so the cp.async ring wraps around) and a k that is not a
//! multiple of the k-tile.
use bf16_gemm::{compare, problem, run_cpu};

#[test]
fn cpu_matches_reference() {
    for &(m, n, k) in &[(128, 128, 32), (200, 136, 72), (17, 8, 8), (130, 264, 168)] {
        let p = problem((m * n + k) as u64, m, n, k);
        let got = run_cpu(&p).unwrap();
        compare(&p, &got, 1).unwrap_or_else(|e| panic!("{m} x {n} x {k}: {e}"));
    }
}

#[test]
fn sizes_the_copies_cannot_serve_are_refused() {
    let p = problem(1, 16, 12, 16);
    let e = run_cpu(&p).unwrap_err();
    assert!(e.to_string().contains("multiples of 8"), "{e}");
}
