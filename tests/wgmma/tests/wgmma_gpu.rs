//! Every wgmma shape on bf16, f16, e4m3 and e5m2, in every swizzle mode, on the GPU against the f64
//! reference. Skips (printing why) without a GPU, unless OXIDE_REQUIRE_GPU=1.
use oxide_rt::cuda::CudaSlice;
use oxide_rt::host::{synchronize, Gpu};
use oxide_rt::{Bf16, LaunchConfig, E4M3, E5M2, F16};
use std::sync::OnceLock;
use wgmma_ops::kernels::{self, A_ROWS, K, K_FP8, SHARED_BYTES};
use wgmma_ops::{floats, gather, reference, within};

fn gpu() -> Option<&'static Gpu> {
    static GPU: OnceLock<Option<Gpu>> = OnceLock::new();
    GPU.get_or_init(wgmma_ops::gpu_or_skip).as_ref()
}

fn cfg() -> LaunchConfig {
    LaunchConfig::new(1, 128).shared_mem_bytes(SHARED_BYTES as u32)
}

const MODES: [&str; 4] = ["no swizzle", "32B swizzle", "64B swizzle", "128B swizzle"];

type Launch<T> = fn(&Gpu, u32, &CudaSlice<T>, &CudaSlice<T>, &mut CudaSlice<f32>) -> Result<(), oxide_rt::Error>;

