//! The tensor kernels on the GPU, against the scalar references and the CPU executor's
//! emulation of the same kernels (a wrong fragment layout in the emulation or in the loaders
//! shows up here). Skips (printing why) without a GPU, unless OXIDE_REQUIRE_GPU=1.
use oxide_rt::host::{synchronize, Gpu};
use oxide_rt::LaunchConfig;
use std::sync::OnceLock;
use tensor_ops::check::{self, Rng, PROBLEMS};
use tensor_ops::kernels;

fn gpu() -> Option<&'static Gpu> {
    static GPU: OnceLock<Option<Gpu>> = OnceLock::new();
    GPU.get_or_init(tensor_ops::gpu_or_skip).as_ref()
}

fn cfg() -> LaunchConfig {
    LaunchConfig::new(PROBLEMS as u32, 32)
}

#[test]
fn mma_bf16_and_f16() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let mut rng = Rng::new(11);
    let (a, b, c) = (check::floats(&mut rng, 16, 16), check::floats(&mut rng, 16, 8), check::floats(&mut rng, 16, 8));
    let dc = s.clone_htod(&c).unwrap();

    let (ab, bb) = (check::bf16s(&a), check::bf16s(&b));
    let mut dd = s.alloc_zeros::<f32>(PROBLEMS * 128).unwrap();
    kernels::launch_mma_bf16_with(s, cfg(), &s.clone_htod(&ab).unwrap(), &s.clone_htod(&bb).unwrap(), &dc, &mut dd)
        .unwrap();
    synchronize(s).unwrap();
    let gpu = check::gather(&s.clone_dtoh(&dd).unwrap());
    let exact = |x: &[oxide_rt::Bf16]| x.iter().map(|v| v.to_f32()).collect::<Vec<_>>();
    let (want, tol) = check::reference(&exact(&ab), &exact(&bb), &c, 16);
    check::within(&gpu, &want, &tol).unwrap();
    let mut cpu = vec![0f32; PROBLEMS * 128];
    kernels::cpu_mma_bf16_with(cfg(), &ab, &bb, &c, &mut cpu).unwrap();
    check::within(&gpu, &check::gather(&cpu), &tol).unwrap();

    let (ah, bh) = (check::f16s(&a), check::f16s(&b));
    kernels::launch_mma_f16_with(s, cfg(), &s.clone_htod(&ah).unwrap(), &s.clone_htod(&bh).unwrap(), &dc, &mut dd)
        .unwrap();
    synchronize(s).unwrap();
    let gpu = check::gather(&s.clone_dtoh(&dd).unwrap());
    let exact = |x: &[oxide_rt::F16]| x.iter().map(|v| v.to_f32()).collect::<Vec<_>>();
    let (want, tol) = check::reference(&exact(&ah), &exact(&bh), &c, 16);
    check::within(&gpu, &want, &tol).unwrap();
    kernels::cpu_mma_f16_with(cfg(), &ah, &bh, &c, &mut cpu).unwrap();
    check::within(&gpu, &check::gather(&cpu), &tol).unwrap();
}

#[test]
fn mma_tf32() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let mut rng = Rng::new(12);
    let (a, b, c) = (check::floats(&mut rng, 16, 8), check::floats(&mut rng, 8, 8), check::floats(&mut rng, 16, 8));
    let mut dd = s.alloc_zeros::<f32>(PROBLEMS * 128).unwrap();
    let (da, db, dc) = (s.clone_htod(&a).unwrap(), s.clone_htod(&b).unwrap(), s.clone_htod(&c).unwrap());
    kernels::launch_mma_tf32_with(s, cfg(), &da, &db, &dc, &mut dd).unwrap();
    synchronize(s).unwrap();
    let gpu = check::gather(&s.clone_dtoh(&dd).unwrap());
    let (want, tol) = check::reference(&check::tf32s(&a), &check::tf32s(&b), &c, 8);
    check::within(&gpu, &want, &tol).unwrap();
    let mut cpu = vec![0f32; PROBLEMS * 128];
    kernels::cpu_mma_tf32_with(cfg(), &a, &b, &c, &mut cpu).unwrap();
    check::within(&gpu, &check::gather(&cpu), &tol).unwrap();
}

#[test]
fn mma_s8() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let mut rng = Rng::new(13);
    let a: Vec<i8> = (0..PROBLEMS * 512).map(|_| rng.bits() as i8).collect();
    let b: Vec<i8> = (0..PROBLEMS * 256).map(|_| rng.bits() as i8).collect();
    let c: Vec<i32> = (0..PROBLEMS * 128).map(|_| rng.bits() as i32 >> 4).collect();
    let mut dd = s.alloc_zeros::<i32>(PROBLEMS * 128).unwrap();
    let (da, db, dc) = (s.clone_htod(&a).unwrap(), s.clone_htod(&b).unwrap(), s.clone_htod(&c).unwrap());
    kernels::launch_mma_s8_with(s, cfg(), &da, &db, &dc, &mut dd).unwrap();
    synchronize(s).unwrap();
    let gpu = check::gather(&s.clone_dtoh(&dd).unwrap());
    assert_eq!(gpu, check::reference_s8(&a, &b, &c));
    let mut cpu = vec![0i32; PROBLEMS * 128];
    kernels::cpu_mma_s8_with(cfg(), &a, &b, &c, &mut cpu).unwrap();
    assert_eq!(gpu, check::gather(&cpu));
}

