//! The tensor kernels on the CPU executor against scalar references.
use oxide_rt::LaunchConfig;
use tensor_ops::check::{self, Rng, PROBLEMS};
use tensor_ops::kernels;

fn cfg() -> LaunchConfig {
    LaunchConfig::new(PROBLEMS as u32, 32)
}

#[test]
fn mma_bf16_and_f16() {
    let mut rng = Rng::new(1);
    let (a, b, c) = (check::floats(&mut rng, 16, 16), check::floats(&mut rng, 16, 8), check::floats(&mut rng, 16, 8));
    let (ab, bb) = (check::bf16s(&a), check::bf16s(&b));
    let mut d = vec![0f32; PROBLEMS * 128];
    kernels::cpu_mma_bf16_with(cfg(), &ab, &bb, &c, &mut d).unwrap();
    let exact = |x: &[oxide_rt::Bf16]| x.iter().map(|v| v.to_f32()).collect::<Vec<_>>();
    let (want, tol) = check::reference(&exact(&ab), &exact(&bb), &c, 16);
    check::within(&check::gather(&d), &want, &tol).unwrap();

    let (ah, bh) = (check::f16s(&a), check::f16s(&b));
    kernels::cpu_mma_f16_with(cfg(), &ah, &bh, &c, &mut d).unwrap();
    let exact = |x: &[oxide_rt::F16]| x.iter().map(|v| v.to_f32()).collect::<Vec<_>>();
    let (want, tol) = check::reference(&exact(&ah), &exact(&bh), &c, 16);
    check::within(&check::gather(&d), &want, &tol).unwrap();
}

#[test]
fn mma_tf32() {
    let mut rng = Rng::new(2);
    let (a, b, c) = (check::floats(&mut rng, 16, 8), check::floats(&mut rng, 8, 8), check::floats(&mut rng, 16, 8));
    let mut d = vec![0f32; PROBLEMS * 128];
    kernels::cpu_mma_tf32_with(cfg(), &a, &b, &c, &mut d).unwrap();
    let (want, tol) = check::reference(&check::tf32s(&a), &check::tf32s(&b), &c, 8);
    check::within(&check::gather(&d), &want, &tol).unwrap();
}

#[test]
fn mma_s8() {
    let mut rng = Rng::new(3);
    let a: Vec<i8> = (0..PROBLEMS * 512).map(|_| rng.bits() as i8).collect();
    let b: Vec<i8> = (0..PROBLEMS * 256).map(|_| rng.bits() as i8).collect();
    let c: Vec<i32> = (0..PROBLEMS * 128).map(|_| rng.bits() as i32).collect();
    let mut d = vec![0i32; PROBLEMS * 128];
    kernels::cpu_mma_s8_with(cfg(), &a, &b, &c, &mut d).unwrap();
    assert_eq!(check::gather(&d), check::reference_s8(&a, &b, &c));
}

#[test]
fn ldmatrix_all() {
    let rows: Vec<u16> = (0..256).map(|i| (i * 37 + 11) as u16).collect();
    let perm: Vec<u32> = (0..32).map(|l| (l * 13 + 5) % 32).collect();
    let mut out = vec![0u32; 32 * 14];
    kernels::cpu_ldmatrix_all(1u32, 32u32, &rows, &perm, &mut out).unwrap();
    for lane in 0..32 {
        assert_eq!(out[lane * 14..][..14], check::ldmatrix_expected(&rows, &perm, lane), "lane {lane}");
    }
}

#[test]
fn loaders() {
    let mut rng = Rng::new(4);
    let a: Vec<f32> = (0..512).map(|_| rng.unit()).collect();
    let b: Vec<f32> = (0..512).map(|_| rng.unit()).collect();
    let (ab, bb) = (check::bf16s(&a), check::bf16s(&b));
    let mut out = vec![0f32; 32 * 32];
    kernels::cpu_loaders(1u32, 32u32, &ab, &bb, &mut out).unwrap();
    let exact = |x: &[oxide_rt::Bf16]| x.iter().map(|v| v.to_f32() as f64).collect::<Vec<_>>();
    let (ae, be) = (exact(&ab), exact(&bb));
    for v in 0..4 {
        let d = check::gather_loader(&out, v);
        for e in 0..256 {
            let want: f64 = (0..32).map(|l| ae[e / 16 * 32 + l] * be[l * 16 + e % 16]).sum();
            assert!(
                (d[e] as f64 - want).abs() <= 1e-5,
                "loader {v}: D[{}][{}] = {}, want {want}",
                e / 16,
                e % 16,
                d[e]
            );
        }
    }
}

#[test]
fn cp_async_groups() {
    #[repr(align(16))]
    struct Src([u32; 12]);
    let src = Src(std::array::from_fn(|i| i as u32 * 3 + 1));
    let mut out = vec![0u32; 64 * 8];
    kernels::cpu_cp_async_groups(1u32, 64u32, &src.0[..10], &mut out).unwrap();
    for t in 0..64 {
        assert_eq!(out[t * 8..][..8], check::cp_async_expected(&src.0[..10], t), "thread {t}");
    }
}

/// The whole warp at `mma_sync`/`ldmatrix` computes; half of it is a panic naming the lanes left
/// out, returned as `Err` (the GPU panics there too: `tensor_gpu.rs`).
#[test]
fn partial_warp_collectives_panic() {
    let (a, b, rows) = check::split_inputs(21);
    let mut out = vec![0u32; 32 * 5];
    kernels::cpu_mma_split(1u32, 32u32, &a, &b, &rows, 32, &mut out).unwrap();
    check::split_output(&out, &a, &b, &rows).unwrap();
    for split in [1, 16, 31] {
        let err = kernels::cpu_mma_split(1u32, 32u32, &a, &b, &rows, split, &mut out).unwrap_err();
        assert!(err.to_string().contains("do not take part"), "split {split}: {err}");
    }
}

/// `mma_sync_grid` computes each fragment pair of its tile in place; a partial warp panics.
#[test]
fn mma_grid_tile_and_partial_warp() {
    let (a, b, _) = check::split_inputs(22);
    let mut out = vec![0u32; 32 * 16];
    kernels::cpu_mma_grid_split(1u32, 32u32, &a, &b, 32, &mut out).unwrap();
    check::grid_output(&out, &a, &b).unwrap();
    for split in [1, 16, 31] {
        let err = kernels::cpu_mma_grid_split(1u32, 32u32, &a, &b, split, &mut out).unwrap_err();
        assert!(err.to_string().contains("do not take part"), "split {split}: {err}");
    }
}
