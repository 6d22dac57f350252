//! Without a Hopper GPU the CPU executor refuses the kernel with an Err naming wgmma — never a
//! wrong answer.
use hopper_gemm::{problem, run_cpu};
use oxide_rt::{Bf16, F16};

#[test]
fn cpu_executor_refuses_with_an_error() {
    let e = run_cpu(&problem::<Bf16>(1, 128, 256, 64)).unwrap_err().to_string();
    assert!(e.contains("cannot run on the CPU executor") && e.contains("wgmma"), "{e}");
    let e = run_cpu(&problem::<F16>(1, 64, 64, 64)).unwrap_err().to_string();
    assert!(e.contains("cannot run on the CPU executor") && e.contains("wgmma"), "{e}");
}

#[test]
fn bad_shapes_are_errors() {
    let e = run_cpu(&problem::<Bf16>(1, 64, 64, 60)).unwrap_err().to_string();
    assert!(e.contains("k = 60 must be a multiple of 8"), "{e}");
}
