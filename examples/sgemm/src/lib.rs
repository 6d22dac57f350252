//! sgemm as a library: the kernel plus the uniform example API (random problem, scalar
//! reference, CPU and GPU runs, comparison) shared by main.rs, the differential tests and the
//! benchmarks.
pub mod kernels;

use example_common::{driver_err as err, Rng};
use oxide_rt::cuda::CudaStream;
use oxide_rt::{LaunchConfig, Matrix, Slice2d};
use std::sync::Arc;

pub use kernels::{BK, BM, BN, THREADS_X, THREADS_Y};

/// GPU size of main.rs and the benchmark: 4096 x 4096 x 4096.
pub const DEFAULT_SIZE: usize = 4096;
/// main.rs size on the CPU executor (4096^3 would take hours there).
pub const CPU_DEFAULT_SIZE: usize = 256;
/// Differential-test sizes; `problem` derives m, n, k from each so that none is a tile
/// multiple except where the size makes it one (128: m is exactly one tile).
pub const SIZES: &[usize] = &[1, 7, 33, 128, 129, 200];

pub struct Problem {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub alpha: f32,
    pub beta: f32,
    /// m x k, row-major.
    pub a: Vec<f32>,
    /// k x n, row-major.
    pub b: Vec<f32>,
    /// m x n, row-major (the input C; the result replaces it).
    pub c: Vec<f32>,
}

/// The result C, and (from [`reference`] only) a per-element error bound.
pub struct Output {
    pub c: Vec<f32>,
    pub tolerance: Vec<f32>,
}

/// Square for the benchmark sizes (multiples of 128), otherwise m = size,
/// n = size + size/3 + 1, k = size/2 + 7 (rectangular, no tile multiples).
pub fn problem(seed: u64, size: usize) -> Problem {
    if size >= 1024 && size / BM * BM == size {
        problem_dims(seed, size, size, size)
    } else {
        problem_dims(seed, size, size + size / 3 + 1, size / 2 + 7)
    }
}

pub fn problem_dims(seed: u64, m: usize, n: usize, k: usize) -> Problem {
    let mut rng = Rng::new(seed);
    let alpha = 1.0 + rng.f32() * 0.5;
    let beta = rng.f32() * 0.5;
    Problem { m, n, k, alpha, beta, a: rng.vec_f32(m * k), b: rng.vec_f32(k * n), c: rng.vec_f32(m * n) }
}

/// Plain triple loop in f64, with the bound on the f32 kernel's error for every element:
/// a length-k dot product accumulated in f32 (with or without fused multiply-adds) is within
/// `gamma_k * sum_l |a_il * b_lj|` of the exact one, `gamma_k = k*u / (1 - k*u)`, `u = 2^-24`
/// (Higham §3.1); scaling by alpha and adding beta*c costs 3 more roundings of values bounded
/// by `|alpha| * sum|a*b| + |beta * c|`. We use `(k + 4) * u * 1.01` times that bound.
pub fn reference(p: &Problem) -> Output {
    let (mut c, mut tolerance) = (Vec::with_capacity(p.m * p.n), Vec::with_capacity(p.m * p.n));
    for i in 0..p.m {
        for j in 0..p.n {
            let (v, tol) = reference_at(p, i, j);
            c.push(v);
            tolerance.push(tol);
        }
    }
    Output { c, tolerance }
}

/// Element (i, j) of [`reference`] and its error bound (for spot checks of large products).
pub fn reference_at(p: &Problem, i: usize, j: usize) -> (f32, f32) {
    let (n, k) = (p.n, p.k);
    let u = f32::EPSILON as f64 / 2.0;
    let (mut dot, mut abs) = (0.0f64, 0.0f64);
    for l in 0..k {
        let prod = p.a[i * k + l] as f64 * p.b[l * n + j] as f64;
        dot += prod;
        abs += prod.abs();
    }
    let cin = p.c[i * n + j] as f64;
    let exact = p.alpha as f64 * dot + p.beta as f64 * cin;
    let scale = (p.alpha as f64).abs() * abs + (p.beta as f64 * cin).abs();
    (exact as f32, ((k as f64 + 4.0) * u * 1.01 * scale + exact.abs() * u) as f32)
}

/// One block per 128 x 128 tile of C.
pub fn config(m: usize, n: usize) -> LaunchConfig {
    LaunchConfig::new((n.div_ceil(BN) as u32, m.div_ceil(BM) as u32, 1), (THREADS_X, THREADS_Y, 1))
}

/// `(m, n, k)` after checking the buffers hold `m*k`, `k*n` and `m*n` elements (the launch
/// grid must fit too: `m, n < 2^32`).
fn dims(p: &Problem) -> Result<(usize, usize, usize), oxide_rt::Error> {
    if u32::try_from(p.m).is_err() || u32::try_from(p.n).is_err() || u32::try_from(p.k).is_err() {
        return Err(oxide_rt::Error::InvalidLaunch {
            kernel: "sgemm",
            reason: format!("{} x {} x {} does not fit u32 sizes; split the product into smaller ones", p.m, p.n, p.k),
        });
    }
    if p.a.len() != p.m * p.k || p.b.len() != p.k * p.n || p.c.len() != p.m * p.n {
        return Err(oxide_rt::Error::InvalidLaunch {
            kernel: "sgemm",
            reason: "A, B or C does not hold m*k, k*n or m*n elements".into(),
        });
    }
    Ok((p.m, p.n, p.k))
}

pub fn run_cpu(p: &Problem) -> Result<Output, oxide_rt::Error> {
    let (m, n, k) = dims(p)?;
    let mut c = p.c.clone();
    kernels::cpu_sgemm_with(
        config(p.m, p.n),
        p.alpha,
        Matrix::new(&p.a[..], m, k),
        Matrix::new(&p.b[..], k, n),
        p.beta,
        Slice2d::new(&mut c[..], n),
    )?;
    Ok(Output { c, tolerance: Vec::new() })
}

pub fn run_gpu(stream: &Arc<CudaStream>, p: &Problem) -> Result<Output, oxide_rt::Error> {
    let (m, n, k) = dims(p)?;
    let a = stream.clone_htod(&p.a).map_err(err("copying A to the GPU"))?;
    let b = stream.clone_htod(&p.b).map_err(err("copying B to the GPU"))?;
    let mut c = stream.clone_htod(&p.c).map_err(err("copying C to the GPU"))?;
    kernels::launch_sgemm_with(
        stream,
        config(p.m, p.n),
        p.alpha,
        Matrix::new(&a, m, k),
        Matrix::new(&b, k, n),
        p.beta,
        Slice2d::new(&mut c, n),
    )?;
    let c = stream.clone_dtoh(&c).map_err(err("copying C back"))?;
    Ok(Output { c, tolerance: Vec::new() })
}

/// Every element within the reference's bound for it (see [`reference`]).
pub fn compare(got: &Output, want: &Output) -> Result<(), String> {
    if got.c.len() != want.c.len() {
        return Err(format!("length {} != {}", got.c.len(), want.c.len()));
    }
    for (i, ((g, w), tol)) in got.c.iter().zip(&want.c).zip(&want.tolerance).enumerate() {
        let err = (g - w).abs();
        if err.is_nan() || err > *tol {
            return Err(format!("element {i}: got {g}, want {w} (tolerance {tol:e})"));
        }
    }
    Ok(())
}

/// Largest |got - want| (for the benchmark's report).
pub fn max_abs_error(got: &[f32], want: &[f32]) -> f64 {
    got.iter().zip(want).map(|(g, w)| (g - w).abs() as f64).fold(0.0, f64::max)
}
