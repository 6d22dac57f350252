//! The kernel on the CPU executor against the scalar reference, for every test size.
#[test]
fn cpu_matches_reference_for_every_size() {
    for (seed, &cols) in stencil::SIZES.iter().enumerate() {
        let p = stencil::problem(seed as u64, cols);
        let got = stencil::run_cpu(&p).unwrap();
        stencil::compare(&got, &stencil::reference(&p)).unwrap_or_else(|e| panic!("{} x {cols}: {e}", p.rows));
    }
}

/// A constant field stays constant times the weight sum (the clamped border included).
#[test]
fn cpu_constant_field_scales_by_the_weight_sum() {
    let mut p = stencil::problem_with(3, 19, 45);
    p.input.iter_mut().for_each(|v| *v = 1.0);
    p.w = [0.5, 0.125, 0.125, 0.125, 0.125];
    assert!(stencil::run_cpu(&p).unwrap().iter().all(|&v| v == 1.0));
}
