//! The kernel on the CPU executor against the scalar reference, for every test size.
#[test]
fn cpu_matches_reference_for_every_size() {
    for (seed, &n) in saxpy::SIZES.iter().enumerate() {
        let p = saxpy::problem(seed as u64, n);
        let got = saxpy::run_cpu(&p).unwrap();
        saxpy::compare(&got, &saxpy::reference(&p)).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}
