//! The kernels on the GPU against the f64 reference and the CPU executor. Skips (printing why)
//! without a GPU, unless OXIDE_REQUIRE_GPU=1.
use bf16_gemm::{compare, problem, run_cpu, run_gpu, Epilogue};

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

fn matches_reference_and_cpu(epilogue: Epilogue) {
    let Some(g) = gpu() else { return };
    for &(m, n, k) in &[(128, 128, 32), (200, 136, 72), (17, 8, 8), (130, 264, 168), (1000, 1032, 520)] {
        let p = problem((m + n + k) as u64, m, n, k);
        let got = run_gpu(&g.stream, &p, epilogue).unwrap();
        compare(&p, &got, 1, epilogue).unwrap_or_else(|e| panic!("{epilogue:?} {m} x {n} x {k}: {e}"));
        if m * n * k <= 5_000_000 {
            // The emulation and the tensor cores may round the f32 sums differently (and erff
            // differ by an ulp): equal up to one bf16 ulp, or a tiny absolute difference where
            // GELU takes a sum near zero.
            let cpu = run_cpu(&p, epilogue).unwrap();
            for (i, (x, y)) in got.iter().zip(&cpu).enumerate() {
                let (x, y) = (x.to_f32(), y.to_f32());
                assert!(
                    (x - y).abs() <= x.abs().max(y.abs()) * 2f32.powi(-7) + 1e-6,
                    "{epilogue:?} {m} x {n} x {k}: C[{i}]: {x} vs {y}"
                );
            }
        }
    }
}

#[test]
fn gpu_matches_reference_and_cpu() {
    matches_reference_and_cpu(Epilogue::None);
}

#[test]
fn gpu_bias_gelu_matches_reference_and_cpu() {
    matches_reference_and_cpu(Epilogue::BiasGelu);
}

#[test]
fn gpu_4096_sampled() {
    let Some(g) = gpu() else { return };
    let p = problem(9, 4096, 4096, 4096);
    for epilogue in [Epilogue::None, Epilogue::BiasGelu] {
        let got = run_gpu(&g.stream, &p, epilogue).unwrap();
        compare(&p, &got, 97, epilogue).unwrap();
    }
}
