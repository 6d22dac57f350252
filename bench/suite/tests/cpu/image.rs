//! image kernels on the CPU executor.
use oxide_suite::image as im;

/// 1-pixel edges, non-multiples of the 32×8 block.
const SHAPES: &[(usize, usize)] = &[(1, 1), (1, 9), (7, 1), (2, 2), (33, 9), (100, 17), (64, 8)];

#[test]
fn rgb_to_gray_matches_reference() {
    for (seed, &(w, h)) in SHAPES.iter().enumerate() {
        let p = im::rgb_to_gray_problem(seed as u64, w, h);
        let got = im::rgb_to_gray_cpu(&p).unwrap();
        im::rgb_to_gray_compare(&got, &im::rgb_to_gray_reference(&p)).unwrap_or_else(|e| panic!("{w}x{h}: {e}"));
    }
}

#[test]
fn rgb_to_gray_keeps_grays_and_extremes() {
    let mut p = im::rgb_to_gray_problem(1, 4, 1);
    p.rgb = vec![0, 0, 0, 255, 255, 255, 128, 128, 128, 255, 0, 0];
    assert_eq!(im::rgb_to_gray_cpu(&p).unwrap(), vec![0, 255, 128, 77]);
}

#[test]
fn rgba16_levels_matches_reference() {
    for (seed, &n) in [1usize, 2, 255, 257, 1000, 4099].iter().enumerate() {
        let p = im::rgba16_levels_problem(seed as u64, n);
        let got = im::rgba16_levels_cpu(&p).unwrap();
        im::rgba16_levels_compare(&got, &im::rgba16_levels_reference(&p)).unwrap_or_else(|e| panic!("{n} pixels: {e}"));
    }
}

/// The ends saturate: black stays black with contrast > 1, white stays white, alpha is kept.
#[test]
fn rgba16_levels_saturates() {
    let mut p = im::rgba16_levels_problem(2, 2);
    (p.contrast, p.brightness) = (1.5, 0.0);
    p.px = vec![0, 0, 0, 7, 65535, 65535, 65535, 9];
    assert_eq!(im::rgba16_levels_cpu(&p).unwrap(), vec![0, 0, 0, 7, 65535, 65535, 65535, 9]);
}

#[test]
fn box_blur_rgb_matches_reference() {
    for (seed, &(w, h)) in SHAPES.iter().enumerate() {
        let p = im::box_blur_rgb_problem(seed as u64 + 50, w, h);
        let got = im::box_blur_rgb_cpu(&p).unwrap();
        im::box_blur_rgb_compare(&got, &im::box_blur_rgb_reference(&p)).unwrap_or_else(|e| panic!("{w}x{h}: {e}"));
    }
}

#[test]
fn box_blur_rgb_keeps_a_flat_image() {
    let mut p = im::box_blur_rgb_problem(3, 35, 10);
    p.px.iter_mut().for_each(|q| *q = [10, 200, 255]);
    assert!(im::box_blur_rgb_cpu(&p).unwrap().iter().all(|&q| q == [10, 200, 255]));
}
