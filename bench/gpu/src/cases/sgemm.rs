//! sgemm: 4096 x 4096 x 4096 (C = alpha*A*B + beta*C, row-major), 128x128x8 tiles, 256
//! threads, against its CUDA C++ twin and cuBLAS (FP32, no TF32).

use super::saxpy::cfg_raw;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N;
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
use cudarc::driver::PushKernelArg;

/// Elements of C checked against the f64 dot product (the full reference would take minutes).
const SAMPLES: usize = 4096;

pub fn run(b: &Bench) -> Res<Row> {
    let size = sgemm::DEFAULT_SIZE;
    let s = &b.stream;
    let p = sgemm::problem(1, size);
    let (m, n, k) = (p.m, p.n, p.k);
    let (m32, n32, k32) = (m as u32, n as u32, k as u32);
    let cfg = sgemm::config(m, n);
    let da = s.clone_htod(&p.a)?;
    let db = s.clone_htod(&p.b)?;

    // Each timed run updates C in place (|beta| < 1, so it stays bounded); the checks below
    // use fresh copies of the input C.
    let mut dc = s.clone_htod(&p.c)?;
    let launch_oxide = |c: &mut cudarc::driver::CudaSlice<f32>| -> Res<()> {
        use oxide_rt::{Matrix, Slice2d};
        let (a, bm, cm) = (Matrix::new(&da, m, k), Matrix::new(&db, k, n), Slice2d::new(c, n));
        Ok(sgemm::kernels::launch_sgemm_with(s, cfg, p.alpha, a, bm, p.beta, cm)?)
    };
    let oxide_ms = b.time(|| launch_oxide(&mut dc))?;

    let (_m, f) = b.twin("sgemm", "sgemm")?;
    // The twin indexes its 256 threads by `threadIdx.x` alone.
    let twin_cfg = oxide_rt::LaunchConfig::new(cfg.grid, 256u32);
    let (alen, blen, clen) = (p.a.len() as u64, p.b.len() as u64, p.c.len() as u64);
    let launch_twin = |c: &mut cudarc::driver::CudaSlice<f32>| -> Res<()> {
        let mut l = s.launch_builder(&f);
        l.arg(&m32)
            .arg(&n32)
            .arg(&k32)
            .arg(&p.alpha)
            .arg(&da)
            .arg(&alen)
            .arg(&db)
            .arg(&blen)
            .arg(&p.beta)
            .arg(c)
            .arg(&clen);
        // SAFETY: the twin's signature is (unsigned m, n, k, float alpha, const float* a, u64, const float* b, u64, float beta, float* c, u64) and a, b, c hold m*k, k*n, m*n floats.
        unsafe { l.launch(cfg_raw(twin_cfg)) }?;
        Ok(())
    };
    let mut tc = s.clone_htod(&p.c)?;
    let cuda_ms = b.time(|| launch_twin(&mut tc))?;

    // cuBLAS is column-major: row-major C = A*B is column-major C^T = B^T * A^T, i.e. a
    // column-major (n x k) * (k x m) product with B first.
    let blas = CudaBlas::new(s.clone())?;
    let gemm_cfg = GemmConfig {
        transa: CUBLAS_OP_N,
        transb: CUBLAS_OP_N,
        m: n as i32,
        n: m as i32,
        k: k as i32,
        alpha: p.alpha,
        lda: n as i32,
        ldb: k as i32,
        beta: p.beta,
        ldc: n as i32,
    };
    let launch_blas = |c: &mut cudarc::driver::CudaSlice<f32>| -> Res<()> {
        // SAFETY: b is k x n row-major (= n x k column-major, ld n), a is m x k row-major (= k x m column-major, ld k), c holds m * n floats (n x m column-major, ld n).
        unsafe { blas.gemm(gemm_cfg, &db, &da, c) }?;
        Ok(())
    };
    let mut bc = s.clone_htod(&p.c)?;
    let blas_ms = b.time(|| launch_blas(&mut bc))?;

    // One fresh run of each, spot-checked against f64 dot products.
    let mut dc = s.clone_htod(&p.c)?;
    launch_oxide(&mut dc)?;
    let got: Vec<f32> = s.clone_dtoh(&dc)?;
    let mut tc = s.clone_htod(&p.c)?;
    launch_twin(&mut tc)?;
    let twin = s.clone_dtoh(&tc)?;
    let mut bc = s.clone_htod(&p.c)?;
    launch_blas(&mut bc)?;
    let blas_c = s.clone_dtoh(&bc)?;
    let mut rng = crate::harness::Rng::new(7);
    let mut max_error = 0.0f64;
    for _ in 0..SAMPLES {
        let (i, j) = ((rng.next_u64() % m as u64) as usize, (rng.next_u64() % n as u64) as usize);
        let (want, tol) = sgemm::reference_at(&p, i, j);
        for (who, c) in [("oxide", &got), ("CUDA twin", &twin), ("cuBLAS", &blas_c)] {
            let v = c[i * n + j];
            let err = (v - want).abs();
            if err.is_nan() || err > tol {
                return Err(format!("{who} sgemm C[{i}][{j}] = {v}, want {want} (tolerance {tol:e})").into());
            }
        }
        max_error = max_error.max((got[i * n + j] - want).abs() as f64);
    }
    Ok(Row {
        kernel: "sgemm".into(),
        size: format!("{m} x {n} x {k}"),
        oxide_ms,
        cuda_ms,
        work: Work::Flops(2.0 * m as f64 * n as f64 * k as f64),
        reference: Some(("cuBLAS".into(), blas_ms)),
        regs: None,
        max_error,
    })
}
