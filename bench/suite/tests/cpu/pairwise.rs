//! pairwise kernels on the CPU executor.
use oxide_suite::pairwise::*;

#[test]
fn nbody_matches_the_reference() {
    // Not a multiple of the tile: the last tile is padded with massless bodies.
    for n in [1, 37, 300] {
        let p = nbody_problem(7 + n as u64, n);
        let got = nbody_cpu(&p).unwrap();
        nbody_compare(&got, &nbody_reference(&p)).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}

#[test]
fn kmeans_matches_the_reference() {
    for (n, k, dims) in [(1, 1, 1), (255, 7, 3), (700, 64, 16), (333, 5, 33)] {
        let p = kmeans_problem(3 + n as u64, n, k, dims);
        let got = kmeans_cpu(&p).unwrap();
        let want = kmeans_reference(&p);
        kmeans_compare(&p, &got, &want).unwrap_or_else(|e| panic!("{n} x {dims}, k = {k}: {e}"));
        assert!(got.iter().all(|&l| (l as usize) < k));
    }
}

#[test]
fn kmeans_compare_catches_a_wrong_label() {
    let p = kmeans_problem(5, 100, 8, 4);
    let mut got = kmeans_reference(&p);
    got[17] = (got[17] + 1) % 8;
    assert!(kmeans_compare(&p, &got, &kmeans_reference(&p)).is_err());
}
