//! sparse kernels on the CPU executor.
use oxide_suite::sparse as sp;

/// (rows, cols, min entries per row, max entries per row): a single row, empty rows, rows
/// shorter and longer than a warp, row counts off the block size.
const MATRICES: &[(usize, usize, usize, usize)] =
    &[(1, 1, 1, 1), (1, 5, 0, 3), (3, 7, 0, 0), (31, 17, 0, 5), (257, 100, 1, 40), (300, 1000, 30, 70)];

#[test]
fn spmv_csr_matches_reference() {
    for (seed, &(r, c, lo, hi)) in MATRICES.iter().enumerate() {
        let p = sp::spmv_problem(seed as u64, r, c, lo, hi);
        let got = sp::spmv_csr_cpu(&p).unwrap();
        sp::spmv_compare(&p, &got, &sp::spmv_reference(&p)).unwrap_or_else(|e| panic!("{r}x{c}: {e}"));
    }
}

#[test]
fn spmv_ell_matches_reference() {
    for (seed, &(r, c, lo, hi)) in MATRICES.iter().enumerate() {
        let p = sp::spmv_problem(seed as u64 + 10, r, c, lo, hi);
        let e = sp::to_ell(&p.a);
        let got = sp::spmv_ell_cpu(&p, &e).unwrap();
        sp::spmv_compare(&p, &got, &sp::spmv_reference(&p)).unwrap_or_else(|e| panic!("{r}x{c}: {e}"));
    }
}

#[test]
fn spmv_csr_warp_matches_reference() {
    for (seed, &(r, c, lo, hi)) in MATRICES.iter().enumerate() {
        let p = sp::spmv_problem(seed as u64 + 20, r, c, lo, hi);
        let got = sp::spmv_csr_warp_cpu(&p).unwrap();
        sp::spmv_compare(&p, &got, &sp::spmv_reference(&p)).unwrap_or_else(|e| panic!("{r}x{c}: {e}"));
    }
}

/// The identity matrix gives `x` back exactly, on every kernel.
#[test]
fn spmv_identity_gives_x() {
    let mut p = sp::spmv_problem(7, 70, 70, 1, 1);
    p.a.col_idx = (0..70).collect();
    p.a.vals = vec![1.0; 70];
    assert_eq!(sp::spmv_csr_cpu(&p).unwrap(), p.x);
    assert_eq!(sp::spmv_csr_warp_cpu(&p).unwrap(), p.x);
    assert_eq!(sp::spmv_ell_cpu(&p, &sp::to_ell(&p.a)).unwrap(), p.x);
}

#[test]
fn gather_indexed_matches_reference() {
    for (seed, &(n, m)) in [(1usize, 1usize), (1, 100), (255, 3), (257, 1000), (5000, 70_000)].iter().enumerate() {
        let p = sp::gather_problem(seed as u64, n, m);
        let got = sp::gather_cpu(&p).unwrap();
        sp::gather_compare(&got, &sp::gather_reference(&p)).unwrap_or_else(|e| panic!("n = {n}: {e}"));
    }
}
