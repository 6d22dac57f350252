//! The kernels on the CPU executor against the f64 reference: one tile, edge tiles in every
//! direction, several k-tiles (so the cp.async ring wraps around) and a k that is not a
//! multiple of the k-tile.
use bf16_gemm::{compare, problem, reference_at, run_cpu, Epilogue};

const SHAPES: [(usize, usize, usize); 4] = [(128, 128, 32), (200, 136, 72), (17, 8, 8), (130, 264, 168)];

fn matches_reference(epilogue: Epilogue) {
    for (m, n, k) in SHAPES {
        let p = problem((m * n + k) as u64, m, n, k);
        let got = run_cpu(&p, epilogue).unwrap();
        compare(&p, &got, 1, epilogue).unwrap_or_else(|e| panic!("{epilogue:?} {m} x {n} x {k}: {e}"));
    }
}

#[test]
fn cpu_matches_reference() {
    matches_reference(Epilogue::None);
}

#[test]
fn cpu_bias_gelu_matches_reference() {
    matches_reference(Epilogue::BiasGelu);
}

/// The fused reference is not the plain one: the bias and GELU both change the numbers, on
/// both sides of zero (so a kernel that skipped the epilogue would fail the comparison).
#[test]
fn bias_gelu_reference_differs_from_the_product() {
    let p = problem(3, 32, 16, 16);
    let (mut negatives, mut changed) = (0, 0);
    for i in 0..p.m {
        for j in 0..p.n {
            let (dot, tol) = reference_at(&p, i, j, Epilogue::None);
            let (y, _) = reference_at(&p, i, j, Epilogue::BiasGelu);
            negatives += usize::from(dot + f64::from(p.bias[j]) < 0.0);
            changed += usize::from((y - dot).abs() > 4.0 * tol);
        }
    }
    assert!(negatives > 50 && changed > 400, "negatives {negatives}, changed {changed} of 512");
}

#[test]
fn sizes_the_copies_cannot_serve_are_refused() {
    let p = problem(1, 16, 12, 16);
    let e = run_cpu(&p, Epilogue::BiasGelu).unwrap_err();
    assert!(e.to_string().contains("multiples of 8"), "{e}");
}
