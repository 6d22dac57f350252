//! The bf16 tensor-core GEMM as a library: the kernel plus a random problem, the f64
//! reference, CPU and GPU runs and the comparison, shared by main.rs, the tests and the
//! benchmark mode.
pub mod kernels;

use example_common::{driver_err as err, Rng};
use oxide_rt::cuda::{CudaSlice, CudaStream};
use oxide_rt::{Bf16, LaunchConfig, Matrix, Slice2d};
use std::sync::Arc;

pub use kernels::{BK, BM, BN, SHARED_BYTES, THREADS};

/// GPU size of main.rs: 4096 x 4096 x 4096.
pub const DEFAULT_SIZE: usize = 4096;
/// main.rs size on the CPU executor.
pub const CPU_DEFAULT_SIZE: usize = 136;

pub struct Problem {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// m x k, row-major.
    pub a: Vec<Bf16>,
    /// k x n, row-major.
    pub b: Vec<Bf16>,
}

/// Uniform entries in [-1, 1), rounded to bf16.
pub fn problem(seed: u64, m: usize, n: usize, k: usize) -> Problem {
    let mut rng = Rng::new(seed);
    let mut v = |len: usize| (0..len).map(|_| Bf16::from_f32(rng.f32())).collect::<Vec<_>>();
    let (a, b) = (v(m * k), v(k * n));
    Problem { m, n, k, a, b }
}

/// Element (i, j) of `A * B` in f64, and the bound on the kernel's error there: the f32
/// accumulation of `k` exact products (`(k + 2) u sum|a b|`, `u = 2^-24`) plus the final
/// rounding to bf16 (half an ulp: `2^-8` relative).
pub fn reference_at(p: &Problem, i: usize, j: usize) -> (f64, f64) {
    let (mut dot, mut abs) = (0.0f64, 0.0f64);
    for l in 0..p.k {
        let prod = p.a[i * p.k + l].to_f32() as f64 * p.b[l * p.n + j].to_f32() as f64;
        dot += prod;
        abs += prod.abs();
    }
    let u = f32::EPSILON as f64 / 2.0;
    (dot, (p.k as f64 + 2.0) * u * abs * 1.01 + dot.abs() * 2f64.powi(-8) * 1.01)
}

/// One block per 128 x 128 tile of C, 74 KiB of dynamic shared memory.
pub fn config(m: usize, n: usize) -> LaunchConfig {
    LaunchConfig::new((n.div_ceil(BN) as u32, m.div_ceil(BM) as u32, 1), (THREADS, 1, 1))
        .shared_mem_bytes(SHARED_BYTES as u32)
}

fn check(p: &Problem) -> Result<(), oxide_rt::Error> {
    let bad = |reason: String| Err(oxide_rt::Error::InvalidLaunch { kernel: "bf16_gemm", reason });
    if !p.k.is_multiple_of(8) || !p.n.is_multiple_of(8) {
        return bad(format!(
            "k = {} and n = {} must be multiples of 8 (16-byte rows for cp.async); pad them",
            p.k, p.n
        ));
    }
    if p.a.len() != p.m * p.k || p.b.len() != p.k * p.n {
        return bad("A or B does not hold m*k or k*n elements".into());
    }
    if p.m.div_ceil(BM) > 65535 {
        return bad(format!("m = {} needs more than 65535 block rows; split the product", p.m));
    }
    Ok(())
}

pub fn run_cpu(p: &Problem) -> Result<Vec<Bf16>, oxide_rt::Error> {
    check(p)?;
    let mut c = vec![Bf16::default(); p.m * p.n];
    kernels::cpu_bf16_gemm_with(
        config(p.m, p.n),
        Matrix::new(&p.a[..], p.m, p.k),
        Matrix::new(&p.b[..], p.k, p.n),
        Slice2d::new(&mut c[..], p.n),
    )?;
    Ok(c)
}

/// The problem's matrices on the GPU.
pub struct OnGpu {
    pub a: CudaSlice<Bf16>,
    pub b: CudaSlice<Bf16>,
    pub c: CudaSlice<Bf16>,
}

pub fn upload(stream: &Arc<CudaStream>, p: &Problem) -> Result<OnGpu, oxide_rt::Error> {
    check(p)?;
    Ok(OnGpu {
        a: stream.clone_htod(&p.a).map_err(err("copying A to the GPU"))?,
        b: stream.clone_htod(&p.b).map_err(err("copying B to the GPU"))?,
        c: stream.alloc_zeros(p.m * p.n).map_err(err("allocating C"))?,
    })
}

/// One launch on matrices already on the GPU (the benchmark's unit).
pub fn launch(stream: &Arc<CudaStream>, p: &Problem, g: &mut OnGpu) -> Result<(), oxide_rt::Error> {
    kernels::launch_bf16_gemm_with(
        stream,
        config(p.m, p.n),
        Matrix::new(&g.a, p.m, p.k),
        Matrix::new(&g.b, p.k, p.n),
        Slice2d::new(&mut g.c, p.n),
    )
}

pub fn run_gpu(stream: &Arc<CudaStream>, p: &Problem) -> Result<Vec<Bf16>, oxide_rt::Error> {
    let mut g = upload(stream, p)?;
    launch(stream, p, &mut g)?;
    oxide_rt::host::synchronize(stream)?;
    stream.clone_dtoh(&g.c).map_err(err("copying C back"))
}

/// Every element (or, with `sample`, every `sample`-th row and column) within the reference's
/// bound.
pub fn compare(p: &Problem, got: &[Bf16], sample: usize) -> Result<f64, String> {
    example_common::compare_within(got.len(), (p.m, p.n), sample, |i, j| {
        let (want, tol) = reference_at(p, i, j);
        (got[i * p.n + j].to_f32() as f64, want, tol)
    })
}
