//! stencil3d kernels on the CPU executor.
use oxide_suite::stencil3d as s;

/// Grids with a side of 1, 2 and 3 (all or mostly boundary), non-multiples of the 32×4×2 block.
const SHAPES: &[(usize, usize, usize)] =
    &[(1, 1, 1), (2, 3, 1), (1, 5, 7), (3, 3, 3), (33, 5, 3), (37, 9, 5), (64, 4, 2)];

#[test]
fn stencil7_3d_matches_reference() {
    for (seed, &(nx, ny, nz)) in SHAPES.iter().enumerate() {
        let p = s::stencil7_problem(seed as u64, nx, ny, nz);
        let got = s::stencil7_cpu(&p).unwrap();
        s::stencil7_compare(&got, &s::stencil7_reference(&p)).unwrap_or_else(|e| panic!("{nx}x{ny}x{nz}: {e}"));
    }
}

/// Boundary cells are copied bit for bit, and a constant field stays constant inside.
#[test]
fn stencil7_3d_copies_the_boundary() {
    let mut p = s::stencil7_problem(9, 6, 5, 4);
    p.input.iter_mut().for_each(|v| *v = 0.5);
    (p.c0, p.c1) = (0.25, 0.125);
    assert!(s::stencil7_cpu(&p).unwrap().iter().all(|&v| v == 0.5));
}

#[test]
fn box27_3d_matches_reference() {
    for (seed, &(nx, ny, nz)) in SHAPES.iter().enumerate() {
        let p = s::box27_problem(seed as u64 + 100, nx, ny, nz);
        let got = s::box27_cpu(&p).unwrap();
        s::box27_compare(&got, &s::box27_reference(&p)).unwrap_or_else(|e| panic!("{nx}x{ny}x{nz}: {e}"));
    }
}
