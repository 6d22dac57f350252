//! The kernel on the CPU executor against the scalar reference, for every test size.
#[test]
fn cpu_matches_reference_for_every_size() {
    for (seed, &cols) in softmax::SIZES.iter().enumerate() {
        let p = softmax::problem(seed as u64, cols);
        let got = softmax::run_cpu(&p).unwrap();
        softmax::compare(&got, &softmax::reference(&p)).unwrap_or_else(|e| panic!("{} x {cols}: {e}", p.rows));
    }
}

/// Every row of a softmax sums to 1 and a uniform row gives 1/cols everywhere.
#[test]
fn cpu_rows_sum_to_one_and_constant_rows_are_uniform() {
    let mut p = softmax::problem_with(7, 9, 300);
    p.x[300..600].iter_mut().for_each(|v| *v = 3.25);
    let y = softmax::run_cpu(&p).unwrap();
    for (r, row) in y.chunks(300).enumerate() {
        let s: f64 = row.iter().map(|&v| v as f64).sum();
        assert!((s - 1.0).abs() < 1e-5, "row {r} sums to {s}");
    }
    assert!(y[300..600].iter().all(|&v| (v - 1.0 / 300.0).abs() < 1e-8));
}
