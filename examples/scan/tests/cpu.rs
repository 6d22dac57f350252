//! The kernels on the CPU executor against the scalar reference, for every test size.
#[test]
fn cpu_matches_reference_for_every_size() {
    for (seed, &n) in scan::SIZES.iter().enumerate() {
        let p = scan::problem(seed as u64, n);
        let got = scan::run_cpu(&p).unwrap();
        scan::compare(&got, &scan::reference(&p)).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}

#[test]
fn levels_and_schedule_cover_every_level() {
    assert_eq!(scan::levels(1), [1]);
    assert_eq!(scan::levels(1024), [1024]);
    assert_eq!(scan::levels(1025), [1025, 1]);
    assert_eq!(scan::levels(1 << 28), [1 << 28, 1 << 18, 1 << 8]);
    use scan::Step::*;
    assert_eq!(scan::schedule(1 << 28), [(Totals, 0), (Totals, 1), (Scan, 2), (Scan, 1), (Scan, 0)]);
}

/// All ones: the scan is 1, 2, 3, ... across block and level boundaries.
#[test]
fn cpu_scan_of_ones_counts() {
    let p = scan::Problem { x: vec![1; 70_001] };
    let y = scan::run_cpu(&p).unwrap();
    assert!(y.iter().enumerate().all(|(i, &v)| v as usize == i + 1));
}
