//! The kernel on the CPU executor against the scalar transpose.
use transpose::{compare, problem, problem_dims, reference, run_cpu, SIZES};

#[test]
fn cpu_matches_reference_for_every_size() {
    for (seed, &s) in SIZES.iter().enumerate() {
        let p = problem(seed as u64, s);
        let got = run_cpu(&p).unwrap();
        compare(&got, &reference(&p)).unwrap_or_else(|e| panic!("{} x {}: {e}", p.rows, p.cols));
    }
}

/// Tall, wide, a single row or column, exact tile multiples.
#[test]
fn cpu_matches_reference_for_edge_shapes() {
    for &(r, c) in &[(1, 1000), (1000, 1), (64, 96), (33, 2), (2, 33), (513, 31)] {
        let p = problem_dims((r * 7 + c) as u64, r, c);
        let got = run_cpu(&p).unwrap();
        compare(&got, &reference(&p)).unwrap_or_else(|e| panic!("{r} x {c}: {e}"));
    }
}

/// Transposing twice gives the input back.
#[test]
fn transpose_is_an_involution() {
    let p = problem_dims(9, 45, 77);
    let once = run_cpu(&p).unwrap();
    let twice = run_cpu(&transpose::Problem { rows: 77, cols: 45, input: once }).unwrap();
    compare(&twice, &p.input).unwrap();
}
