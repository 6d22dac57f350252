//! The kernels on the GPU against the f64 reference, bf16, f16 and e4m3, including ragged edges.
//! Skips (printing why) without a GPU, unless OXIDE_REQUIRE_GPU=1.
use hopper_gemm::{compare, problem, run_gpu, run_gpu_blocks, Elem};
use oxide_rt::{Bf16, E4M3, F16};

/// Shapes for the 16-bit types: one k-tile and many, ragged edges, k a multiple of 8.
const SHAPES: [(usize, usize, usize); 6] =
    [(128, 256, 64), (200, 136, 72), (17, 8, 8), (130, 264, 168), (1000, 1032, 520), (256, 512, 4096)];

fn gpu() -> Option<oxide_rt::host::Gpu> {
    match oxide_rt::host::Gpu::new(0) {
        Ok(g) => Some(g),
        Err(e) if std::env::var("OXIDE_REQUIRE_GPU").as_deref() == Ok("1") => {
            panic!("OXIDE_REQUIRE_GPU=1 but no GPU: {e}")
        }
        Err(e) => {
            eprintln!("skipped: no GPU ({e})");
            None
        }
    }
}

fn sizes<T: Elem>(g: &oxide_rt::host::Gpu, shapes: &[(usize, usize, usize)]) {
    for &(m, n, k) in shapes {
        let p = problem::<T>((m + n + k) as u64, m, n, k);
        let got = run_gpu(&g.stream, &p).unwrap();
        compare(&p, &got, 1).unwrap_or_else(|e| panic!("{} {m} x {n} x {k}: {e}", T::NAME));
    }
}

#[test]
fn bf16_matches_reference() {
    let Some(g) = gpu() else { return };
    sizes::<Bf16>(&g, &SHAPES);
}

#[test]
fn f16_matches_reference() {
    let Some(g) = gpu() else { return };
    sizes::<F16>(&g, &SHAPES);
}

/// FP8: k a multiple of 16 (rows of 16 bytes), one k-tile of 128 and many, ragged m and n.
#[test]
fn e4m3_matches_reference() {
    let Some(g) = gpu() else { return };
    sizes::<E4M3>(
        &g,
        &[(128, 256, 128), (200, 136, 144), (17, 8, 16), (130, 264, 176), (1000, 1032, 528), (256, 512, 4096)],
    );
    let (m, n, k) = (1000, 1032, 528);
    let p = problem::<E4M3>(5, m, n, k);
    let got = run_gpu_blocks(&g.stream, &p, 3).unwrap();
    compare(&p, &got, 1).unwrap_or_else(|e| panic!("e4m3 {m} x {n} x {k} on 3 blocks: {e}"));
}

/// Few blocks for many tiles: each block takes its tiles round after round, the ring of stages
/// running on from one tile into the next (ragged edges, k of one k-tile and of many).
#[test]
fn persistent_blocks_take_many_tiles() {
    let Some(g) = gpu() else { return };
    for &(m, n, k, blocks) in &[(1000, 1032, 520, 3), (640, 776, 64, 5), (384, 512, 1000, 1), (130, 264, 8, 2)] {
        let p = problem::<Bf16>((m * n + k) as u64, m, n, k);
        let got = run_gpu_blocks(&g.stream, &p, blocks).unwrap();
        compare(&p, &got, 1).unwrap_or_else(|e| panic!("{m} x {n} x {k} on {blocks} blocks: {e}"));
        let p = problem::<F16>((m * n + k) as u64, m, n, k);
        let got = run_gpu_blocks(&g.stream, &p, blocks).unwrap();
        compare(&p, &got, 1).unwrap_or_else(|e| panic!("f16 {m} x {n} x {k} on {blocks} blocks: {e}"));
    }
}

#[test]
fn bf16_4096_sampled() {
    let Some(g) = gpu() else { return };
    let p = problem::<Bf16>(9, 4096, 4096, 4096);
    let got = run_gpu(&g.stream, &p).unwrap();
    compare(&p, &got, 97).unwrap();
}
