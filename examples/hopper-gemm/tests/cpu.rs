//! Checks that need no GPU: a bad shape is an error naming the fix before anything runs.
use hopper_gemm::{check, problem};
use oxide_rt::{Bf16, E4M3};

#[test]
fn bad_shapes_are_errors_naming_the_fix() {
    let e = check(&problem::<Bf16>(1, 64, 64, 60)).unwrap_err().to_string();
    assert!(e.contains("k = 60 must be a multiple of 8 for bf16"), "{e}");
    check(&problem::<Bf16>(1, 64, 64, 64)).unwrap();
    let e = check(&problem::<E4M3>(1, 64, 64, 72)).unwrap_err().to_string();
    assert!(e.contains("k = 72 must be a multiple of 16 for e4m3"), "{e}");
    check(&problem::<E4M3>(1, 64, 64, 80)).unwrap();
}
