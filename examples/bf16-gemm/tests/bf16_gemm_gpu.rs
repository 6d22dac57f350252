//! The kernel on the GPU against the f64 reference and the CPU executor. Skips (printing why)
//! without a GPU, unless OXIDE_REQUIRE_GPU=1.
use bf16_gemm::{compare, problem, run_cpu, run_gpu};

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

#[test]
fn gpu_matches_reference_and_cpu() {
    let Some(g) = gpu() else { return };
    for &(m, n, k) in &[(128, 128, 32), (200, 136, 72), (17, 8, 8), (130, 264, 168), (1000, 1032, 520)] {
        let p = problem((m + n + k) as u64, m, n, k);
        let got = run_gpu(&g.stream, &p).unwrap();
        compare(&p, &got, 1).unwrap_or_else(|e| panic!("{m} x {n} x {k}: {e}"));
        if m * n * k <= 5_000_000 {
            // The emulation and the tensor cores may round the f32 sums differently: equal up to
            // one bf16 ulp.
            let cpu = run_cpu(&p).unwrap();
            for (i, (x, y)) in got.iter().zip(&cpu).enumerate() {
                let (x, y) = (x.to_f32(), y.to_f32());
                assert!((x - y).abs() <= x.abs().max(y.abs()) * 2f32.powi(-7), "{m} x {n} x {k}: C[{i}]: {x} vs {y}");
            }
        }
    }
}

#[test]
fn gpu_4096_sampled() {
    let Some(g) = gpu() else { return };
    let p = problem(9, 4096, 4096, 4096);
    let got = run_gpu(&g.stream, &p).unwrap();
    compare(&p, &got, 97).unwrap();
}
