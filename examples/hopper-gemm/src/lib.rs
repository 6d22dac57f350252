//! The Hopper GEMM as a library: the kernels plus a random problem, the f64 reference, GPU
//! runs and the comparison, shared by main.rs, the tests and the benchmark mode. Generic over
//! the element type ([`Bf16`], [`F16`], or [`E4M3`] with C in bf16).
pub mod kernels;

use example_common::{driver_err as err, Rng};
use oxide_rt::cuda::{CudaSlice, CudaStream};
use oxide_rt::host::{Swizzle, TensorMap, TensorMapDesc};
use oxide_rt::{Bf16, LaunchConfig, Slice2d, E4M3, F16};
use std::sync::Arc;

pub use kernels::{bk, A_BOX_ROWS, BK_BYTES, BM, BN, SHARED_BYTES, THREADS};

/// GPU size of main.rs: 4096 x 4096 x 4096.
pub const DEFAULT_SIZE: usize = 4096;

/// An element type with a GEMM kernel.
pub trait Elem:
    kernels::Elem
    + oxide_rt::KernelArg
    + oxide_rt::host::TmaElem
    + oxide_rt::cuda::ValidAsZeroBits
    + Copy
    + Default
    + Send
    + Sync
    + 'static
{
    /// `bf16`, `f16` or `e4m3`.
    const NAME: &'static str;
    /// C's element type.
    type Out: Output;
    /// Whether the tensor cores' sums on it keep less than f32's precision (FP8).
    const FP8: bool;
    fn to_f32(self) -> f32;
    fn from_f32(v: f32) -> Self;
    /// One launch of this type's kernel.
    fn launch(
        stream: &Arc<CudaStream>,
        cfg: LaunchConfig,
        a: &TensorMap<'_, Self, 2>,
        bt: &TensorMap<'_, Self, 2>,
        k: u32,
        c: Slice2d<'_, CudaSlice<Self::Out>>,
    ) -> Result<(), oxide_rt::Error>;
}

/// An element type of C.
pub trait Output:
    oxide_rt::KernelArg + oxide_rt::cuda::ValidAsZeroBits + Copy + Default + Send + Sync + 'static
{
    /// Relative error of the final rounding of C (half an ulp).
    const ROUNDING: f64;
    fn to_f32(self) -> f32;
}
impl Output for Bf16 {
    const ROUNDING: f64 = 1.0 / 256.0;
    fn to_f32(self) -> f32 {
        Bf16::to_f32(self)
    }
}
impl Output for F16 {
    const ROUNDING: f64 = 1.0 / 2048.0;
    fn to_f32(self) -> f32 {
        F16::to_f32(self)
    }
}

macro_rules! elem {
    ($t:ty, $name:literal, $out:ty, $fp8:expr, $launch:ident) => {
        impl Elem for $t {
            const NAME: &'static str = $name;
            type Out = $out;
            const FP8: bool = $fp8;
            fn to_f32(self) -> f32 {
                <$t>::to_f32(self)
            }
            fn from_f32(v: f32) -> Self {
                <$t>::from_f32(v)
            }
            fn launch(
                stream: &Arc<CudaStream>,
                cfg: LaunchConfig,
                a: &TensorMap<'_, Self, 2>,
                bt: &TensorMap<'_, Self, 2>,
                k: u32,
                c: Slice2d<'_, CudaSlice<$out>>,
            ) -> Result<(), oxide_rt::Error> {
                kernels::$launch(stream, cfg, a, bt, k, c)
            }
        }
    };
}
elem!(Bf16, "bf16", Bf16, false, launch_hopper_gemm_bf16_with);
elem!(F16, "f16", F16, false, launch_hopper_gemm_f16_with);
elem!(E4M3, "e4m3", Bf16, true, launch_hopper_gemm_e4m3_with);