/// Runs `launch` for a 64 x n x k product in each swizzle mode and checks it (`k` = 64 on 16-bit
/// types, 128 on FP8).
fn check<T: oxide_rt::KernelArg + Copy>(
    what: &str,
    n: usize,
    k: usize,
    convert: fn(f32) -> T,
    back: fn(T) -> f32,
    launch: Launch<T>,
) {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let a: Vec<T> = floats(n as u64, A_ROWS * k).into_iter().map(convert).collect();
    let b: Vec<T> = floats(n as u64 + 1000, n * k).into_iter().map(convert).collect();
    let exact = |v: &[T]| v.iter().map(|x| back(*x)).collect::<Vec<f32>>();
    let (want, tol) = reference(&exact(&a), &exact(&b), n, k, k == K_FP8);
    let (da, db) = (s.clone_htod(&a).unwrap(), s.clone_htod(&b).unwrap());
    let mut failures = Vec::new();
    for (mode, name) in MODES.iter().enumerate() {
        let mut out = s.alloc_zeros::<f32>(64 * n).unwrap();
        launch(g, mode as u32, &da, &db, &mut out).unwrap();
        synchronize(s).unwrap();
        let got = gather(&s.clone_dtoh(&out).unwrap(), n);
        if let Err(e) = within(&got, &want, &tol, n) {
            failures.push(format!("{what} 64x{n}x{}, {name}: {e}", k / 4));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

macro_rules! tests {
    ($($test:ident: $t:ty, $n:literal, $k:expr, $launch:ident;)*) => {$(
        #[test]
        fn $test() {
            check::<$t>(stringify!($t), $n, $k, <$t>::from_f32, <$t>::to_f32, |g, mode, a, b, out| {
                kernels::$launch(&g.stream, cfg(), mode, a, b, out)
            });
        }
    )*};
}
tests! {
    bf16_m64n64k16: Bf16, 64, K, launch_wgmma_bf16_n64_with;
    bf16_m64n128k16: Bf16, 128, K, launch_wgmma_bf16_n128_with;
    bf16_m64n256k16: Bf16, 256, K, launch_wgmma_bf16_n256_with;
    f16_m64n64k16: F16, 64, K, launch_wgmma_f16_n64_with;
    f16_m64n128k16: F16, 128, K, launch_wgmma_f16_n128_with;
    f16_m64n256k16: F16, 256, K, launch_wgmma_f16_n256_with;
    e4m3_m64n64k32: E4M3, 64, K_FP8, launch_wgmma_e4m3_n64_with;
    e4m3_m64n128k32: E4M3, 128, K_FP8, launch_wgmma_e4m3_n128_with;
    e4m3_m64n256k32: E4M3, 256, K_FP8, launch_wgmma_e4m3_n256_with;
    e5m2_m64n64k32: E5M2, 64, K_FP8, launch_wgmma_e5m2_n64_with;
    e5m2_m64n128k32: E5M2, 128, K_FP8, launch_wgmma_e5m2_n128_with;
    e5m2_m64n256k32: E5M2, 256, K_FP8, launch_wgmma_e5m2_n256_with;
}

/// `warpgroup_registers` on the GPU: producer warpgroup 0 and consumers 0 and 1; then a warp
/// missing lanes is a panic of its warpgroup, returned as `Err`, before any `setmaxnreg` runs.
#[test]
fn gpu_warpgroup_registers_roles_and_short_warps() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let mut out = s.alloc_zeros::<u32>(384).unwrap();
    kernels::launch_warpgroup_roles_with(s, LaunchConfig::new(1, 384), 0, &mut out).unwrap();
    synchronize(s).unwrap();
    let got = s.clone_dtoh(&out).unwrap();
    for (t, v) in got.iter().enumerate() {
        let want = if t < 128 { 1000 } else { 2000 + (t / 128 - 1) as u32 };
        assert_eq!(*v, want, "thread {t}");
    }
    kernels::launch_warpgroup_roles_with(s, LaunchConfig::new(1, 384), 1, &mut out).unwrap();
    match synchronize(s).unwrap_err() {
        oxide_rt::Error::KernelPanic { kernel, location, message } => {
            assert_eq!(kernel, "warpgroup_roles");
            assert!(location.as_deref().unwrap_or_default().contains("kernels.rs"), "{location:?}");
            if cfg!(debug_assertions) {
                assert!(message.contains("warpgroup 0 reached it with a warp missing lanes"), "{message}");
            }
        }
        other => panic!("expected Error::KernelPanic, got {other:?}"),
    }
}

/// `DisjointPersistentWgmmaTiles` on the GPU: the same partition as on the executor.
#[test]
fn gpu_persistent_tiles_partition_the_matrix() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    for (rows, cols, (gx, gy)) in wgmma_ops::PERSISTENT_CASES {
        let mut c = s.alloc_zeros::<u32>(rows * cols).unwrap();
        let blocks = (gx * gy) as usize;
        let mut counts = s.alloc_zeros::<u32>(blocks * 384).unwrap();
        let cfg = LaunchConfig::new((gx, gy, 1), 384);
        kernels::launch_persistent_tiles_with(s, cfg, oxide_rt::Slice2d::new(&mut c, cols), &mut counts).unwrap();
        synchronize(s).unwrap();
        let got = s.clone_dtoh(&c).unwrap();
        assert_eq!(got, wgmma_ops::persistent_owners(rows, cols, blocks), "{rows} x {cols} on {gx} x {gy}");
        let counts = s.clone_dtoh(&counts).unwrap();
        assert_eq!(counts.iter().map(|&n| n as usize).sum::<usize>(), rows * cols, "{rows} x {cols}");
    }
}

/// `WgmmaTile::store` on the GPU: the same placement as on the executor, and the same refusal
/// of lanes on different rounds.
#[test]
fn gpu_tile_store_puts_each_element_in_place() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    for (rows, cols, (gx, gy)) in wgmma_ops::PERSISTENT_CASES {
        let mut c = s.alloc_zeros::<F16>(rows * cols).unwrap();
        let cfg = LaunchConfig::new((gx, gy, 1), 384);
        kernels::launch_persistent_store_with(s, cfg, 0, oxide_rt::Slice2d::new(&mut c, cols)).unwrap();
        synchronize(s).unwrap();
        let got: Vec<f32> = s.clone_dtoh(&c).unwrap().iter().map(|v| v.to_f32()).collect();
        let want = wgmma_ops::persistent_store_expected(rows, cols, (gx * gy) as usize);
        assert!(
            got == want,
            "{rows} x {cols} on {gx} x {gy}: first difference at {:?}",
            got.iter().zip(&want).position(|(a, b)| a != b)
        );
    }
    let mut c = s.alloc_zeros::<F16>(300 * 200).unwrap();
    kernels::launch_persistent_store_with(s, LaunchConfig::new(2, 384), 1, oxide_rt::Slice2d::new(&mut c, 200))
        .unwrap();
    match synchronize(s).unwrap_err() {
        oxide_rt::Error::KernelPanic { kernel, .. } => assert_eq!(kernel, "persistent_store"),
        other => panic!("expected Error::KernelPanic, got {other:?}"),
    }
}
