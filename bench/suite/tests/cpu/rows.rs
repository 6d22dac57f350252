//! row kernels on the CPU executor.
use oxide_suite::rows::*;

#[test]
fn layernorm_matches_the_reference() {
    // Rows shorter than a block, one past it, several per thread.
    for (rows, cols) in [(1, 1), (3, 31), (5, 257), (2, 1000)] {
        let p = layernorm_problem((rows * cols) as u64, rows, cols);
        layernorm_compare(&layernorm_cpu(&p).unwrap(), &layernorm_reference(&p))
            .unwrap_or_else(|e| panic!("{rows} x {cols}: {e}"));
    }
}

#[test]
fn matvec_matches_the_reference() {
    // Row counts not a multiple of the block's 8 warps; columns shorter than a warp.
    for (rows, cols) in [(1, 1), (9, 7), (13, 100), (17, 1025)] {
        let p = matvec_problem((rows + cols) as u64, rows, cols);
        matvec_compare(&matvec_cpu(&p).unwrap(), &matvec_reference(&p), cols)
            .unwrap_or_else(|e| panic!("{rows} x {cols}: {e}"));
    }
}

#[test]
fn xent_matches_the_reference() {
    for (rows, cols) in [(1, 1), (3, 10), (4, 257), (2, 1500)] {
        let p = xent_problem((rows * 31 + cols) as u64, rows, cols);
        xent_compare(&xent_cpu(&p).unwrap(), &xent_reference(&p), cols)
            .unwrap_or_else(|e| panic!("{rows} x {cols}: {e}"));
    }
}
