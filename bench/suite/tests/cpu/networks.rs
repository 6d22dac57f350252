//! network kernels on the CPU executor.
use oxide_suite::networks::*;

#[test]
fn bitonic_sort_sorts() {
    for n in [1, 2, 64, 2048] {
        let keys = bitonic_problem(n as u64, n);
        bitonic_compare(&bitonic_cpu(&keys).unwrap(), &bitonic_reference(&keys))
            .unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
    assert!(bitonic_cpu(&[3, 2, 1]).is_err());
}

#[test]
fn fft_reference_is_a_dft() {
    let p = fft_problem(11, 32, 2);
    let r = fft_reference(&p, 2);
    for f in 0..2 {
        let d = dft(&p.data[f * 32..(f + 1) * 32]);
        for (i, &(re, im)) in d.iter().enumerate() {
            let j = i.reverse_bits() >> (usize::BITS - 5);
            let (gr, gi, _) = r[f * 32 + j];
            assert!((gr - re).abs() < 1e-9 && (gi - im).abs() < 1e-9, "fft {f} bin {i}: {gr} {gi} vs {re} {im}");
        }
    }
}

#[test]
fn fft_stages_match_the_reference() {
    for (n, batch) in [(2, 1), (8, 3), (256, 5), (1024, 2)] {
        let p = fft_problem(n as u64, n, batch);
        let got = fft_cpu(&p).unwrap();
        fft_compare(&got, &fft_reference(&p, batch), n).unwrap_or_else(|e| panic!("n = {n} x {batch}: {e}"));
    }
}
