//! atomic kernels on the CPU executor.
use oxide_suite::atomics::*;

#[test]
fn scatter_add_matches_the_reference() {
    for (n, bins) in [(1, 1), (255, 7), (10_000, 64)] {
        let p = scatter_problem(n as u64, n, bins);
        let want = scatter_reference(&p);
        scatter_compare(&scatter_cpu(&p).unwrap(), &want).unwrap_or_else(|e| panic!("n = {n}, {bins} bins: {e}"));
        assert_eq!(want.iter().map(|b| b.2).sum::<usize>(), n);
    }
}

#[test]
fn histogram_matches_the_reference() {
    for (n, bins) in [(1, 1), (257, 3), (10_001, 256)] {
        let p = histogram_problem(n as u64, n, bins);
        histogram_compare(&histogram_cpu(&p).unwrap(), &histogram_reference(&p))
            .unwrap_or_else(|e| panic!("n = {n}, {bins} bins: {e}"));
    }
}

#[test]
fn compaction_keeps_every_key_below_the_threshold_once() {
    for n in [1, 257, 10_001] {
        let p = compact_problem(n as u64, n);
        let (got, count) = compact_cpu(&p).unwrap();
        compact_compare(&got, count, &compact_reference(&p)).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}
