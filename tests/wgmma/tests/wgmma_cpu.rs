//! The CPU executor does not emulate wgmma: the launch returns an Err naming the operation
//! (never a wrong answer).
use oxide_rt::{Bf16, LaunchConfig, E4M3};
use wgmma_ops::kernels::{self, A_ROWS, K, K_FP8, SHARED_BYTES};

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

/// The same for FP8: an Err naming the operation, no output.
#[test]
fn cpu_executor_refuses_fp8_wgmma_too() {
    let a = vec![E4M3::from_f32(1.0); A_ROWS * K_FP8];
    let b = vec![E4M3::from_f32(1.0); 64 * K_FP8];
    let mut out = vec![0f32; 64 * 64];
    let cfg = LaunchConfig::new(1, 128).shared_mem_bytes(SHARED_BYTES as u32);
    let e = kernels::cpu_wgmma_e4m3_n64_with(cfg, 3, &a, &b, &mut out).unwrap_err().to_string();
    assert!(e.contains("(device::wgmma) cannot run on the CPU executor"), "{e}");
    assert!(out.iter().all(|v| *v == 0.0), "no output is written");
}

#[test]
fn ring_descriptors_equal_per_tile_descriptors() {
    let mut out = vec![0u32; 32];
    let cfg = LaunchConfig::new(1, 32).shared_mem_bytes((3 * 64 * 64 * 2 + 1024) as u32);
    kernels::cpu_ring_descriptors_with(cfg, &mut out).unwrap();
    assert!(out.iter().all(|v| *v == 1), "{out:?}");
}

#[test]
fn impossible_descriptors_are_errors_naming_the_rule() {
    let cfg = LaunchConfig::new(1, 32).shared_mem_bytes((64 * 64 * 2 + 1024) as u32);
    let mut out = vec![0u32; 32];
    for (case, want) in [
        (0, "row 0, k 64 of a 64 x 64 tile"),
        (1, "row 4, k 0 of a 64 x 64 tile"),
        (2, "not 1024-byte aligned"),
        (3, "in a view of 64 elements"),
        (4, "k0 a multiple of 32 with k0 + 32 <= K"),
    ] {
        let e = kernels::cpu_bad_descriptor_with(cfg, case, &mut out).unwrap_err().to_string();
        assert!(e.contains(want), "case {case}: {e}");
    }
}

/// Warp specialisation's register split: roles by warpgroup on the executor (where
/// `setmaxnreg` itself does nothing), and a block that is not whole warpgroups refused.
#[test]
fn warpgroup_registers_gives_each_warpgroup_its_role() {
    let mut out = vec![0u32; 384];
    kernels::cpu_warpgroup_roles_with(LaunchConfig::new(1, 384), 0, &mut out).unwrap();
    for (t, v) in out.iter().enumerate() {
        let want = match t / 128 {
            0 => 1000,
            wg => 2000 + wg as u32 - 1,
        };
        assert_eq!(*v, want, "thread {t}");
    }
    let mut out = vec![0u32; 192];
    let e = kernels::cpu_warpgroup_roles_with(LaunchConfig::new(1, 192), 0, &mut out).unwrap_err().to_string();
    assert!(e.contains("a block of 192 threads is not a whole number of 128-thread warpgroups"), "{e}");
}

/// `DisjointPersistentWgmmaTiles` on the executor: each element written once, by the block whose
/// round reaches its tile (see `kernels::persistent_tiles`).
#[test]
fn persistent_tiles_partition_the_matrix() {
    use oxide_rt::Slice2d;
    for (rows, cols, (gx, gy)) in wgmma_ops::PERSISTENT_CASES {
        let mut c = vec![0u32; rows * cols];
        let blocks = (gx * gy) as usize;
        let mut counts = vec![0u32; blocks * 384];
        let cfg = LaunchConfig::new((gx, gy, 1), 384);
        kernels::cpu_persistent_tiles_with(cfg, Slice2d::new(&mut c, cols), &mut counts).unwrap();
        assert_eq!(c, wgmma_ops::persistent_owners(rows, cols, blocks), "{rows} x {cols} on {gx} x {gy}");
        assert_eq!(counts.iter().map(|&n| n as usize).sum::<usize>(), rows * cols, "{rows} x {cols}");
    }
}

/// `WgmmaTile::store` on the executor: every element where `coord` puts it (16-byte rows and
/// ragged edges); lanes on tiles of different rounds are a panic, returned as `Err`.
#[test]
fn tile_store_puts_each_element_in_place() {
    use oxide_rt::{Slice2d, F16};
    for (rows, cols, (gx, gy)) in wgmma_ops::PERSISTENT_CASES {
        let mut c = vec![F16::from_f32(0.0); rows * cols];
        let cfg = LaunchConfig::new((gx, gy, 1), 384);
        kernels::cpu_persistent_store_with(cfg, 0, Slice2d::new(&mut c, cols)).unwrap();
        let got: Vec<f32> = c.iter().map(|v| v.to_f32()).collect();
        let want = wgmma_ops::persistent_store_expected(rows, cols, (gx * gy) as usize);
        assert!(
            got == want,
            "{rows} x {cols} on {gx} x {gy}: first difference at {:?}",
            got.iter().zip(&want).position(|(a, b)| a != b)
        );
    }
    let mut c = vec![F16::from_f32(0.0); 300 * 200];
    let e = kernels::cpu_persistent_store_with(LaunchConfig::new(2, 384), 1, Slice2d::new(&mut c, 200))
        .unwrap_err()
        .to_string();
    assert!(e.contains("tiles of different rounds"), "{e}");
}
