//! Scaffolding shared by the example crates (and the GPU benchmark), so each example's lib.rs
//! and main.rs hold only what is particular to its kernel: a deterministic RNG for the random
//! problems, the mapping of cudarc errors into [`oxide_rt::Error`], command-line sizes, and the
//! backend selection / error reporting around `main`.

use oxide_rt::cuda::{CudaStream, DriverError};
use oxide_rt::host::Gpu;
use oxide_rt::Backend;
use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

/// Deterministic pseudo-random numbers (splitmix64), a fresh stream per seed. No `rand`
/// dependency: the examples only need reproducible inputs, identical on every machine.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// The low 32 bits of [`next_u64`](Rng::next_u64): full-range `u32`s.
    pub fn u32(&mut self) -> u32 {
        self.next_u64() as u32
    }

    /// Uniform in [-1, 1): the top 24 bits (exactly representable in f32) over 2^23, minus 1.
    pub fn f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    /// `n` values of [`f32`](Rng::f32).
    pub fn vec_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }

    /// `n` values of [`u32`](Rng::u32).
    pub fn vec_u32(&mut self, n: usize) -> Vec<u32> {
        (0..n).map(|_| self.u32()).collect()
    }

    /// Uniform in `[0, 1)`: the top 53 bits over 2^53.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[lo, hi]`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
}

/// For `map_err` on a cudarc call: wraps its error as [`oxide_rt::Error::Driver`] saying what
/// was being done, e.g. `stream.clone_htod(&x).map_err(driver_err("copying x to the GPU"))?`.
pub fn driver_err(what: &str) -> impl FnOnce(DriverError) -> oxide_rt::Error {
    let what = what.to_string();
    move |source| oxide_rt::Error::Driver { what, source }
}

/// Command-line argument `index` (1 = first) as a count, or `default` when absent; `what`
/// names it in the error.
pub fn size_arg(index: usize, default: usize, what: &str) -> Result<usize, String> {
    match std::env::args().nth(index) {
        Some(s) => s.parse().map_err(|_| format!("{what} `{s}` is not a number")),
        None => Ok(default),
    }
}

/// Runs an example's `run_gpu` on `gpu`, or its `run_cpu` when there is none, and returns the
/// output with the wall time in milliseconds (copies to and from the GPU included).
pub fn run_timed<P, O>(
    gpu: Option<&Gpu>,
    p: &P,
    run_gpu: impl FnOnce(&Arc<CudaStream>, &P) -> Result<O, oxide_rt::Error>,
    run_cpu: impl FnOnce(&P) -> Result<O, oxide_rt::Error>,
) -> Result<(O, f64), oxide_rt::Error> {
    let t = Instant::now();
    let out = match gpu {
        Some(gpu) => run_gpu(&gpu.stream, p)?,
        None => run_cpu(p)?,
    };
    Ok((out, t.elapsed().as_secs_f64() * 1e3))
}

/// Exact comparison: `Err` names the length mismatch or the first element where `same` fails
/// (`what` names an element, e.g. "element" or "bin").
pub fn compare_exact<T: std::fmt::Display>(
    got: &[T],
    want: &[T],
    what: &str,
    same: impl Fn(&T, &T) -> bool,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    match got.iter().zip(want).position(|(g, w)| !same(g, w)) {
        Some(i) => Err(format!("{what} {i}: got {}, want {}", got[i], want[i])),
        None => Ok(()),
    }
}

/// A sampled check of an `m x n` row-major result against a reference with a bound per element:
/// every `sample`-th row and column (every element for 1), `at(i, j)` giving (got, want, bound).
/// Returns the largest error, or `Err` naming the first element out of its bound (or NaN).
pub fn compare_within(
    len: usize,
    (m, n): (usize, usize),
    sample: usize,
    at: impl Fn(usize, usize) -> (f64, f64, f64),
) -> Result<f64, String> {
    if len != m * n {
        return Err(format!("length {len} != {}", m * n));
    }
    let step = sample.max(1);
    let mut worst = 0.0f64;
    for i in (0..m).step_by(step) {
        for j in (0..n).step_by(step) {
            let (got, want, tol) = at(i, j);
            let e = (got - want).abs();
            if e.is_nan() || e > tol {
                return Err(format!("C[{i}][{j}]: got {got}, want {want} (tolerance {tol:e})"));
            }
            worst = worst.max(e);
        }
    }
    Ok(worst)
}

