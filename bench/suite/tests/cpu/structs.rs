//! struct kernels on the CPU executor.
use oxide_suite::structs::*;

#[test]
fn particles_match_the_reference_exactly() {
    for n in [1, 255, 2049] {
        let p = particles_problem(n as u64, n);
        let want = particles_reference(&p);
        particles_compare(&particles_cpu(&p).unwrap(), &want).unwrap_or_else(|e| panic!("n = {n}: {e}"));
        if n > 1000 {
            // Some particles bounced.
            assert!(want.py.iter().filter(|&&y| y == 0.0).count() > 10);
        }
    }
}

#[test]
fn mat4_products_match_the_reference() {
    assert_eq!(std::mem::align_of::<Mat4>(), 16);
    assert_eq!(std::mem::size_of::<Mat4>(), 64);
    for n in [1, 255, 1000] {
        let p = mat4_problem(n as u64, n);
        mat4_compare(&mat4_cpu(&p).unwrap(), &mat4_reference(&p)).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}