pub struct Problem<T> {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// m x k, row-major.
    pub a: Vec<T>,
    /// B transposed: n x k, row-major (`bt[j * k + l]` is B's element (l, j)).
    pub bt: Vec<T>,
}

/// Uniform entries in [-1, 1), rounded to `T`.
pub fn problem<T: Elem>(seed: u64, m: usize, n: usize, k: usize) -> Problem<T> {
    let mut rng = Rng::new(seed);
    let mut v = |len: usize| (0..len).map(|_| T::from_f32(rng.f32())).collect::<Vec<T>>();
    let (a, bt) = (v(m * k), v(n * k));
    Problem { m, n, k, a, bt }
}

/// Element (i, j) of `A * B` in f64, and the bound on the kernel's error there: the f32
/// accumulation of `k` exact products (`(k + 2) u sum|a b|`, `u = 2^-24`) plus the final
/// rounding to C's type. On FP8, whose tensor-core sums keep about 14 significant bits, the
/// accumulation's part is `(k / 32 + 8) 2^-12 sum|a b|` instead — loose for long sums, which is
/// why [`compare`] also bounds FP8's root-mean-square error.
pub fn reference_at<T: Elem>(p: &Problem<T>, i: usize, j: usize) -> (f64, f64) {
    let (mut dot, mut abs) = (0.0f64, 0.0f64);
    for l in 0..p.k {
        let prod = p.a[i * p.k + l].to_f32() as f64 * p.bt[j * p.k + l].to_f32() as f64;
        dot += prod;
        abs += prod.abs();
    }
    let acc = if T::FP8 { (p.k as f64 / 32.0 + 8.0) * 2f64.powi(-12) } else { (p.k as f64 + 2.0) * 2f64.powi(-24) };
    (dot, acc * abs * 1.01 + dot.abs() * T::Out::ROUNDING * 1.01)
}

/// `blocks` blocks (one per SM fills the GPU, fewer when C has fewer 128 x 256 tiles), each
/// taking tiles in turn, with 193 KiB of dynamic shared memory.
pub fn config(m: usize, n: usize, blocks: u32) -> LaunchConfig {
    let tiles = m.div_ceil(BM) * n.div_ceil(BN);
    let blocks = (blocks as usize).min(tiles).max(1) as u32;
    LaunchConfig::new((blocks, 1, 1), (THREADS, 1, 1)).shared_mem_bytes(SHARED_BYTES as u32)
}

/// `Err` naming the fix when the problem cannot run (rows of k elements not a multiple of 16
/// bytes, sizes past the limits).
pub fn check<T: Elem>(p: &Problem<T>) -> Result<(), oxide_rt::Error> {
    let bad = |reason: String| Err(oxide_rt::Error::InvalidLaunch { kernel: "hopper_gemm", reason });
    let per_16_bytes = 16 / std::mem::size_of::<T>();
    if !p.k.is_multiple_of(per_16_bytes) {
        return bad(format!(
            "k = {} must be a multiple of {per_16_bytes} for {} (TMA needs rows of a multiple of 16 bytes); pad it",
            p.k,
            T::NAME
        ));
    }
    if p.a.len() != p.m * p.k || p.bt.len() != p.n * p.k {
        return bad("A or B does not hold m*k or n*k elements".into());
    }
    if p.k > u32::MAX as usize || p.m > i32::MAX as usize || p.n > i32::MAX as usize {
        return bad(format!("{} x {} x {} exceeds TMA's 32-bit coordinates; split the product", p.m, p.n, p.k));
    }
    if p.m.div_ceil(BM) > 65535 {
        return bad(format!("m = {} needs more than 65535 block rows; split the product", p.m));
    }
    Ok(())
}

/// The problem's inputs on the GPU.
pub struct OnGpu<T> {
    pub a: CudaSlice<T>,
    pub bt: CudaSlice<T>,
}