#[test]
fn ldmatrix_all() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let rows: Vec<u16> = (0..256).map(|i| (i * 37 + 11) as u16).collect();
    let perm: Vec<u32> = (0..32).map(|l| (l * 13 + 5) % 32).collect();
    let mut out = s.alloc_zeros::<u32>(32 * 14).unwrap();
    kernels::launch_ldmatrix_all(
        s,
        1u32,
        32u32,
        &s.clone_htod(&rows).unwrap(),
        &s.clone_htod(&perm).unwrap(),
        &mut out,
    )
    .unwrap();
    synchronize(s).unwrap();
    let out = s.clone_dtoh(&out).unwrap();
    for lane in 0..32 {
        assert_eq!(out[lane * 14..][..14], check::ldmatrix_expected(&rows, &perm, lane), "lane {lane}");
    }
}

#[test]
fn loaders() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let mut rng = Rng::new(14);
    let a: Vec<f32> = (0..512).map(|_| rng.unit()).collect();
    let b: Vec<f32> = (0..512).map(|_| rng.unit()).collect();
    let (ab, bb) = (check::bf16s(&a), check::bf16s(&b));
    let mut out = s.alloc_zeros::<f32>(32 * 32).unwrap();
    kernels::launch_loaders(s, 1u32, 32u32, &s.clone_htod(&ab).unwrap(), &s.clone_htod(&bb).unwrap(), &mut out)
        .unwrap();
    synchronize(s).unwrap();
    let out = s.clone_dtoh(&out).unwrap();
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
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let src: Vec<u32> = (0..10).map(|i| i * 3 + 1).collect();
    let dsrc = s.clone_htod(&src).unwrap(); // device allocations are 256-byte aligned
    let mut out = s.alloc_zeros::<u32>(64 * 8).unwrap();
    kernels::launch_cp_async_groups(s, 1u32, 64u32, &dsrc, &mut out).unwrap();
    synchronize(s).unwrap();
    let out = s.clone_dtoh(&out).unwrap();
    for t in 0..64 {
        assert_eq!(out[t * 8..][..8], check::cp_async_expected(&src, t), "thread {t}");
    }
}

/// The whole warp at `mma_sync`/`ldmatrix`/`mma_sync_grid` computes; with lanes left out, the
/// lanes that call them panic (an `activemask` test before each `.aligned` collective, or one
/// before a grid) instead of running an instruction PTX leaves undefined, and the launch
/// returns `Err`; the context stays usable for the next launch.
#[test]
fn partial_warp_collectives_panic() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let (a, b, rows) = check::split_inputs(21);
    let (da, db, drows) = (s.clone_htod(&a).unwrap(), s.clone_htod(&b).unwrap(), s.clone_htod(&rows).unwrap());
    let mut out = s.alloc_zeros::<u32>(32 * 5).unwrap();
    let mut grid = s.alloc_zeros::<u32>(32 * 16).unwrap();
    for split in [1, 16, 31] {
        kernels::launch_mma_split(s, 1u32, 32u32, &da, &db, &drows, split, &mut out).unwrap();
        expect_partial_warp_panic(synchronize(s), "mma_split", split);
        kernels::launch_mma_grid_split(s, 1u32, 32u32, &da, &db, split, &mut grid).unwrap();
        expect_partial_warp_panic(synchronize(s), "mma_grid_split", split);
    }
    kernels::launch_mma_split(s, 1u32, 32u32, &da, &db, &drows, 32, &mut out).unwrap();
    kernels::launch_mma_grid_split(s, 1u32, 32u32, &da, &db, 32, &mut grid).unwrap();
    synchronize(s).unwrap();
    check::split_output(&s.clone_dtoh(&out).unwrap(), &a, &b, &rows).unwrap();
    check::grid_output(&s.clone_dtoh(&grid).unwrap(), &a, &b).unwrap();
}

fn expect_partial_warp_panic(r: Result<(), oxide_rt::Error>, name: &str, split: u32) {
    match r {
        Err(oxide_rt::Error::KernelPanic { kernel, message, .. }) => {
            assert_eq!(kernel, name);
            if cfg!(debug_assertions) {
                assert!(message.contains("needs all 32 lanes of the warp"), "{name} split {split}: {message}");
            }
        }
        other => panic!("{name} split {split}: expected Error::KernelPanic, got {other:?}"),
    }
}