/// For `map_err` on an example's `compare(got, &reference(p))`.
pub fn differs(e: String) -> String {
    format!("result differs from the CPU reference: {e}")
}

/// The body of every example's `main`: picks the backend (`OXIDE_BACKEND`, else the GPU when
/// one is present), creates the [`Gpu`] for CUDA, prints the `backend: ...` line, runs `body`
/// with the backend and the GPU (`None` on the CPU), and turns an error into `error: ...` on
/// stderr and exit code 1.
pub fn run_main(body: impl FnOnce(Backend, Option<&Gpu>) -> Result<(), Box<dyn Error>>) -> ExitCode {
    match select_and_run(body) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn select_and_run(
    body: impl FnOnce(Backend, Option<&Gpu>) -> Result<(), Box<dyn Error>>,
) -> Result<(), Box<dyn Error>> {
    match Backend::from_env()? {
        Backend::Cuda => {
            let gpu = Gpu::new(0)?;
            println!("backend: cuda on {}", gpu.describe());
            body(Backend::Cuda, Some(&gpu))
        }
        Backend::Cpu => {
            println!("backend: cpu (no GPU found or OXIDE_BACKEND=cpu)");
            body(Backend::Cpu, None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first outputs for seed 42, recorded from the per-example generators this replaced
    /// (the examples' inputs, and so their printed results, must not change).
    #[test]
    fn reproduces_the_recorded_stream() {
        let mut r = Rng::new(42);
        let got: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(got, RECORDED_U64);
        let mut r = Rng::new(42);
        assert_eq!(r.vec_f32(3).iter().map(|v| v.to_bits()).collect::<Vec<_>>(), RECORDED_F32_BITS);
        let mut r = Rng::new(42);
        assert_eq!(r.vec_u32(3), RECORDED_U64.map(|v| v as u32));
    }

    const RECORDED_U64: [u64; 3] = [0xbdd7_3226_2feb_6e95, 0x28ef_e333_b266_f103, 0x4752_6757_130f_9f52];
    /// 0.48312974, -0.68017924, -0.44279778.
    const RECORDED_F32_BITS: [u32; 3] = [0x3ef7_5cc8, 0xbf2e_203a, 0xbee2_b664];

    #[test]
    fn f32_stays_in_range() {
        let mut r = Rng::new(1);
        assert!(r.vec_f32(100_000).iter().all(|v| (-1.0..1.0).contains(v)));
    }

    #[test]
    fn size_arg_defaults_when_absent() {
        assert_eq!(size_arg(usize::MAX, 17, "count"), Ok(17));
    }

    #[test]
    fn driver_err_keeps_what() {
        let e = driver_err("copying x")(DriverError(oxide_rt::cuda::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY));
        assert!(matches!(&e, oxide_rt::Error::Driver { what, .. } if what == "copying x"), "{e}");
    }

    #[test]
    fn the_first_element_out_of_bound_or_nan_is_named_and_the_worst_error_returned() {
        let got = [1.0, 2.0, 3.5, 4.0];
        let at = |i: usize, j: usize| (got[i * 2 + j], (i * 2 + j + 1) as f64, 0.6);
        assert_eq!(compare_within(4, (2, 2), 1, at), Ok(0.5));
        let strict = |i: usize, j: usize| (got[i * 2 + j], (i * 2 + j + 1) as f64, 0.1);
        assert_eq!(compare_within(4, (2, 2), 1, strict).unwrap_err(), "C[1][0]: got 3.5, want 3 (tolerance 1e-1)");
        // Sampling every 2nd row and column sees only C[0][0].
        assert_eq!(compare_within(4, (2, 2), 2, strict), Ok(0.0));
        let nan = |_: usize, _: usize| (f64::NAN, 1.0, 1.0);
        assert!(compare_within(4, (2, 2), 1, nan).is_err());
        assert_eq!(compare_within(3, (2, 2), 1, at).unwrap_err(), "length 3 != 4");
    }
}
