//! The CPU executor does not emulate wgmma: the launch returns an Err naming the operation
//! (never a wrong answer).
use oxide_rt::{Bf16, LaunchConfig};
use wgmma_ops::kernels::{self, A_ROWS, K, SHARED_BYTES};

#[test]
fn cpu_executor_refuses_wgmma_with_an_error_naming_it() {
    let a = vec![Bf16::from_f32(1.0); A_ROWS * K];
    let b = vec![Bf16::from_f32(1.0); 64 * K];
    let mut out = vec![0f32; 64 * 64];
    let cfg = LaunchConfig::new(1, 128).shared_mem_bytes(SHARED_BYTES as u32);
    let e = kernels::cpu_wgmma_bf16_n64_with(cfg, 3, &a, &b, &mut out).unwrap_err().to_string();
    assert!(e.contains("`wgmma.fence.sync.aligned` (device::wgmma) cannot run on the CPU executor"), "{e}");
    assert!(e.contains("run this kernel on an sm_90 GPU"), "{e}");
    assert!(out.iter().all(|v| *v == 0.0), "no output is written");
}
