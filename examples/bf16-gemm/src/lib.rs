//! The bf16 tensor-core GEMM as a library: the kernels (the plain product and the one with a
//! fused bias + GELU epilogue) plus a random problem, the f64 reference, CPU and GPU runs and
//! the comparison, shared by main.rs, the tests and the benchmark mode.
pub mod kernels;

use example_common::{driver_err as err, Rng};
use oxide_rt::cuda::{CudaSlice, CudaStream};
use oxide_rt::{Bf16, LaunchConfig, Matrix, Slice2d};
use std::sync::Arc;

pub use kernels::{BK, BM, BN, SHARED_BYTES, THREADS};

/// What a kernel does with the f32 product before rounding it to bf16.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Epilogue {
    /// `C = A * B` (`bf16_gemm`).
    None,
    /// `C = gelu(A * B + bias)`, `bias[j]` added to column `j` (`bf16_gemm_bias_gelu`).
    BiasGelu,
}

impl Epilogue {
    /// The kernel's name, as the benchmark lines print it.
    pub fn kernel(self) -> &'static str {
        match self {
            Epilogue::None => "bf16_gemm",
            Epilogue::BiasGelu => "bf16_gemm_bias_gelu",
        }
    }
}

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
    /// n entries (the fused epilogue's).
    pub bias: Vec<f32>,
}

/// Uniform entries in [-1, 1): A and B rounded to bf16, the bias in f32.
pub fn problem(seed: u64, m: usize, n: usize, k: usize) -> Problem {
    let mut rng = Rng::new(seed);
    let mut v = |len: usize| (0..len).map(|_| Bf16::from_f32(rng.f32())).collect::<Vec<_>>();
    let (a, b) = (v(m * k), v(k * n));
    let bias = (0..n).map(|_| rng.f32()).collect();
    Problem { m, n, k, a, b, bias }
}

/// Element (i, j) of the kernel's result in f64, and the bound on the kernel's error there.
///
/// The f32 accumulation of `k` exact products is off by at most `(k + 2) u sum|a b|`
/// (`u = 2^-24`); the bias adds one rounding. GELU's slope is below 1.13 everywhere, so it
/// passes that error on at most 1.13 times, and adds its own f32 evaluation error (`erff` and
/// four operations: `8 u (|x| + |y|)` covers it, `|x|` for the cancellation in `1 + erf` at
/// negative `x`). The rounding to bf16 adds half an ulp (`2^-8` relative).
pub fn reference_at(p: &Problem, i: usize, j: usize, epilogue: Epilogue) -> (f64, f64) {
    let (mut dot, mut abs) = (0.0f64, 0.0f64);
    for l in 0..p.k {
        let prod = p.a[i * p.k + l].to_f32() as f64 * p.b[l * p.n + j].to_f32() as f64;
        dot += prod;
        abs += prod.abs();
    }
    let u = f32::EPSILON as f64 / 2.0;
    let product_err = (p.k as f64 + 2.0) * u * abs * 1.01;
    let (want, err) = match epilogue {
        Epilogue::None => (dot, product_err),
        Epilogue::BiasGelu => {
            let x = dot + p.bias[j] as f64;
            let y = gelu(x);
            (y, 1.13 * (product_err + 2.0 * u * x.abs()) + 8.0 * u * (x.abs() + y.abs()))
        }
    };
    (want, err + want.abs() * 2f64.powi(-8) * 1.01)
}

/// GELU in f64, `x/2 (1 + erf(x / sqrt 2))`, with an `erf` independent of the kernel's.
pub fn gelu(x: f64) -> f64 {
    0.5 * x * (1.0 + libm::erf(x * std::f64::consts::FRAC_1_SQRT_2))
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
    if p.a.len() != p.m * p.k || p.b.len() != p.k * p.n || p.bias.len() != p.n {
        return bad("A, B or the bias does not hold m*k, k*n or n elements".into());
    }
    if p.m.div_ceil(BM) > 65535 {
        return bad(format!("m = {} needs more than 65535 block rows; split the product", p.m));
    }
    Ok(())
}

pub fn run_cpu(p: &Problem, epilogue: Epilogue) -> Result<Vec<Bf16>, oxide_rt::Error> {
    check(p)?;
    let mut c = vec![Bf16::default(); p.m * p.n];
    let (a, b) = (Matrix::new(&p.a[..], p.m, p.k), Matrix::new(&p.b[..], p.k, p.n));
    let out = Slice2d::new(&mut c[..], p.n);
    match epilogue {
        Epilogue::None => kernels::cpu_bf16_gemm_with(config(p.m, p.n), a, b, out)?,
        Epilogue::BiasGelu => kernels::cpu_bf16_gemm_bias_gelu_with(config(p.m, p.n), a, b, &p.bias[..], out)?,
    }
    Ok(c)
}

/// The problem's matrices on the GPU.
pub struct OnGpu {
    pub a: CudaSlice<Bf16>,
    pub b: CudaSlice<Bf16>,
    pub bias: CudaSlice<f32>,
    pub c: CudaSlice<Bf16>,
}

pub fn upload(stream: &Arc<CudaStream>, p: &Problem) -> Result<OnGpu, oxide_rt::Error> {
    check(p)?;
    Ok(OnGpu {
        a: stream.clone_htod(&p.a).map_err(err("copying A to the GPU"))?,
        b: stream.clone_htod(&p.b).map_err(err("copying B to the GPU"))?,
        bias: stream.clone_htod(&p.bias).map_err(err("copying the bias to the GPU"))?,
        c: stream.alloc_zeros(p.m * p.n).map_err(err("allocating C"))?,
    })
}

/// One launch on matrices already on the GPU (the benchmark's unit).
pub fn launch(stream: &Arc<CudaStream>, p: &Problem, g: &mut OnGpu, epilogue: Epilogue) -> Result<(), oxide_rt::Error> {
    let (a, b) = (Matrix::new(&g.a, p.m, p.k), Matrix::new(&g.b, p.k, p.n));
    let c = Slice2d::new(&mut g.c, p.n);
    match epilogue {
        Epilogue::None => kernels::launch_bf16_gemm_with(stream, config(p.m, p.n), a, b, c),
        Epilogue::BiasGelu => kernels::launch_bf16_gemm_bias_gelu_with(stream, config(p.m, p.n), a, b, &g.bias, c),
    }
}

pub fn run_gpu(stream: &Arc<CudaStream>, p: &Problem, epilogue: Epilogue) -> Result<Vec<Bf16>, oxide_rt::Error> {
    let mut g = upload(stream, p)?;
    launch(stream, p, &mut g, epilogue)?;
    oxide_rt::host::synchronize(stream)?;
    stream.clone_dtoh(&g.c).map_err(err("copying C back"))
}

/// Every element (or, with `sample`, every `sample`-th row and column) within the reference's
/// bound.
pub fn compare(p: &Problem, got: &[Bf16], sample: usize, epilogue: Epilogue) -> Result<f64, String> {
    example_common::compare_within(got.len(), (p.m, p.n), sample, |i, j| {
        let (want, tol) = reference_at(p, i, j, epilogue);
        (got[i * p.n + j].to_f32() as f64, want, tol)
    })
}