/// The inputs on the GPU and a zeroed C.
pub fn upload<T: Elem>(
    stream: &Arc<CudaStream>,
    p: &Problem<T>,
) -> Result<(OnGpu<T>, CudaSlice<T::Out>), oxide_rt::Error> {
    check(p)?;
    let g = OnGpu {
        a: stream.clone_htod(&p.a).map_err(err("copying A to the GPU"))?,
        bt: stream.clone_htod(&p.bt).map_err(err("copying B to the GPU"))?,
    };
    Ok((g, stream.alloc_zeros(p.m * p.n).map_err(err("allocating C"))?))
}

/// The TMA maps of A (boxes of 128 rows) and B transposed (boxes of 256 rows), 128 bytes wide
/// with 128-byte swizzle: what the kernel's shared-memory layouts expect.
pub fn maps<'a, T: Elem>(
    p: &Problem<T>,
    g: &'a OnGpu<T>,
) -> Result<(TensorMap<'a, T, 2>, TensorMap<'a, T, 2>), oxide_rt::Error> {
    let desc = |rows: usize, box_rows: usize| {
        TensorMapDesc::row_major([p.k as u64, rows as u64], [bk::<T>() as u32, box_rows as u32]).swizzle(Swizzle::B128)
    };
    Ok((TensorMap::new(&g.a, desc(p.m, A_BOX_ROWS))?, TensorMap::new(&g.bt, desc(p.n, BN))?))
}

/// One launch with maps already made (the benchmark's unit), of `blocks` blocks (see
/// [`config`]; `oxide_rt::host::multiprocessors` fills the GPU).
pub fn launch<T: Elem>(
    stream: &Arc<CudaStream>,
    p: &Problem<T>,
    (a, bt): &(TensorMap<'_, T, 2>, TensorMap<'_, T, 2>),
    c: &mut CudaSlice<T::Out>,
    blocks: u32,
) -> Result<(), oxide_rt::Error> {
    T::launch(stream, config(p.m, p.n, blocks), a, bt, p.k as u32, Slice2d::new(c, p.n))
}

/// C on the GPU, one block per SM.
pub fn run_gpu<T: Elem>(stream: &Arc<CudaStream>, p: &Problem<T>) -> Result<Vec<T::Out>, oxide_rt::Error> {
    run_gpu_blocks(stream, p, oxide_rt::host::multiprocessors(stream)?)
}

/// C on the GPU from `blocks` blocks (few blocks: each takes many tiles).
pub fn run_gpu_blocks<T: Elem>(
    stream: &Arc<CudaStream>,
    p: &Problem<T>,
    blocks: u32,
) -> Result<Vec<T::Out>, oxide_rt::Error> {
    let (g, mut c) = upload(stream, p)?;
    launch(stream, p, &maps(p, &g)?, &mut c, blocks)?;
    oxide_rt::host::synchronize(stream)?;
    stream.clone_dtoh(&c).map_err(err("copying C back"))
}

/// Every element (or, with `sample`, every `sample`-th row and column) within the reference's
/// bound; on FP8 also the root-mean-square error of those elements within 2^-6 of the
/// reference's (a product missing part of its sum is off by about the value itself).
pub fn compare<T: Elem>(p: &Problem<T>, got: &[T::Out], sample: usize) -> Result<f64, String> {
    let squares = std::cell::Cell::new((0.0f64, 0.0f64));
    let worst = example_common::compare_within(got.len(), (p.m, p.n), sample, |i, j| {
        let (want, tol) = reference_at(p, i, j);
        let g = got[i * p.n + j].to_f32() as f64;
        let (e2, w2) = squares.get();
        squares.set((e2 + (g - want).powi(2), w2 + want * want));
        (g, want, tol)
    })?;
    let (e2, w2) = squares.get();
    if T::FP8 && e2.sqrt() > w2.sqrt() / 64.0 {
        return Err(format!("root-mean-square error {:e} exceeds 2^-6 of the reference's {:e}", e2.sqrt(), w2.sqrt()));
    }
    Ok(worst)
}
