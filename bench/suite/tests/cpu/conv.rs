//! conv kernels on the CPU executor.
use oxide_suite::conv as c;

/// 1-pixel edges, non-multiples of the 32×8 block.
const SHAPES: &[(usize, usize)] = &[(1, 1), (1, 9), (7, 1), (2, 2), (33, 9), (100, 17), (64, 16)];

#[test]
fn conv1d_15_matches_reference() {
    // Shorter than the 15 taps, one off a block, several blocks.
    for (seed, &n) in [1usize, 2, 7, 15, 16, 255, 257, 1000].iter().enumerate() {
        let p = c::conv1d_problem(seed as u64, n);
        let got = c::conv1d_cpu(&p).unwrap();
        c::conv1d_compare(&got, &c::conv1d_reference(&p)).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}

/// An impulse reproduces the taps, reversed (convolution as written is a correlation).
#[test]
fn conv1d_15_impulse_gives_the_taps() {
    let mut p = c::conv1d_problem(4, 31);
    p.x.iter_mut().for_each(|v| *v = 0.0);
    p.x[15] = 1.0;
    let got = c::conv1d_cpu(&p).unwrap();
    let want: Vec<f32> = (0..c::TAPS).map(|k| p.taps[c::TAPS - 1 - k]).collect();
    assert_eq!(got[8..8 + c::TAPS], want[..]);
}

#[test]
fn conv2d_3x3_matches_reference() {
    for (seed, &(w, h)) in SHAPES.iter().enumerate() {
        let p = c::conv2d_problem(seed as u64, w, h);
        let got = c::conv2d_cpu(&p).unwrap();
        c::conv2d_compare(&got, &c::conv2d_reference(&p)).unwrap_or_else(|e| panic!("{w}x{h}: {e}"));
    }
}

#[test]
fn gauss_separable_matches_reference() {
    for (seed, &(w, h)) in SHAPES.iter().enumerate() {
        let p = c::gauss_problem(seed as u64, w, h);
        let got = c::gauss_cpu(&p).unwrap();
        c::gauss_compare(&got, &c::gauss_reference(&p)).unwrap_or_else(|e| panic!("{w}x{h}: {e}"));
    }
}

/// Normalised taps and clamped edges keep a constant image constant (to rounding).
#[test]
fn gauss_separable_keeps_a_constant_image() {
    let mut p = c::gauss_problem(5, 40, 11);
    p.image.px.iter_mut().for_each(|v| *v = 0.75);
    assert!(c::gauss_cpu(&p).unwrap().iter().all(|&v| (v - 0.75).abs() < 1e-6));
}
