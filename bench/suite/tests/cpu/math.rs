//! math kernels on the CPU executor.
use oxide_suite::math::*;

#[test]
fn mandelbrot_matches_the_reference_exactly() {
    // Odd sizes: partial blocks in both dimensions.
    for (w, h) in [(1, 1), (45, 19), (97, 64)] {
        let p = mandel_problem(w as u64, w, h, 100);
        let got = mandel_cpu(&p).unwrap();
        let want = mandel_reference(&p);
        mandel_compare(&got, &want, 0.0).unwrap_or_else(|e| panic!("{w} x {h}: {e}"));
        assert!(want.contains(&100) && want.iter().any(|&n| n < 5) || w * h < 100);
    }
}

#[test]
fn transcend_f32_matches_the_reference() {
    for n in [1, 255, 1000] {
        let x = transcend_problem_f32(n as u64, n);
        let got: Vec<f64> = transcend_f32_cpu(&x).unwrap().into_iter().map(f64::from).collect();
        let want = transcend_reference(x.iter().map(|&v| v as f64));
        transcend_compare(&got, &want, U_F32).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}

#[test]
fn transcend_f64_matches_the_reference() {
    for n in [1, 257, 1000] {
        let x = transcend_problem_f64(n as u64, n);
        let got = transcend_f64_cpu(&x).unwrap();
        let want = transcend_reference(x.iter().copied());
        transcend_compare(&got, &want, U_F64).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}

#[test]
fn bits_mix_matches_the_reference() {
    for n in [1, 2, 255, 4099] {
        let p = bits_problem(n as u64, n);
        bits_compare(&bits_cpu(&p).unwrap(), &bits_reference(&p)).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}
