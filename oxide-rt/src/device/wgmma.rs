//! Hopper warpgroup tensor cores (sm_90a): `wgmma.mma_async`, where the 128 threads of a
//! warpgroup (4 consecutive warps, the first a multiple of 4) multiply a 64 x K matrix A by a
//! K x N matrix B (K = 16 for 16-bit elements, 32 for 8-bit floats: 32 bytes of each row), both
//! read from shared memory through 64-bit *matrix descriptors*, into a 64 x N f32 accumulator
//! held in registers, asynchronously.
//!
//! | operation | PTX instruction | needs |
//! | --- | --- | --- |
//! | [`WgRunning::mma_async`] on `Bf16` / `F16`, shape [`M64N64K16`], [`M64N128K16`], [`M64N256K16`] | `wgmma.mma_async.sync.aligned.m64n{64,128,256}k16.f32.{bf16,f16}.{bf16,f16}` | sm_90a |
//! | [`WgRunning::mma_async`] on `E4M3` / `E5M2` (FP8), the same accumulators (aliases [`M64N64K32`], [`M64N128K32`], [`M64N256K32`]) | `wgmma.mma_async.sync.aligned.m64n{64,128,256}k32.f32.{e4m3,e5m2}.{e4m3,e5m2}` | sm_90a |
//! | [`fence`], [`WgAcc::start`] | `wgmma.fence.sync.aligned` | sm_90a |
//! | [`commit_group`] | `wgmma.commit_group.sync.aligned` | sm_90a |
//! | [`WgRunning::commit_wait`], [`WgRunning::finish`] | `wgmma.commit_group.sync.aligned` + `wgmma.wait_group.sync.aligned N` | sm_90a |
//! | [`warpgroup_registers`] (from `specialize`; the raw `setmaxnreg_inc`/`_dec` are `unsafe`) | `setmaxnreg.{inc,dec}.sync.aligned.u32 N` | sm_90a |
//! | [`fence_proxy_async`] (from `mbarrier`) | `fence.proxy.async.shared::cta` | sm_90 |
//! | [`WgmmaTile::store`] (a tile of [`DisjointPersistentWgmmaTiles`]) | `shfl.sync.bfly.b32` (quad transpose), `bar.warp.sync`, `st.v4.b32` | sm_70 |
//!
//! The `a` ("arch-specific") target is needed: build with `.arch("sm_90a")` (and no other
//! architecture) in build.rs; anything else is a build error naming the operation. Such a
//! module runs on sm_90 GPUs only (H100, H200, GH200).
//!
//! # Shared-memory layouts and descriptors
//! Both operands are *K-major*: A is `64 x K` row-major (rows of A along M), B is stored as
//! `N x K` row-major (B transposed: one row per column of B, like a weight matrix `W[n][k]`).
//! A tile of `ROWS x K` elements is laid out in shared memory as [`KMajor`] says, with one of
//! four [`Swizzle`] modes; [`KMajor::index`] gives the element index of (row, k), so code
//! that fills a tile (or TMA with the same swizzle) writes what the tensor cores read, and
//! [`KMajor::desc`] builds the descriptor of the `rows x WG_K` slice at (row0, k0) (`WG_K` =
//! [`WgmmaElem::WG_K`], one `wgmma`'s depth: 16 bf16 / f16 or 32 FP8 elements, 32 bytes):
//!
//! | bits | field |
//! | --- | --- |
//! | 0-13 | start address (shared, bytes) >> 4 |
//! | 16-29 | leading-dimension byte offset >> 4 (next 8x16-byte core matrix along K; unused when swizzled) |
//! | 32-45 | stride-dimension byte offset >> 4 (next 8-row group along M / N) |
//! | 49-51 | base offset: 0 (tiles are aligned to their swizzle atom) |
//! | 62-63 | swizzle: 0 none, 1 128B, 2 64B, 3 32B |
//!
//! A pipelined main loop takes its descriptors from a [`TileRing`] instead ([`KMajor::ring`]
//! checks the ring's view once; [`TileRing::desc`] then has no branch): ptxas serialises
//! `wgmma`s around branches it cannot prove uniform, such as a bounds check between them.
//! [`aligned`] gives a view's first suitably aligned suffix (e.g. of dynamic shared memory).
//!
//! # Accumulators
//! [`WgAcc<S>`] holds one thread's `N / 2` f32 elements of the 64 x N accumulator of shape `S`.
//! Thread `t` of the warpgroup (`t = 32w + 4g + q`: warp `w`, `g = lane / 4`, `q = lane % 4`)
//! holds element `i` at ([`WgAcc::coord`]):
//!
//! `(row, col) = (16w + g + 8 * (i / 2 % 2), 8 * (i / 4) + 2q + i % 2)`
//!
//! While `wgmma`s run, the accumulator is a [`WgRunning<S>`], which has no way to read or
//! write its elements: PTX leaves any other access to the registers of an unfinished
//! `wgmma.mma_async` undefined, so the types rule it out. [`WgAcc::start`] hands an accumulator
//! to the tensor cores (with the `wgmma.fence` its registers need after ordinary writes), and
//! [`WgRunning::finish`] gives it back once every `wgmma` on it completed:
//! ```
//! use oxide_rt::device::wgmma::*;
//! use oxide_rt::Bf16;
//! fn dot(a: [MatDesc<Bf16>; 4], b: [MatDesc<Bf16>; 4]) -> WgAcc<M64N128K16> {
//!     let mut run = WgAcc::zero().start();
//!     for kk in 0..4 {
//!         run.mma_async(a[kk], b[kk], kk > 0);
//!     }
//!     run.finish()
//! }
//! ```
//! Reading it in between does not compile:
//! ```compile_fail
//! use oxide_rt::device::wgmma::*;
//! use oxide_rt::Bf16;
//! fn early(a: MatDesc<Bf16>, b: MatDesc<Bf16>) -> f32 {
//!     let mut run = WgAcc::<M64N64K16>::zero().start();
//!     run.mma_async(a, b, false);
//!     run.get(0)
//! }
//! ```
//! Operand types are in the types: both descriptors carry the element type, and the
//! accumulator the shape, so what compiles is one PTX instruction:
//! ```
//! use oxide_rt::device::wgmma::*;
//! use oxide_rt::{Bf16, F16};
//! fn bf16(acc: &mut WgRunning<M64N128K16>, a: MatDesc<Bf16>, b: MatDesc<Bf16>) {
//!     acc.mma_async(a, b, true)
//! }
//! fn f16(acc: &mut WgRunning<M64N256K16>, a: MatDesc<F16>, b: MatDesc<F16>) {
//!     acc.mma_async(a, b, false)
//! }
//! ```
//! Mixed element types do not:
//! ```compile_fail
//! use oxide_rt::device::wgmma::*;
//! use oxide_rt::{Bf16, F16};
//! fn mixed(acc: &mut WgRunning<M64N128K16>, a: MatDesc<Bf16>, b: MatDesc<F16>) {
//!     acc.mma_async(a, b, true)
//! }
//! ```
//! FP8 runs on the same accumulators, each `wgmma` 32 deep; a tile's descriptors step by
//! [`TileRing::step_desc`] (the `J`-th wgmma of a k-tile, whatever the element's size):
//! ```
//! use oxide_rt::device::wgmma::*;
//! use oxide_rt::E4M3;
//! type L = KMajor<E4M3, Swizzle128B, 64, 128>; // 64 rows of 128 bytes: four k32 wgmmas
//! fn fp8(acc: &mut WgRunning<M64N128K32>, a: TileRing<E4M3, Swizzle128B, 64, 128, 4>, b: TileRing<E4M3, Swizzle128B, 128, 128, 4>, i: usize) {
//!     acc.mma_async(a.step_desc::<0>(i), b.step_desc::<0>(i), true);
//!     acc.mma_async(a.step_desc::<3>(i), b.step_desc::<3>(i), true);
//! }
//! ```
//! Nor element types without a wgmma of this kind:
//! ```compile_fail
//! use oxide_rt::device::wgmma::*;
//! fn float(acc: &mut WgRunning<M64N64K16>, a: MatDesc<f32>, b: MatDesc<f32>) {
//!     acc.mma_async(a, b, true)
//! }
//! ```
//! Nor a layout whose rows are not the swizzle's width:
//! ```compile_fail
//! use oxide_rt::device::wgmma::*;
//! use oxide_rt::Bf16;
//! // 128B swizzle rows are 64 bf16; 48 is not a multiple.
//! const BAD: usize = KMajor::<Bf16, Swizzle128B, 64, 48>::LEN;
//! ```
//!
//! # The rules
//! Every wgmma function is a warpgroup collective: all 128 threads of the warpgroup call it
//! (with the same descriptors) or the result is undefined. Part of that is checked: every
//! [`fence`] (so every [`WgAcc::start`]) panics unless all 32 lanes of the calling warp reach it
//! together. That the four warps of the warpgroup take the same path between a fence and its
//! commit stays the caller's rule (a check there would be a branch, around which ptxas
//! serialises the `wgmma`s). The order within a warpgroup is:
//! shared memory written and made visible (a barrier; after plain stores or `cp_async`, also
//! [`fence_proxy_async`] before it, as wgmma reads through the async proxy), then
//! [`WgAcc::start`] (or [`fence`]), then [`WgRunning::mma_async`]s, and
//! [`WgRunning::commit_wait`] before the shared memory the group reads is overwritten;
//! [`WgRunning::finish`] before the accumulator is read (the types enforce this last step; a
//! `WgRunning` dropped or forgotten in flight leaves a `wgmma` whose result nothing reads,
//! which ptxas removes, so no asynchronous write lands in registers given to other values —
//! checked in the SASS of ptxas 13.0 for sm_90a). The descriptors are bounds-checked when
//! built (the slice `rows x WG_K` must lie in the tile, the tile in its view, the view aligned to
//! the swizzle atom): a panic otherwise.
//!
//! The CPU executor does not emulate wgmma: a kernel that reaches [`WgRunning::mma_async`],
//! [`fence`], [`commit_group`] or a wait there stops with a panic naming the operation, which the
//! CPU launcher returns as `Err` — never a wrong answer. Descriptors and layouts work on both.

use super::half::{Bf16, E4M3, E5M2, F16};
use super::shared::{SharedElem, SharedSlice};
use core::marker::PhantomData;

#[cfg(target_arch = "nvptx64")]
use super::nvptx_wgmma as imp;

mod sealed {
    pub trait Sealed {}
}

// ---------------------------------------------------------------------------------------------
// Element types and shapes

/// An input element type of `wgmma.mma_async` with f32 accumulation: [`Bf16`], [`F16`] and the
/// FP8 types [`E4M3`], [`E5M2`].
pub trait WgmmaElem: sealed::Sealed + SharedElem {
    /// Its PTX type name.
    const PTX: &'static str;
    /// The depth of one `wgmma` on it, in elements: 32 bytes of each row (16 for 16-bit types,
    /// 32 for FP8).
    const WG_K: usize;
    #[doc(hidden)]
    const KIND: u8;
}

/// An element type [`WgmmaTile::store`] writes accumulators as: [`Bf16`], [`F16`] (16-bit, so a
/// quad's eight neighbouring columns are one 16-byte store).
pub trait WgmmaOut: WgmmaElem {
    /// `[x, y]` rounded to this type (to nearest even): one `cvt.rn.{bf16,f16}x2.f32` on the GPU.
    fn pair_from_f32(x: f32, y: f32) -> [Self; 2];
    #[doc(hidden)]
    fn bits(self) -> u16;
    #[doc(hidden)]
    fn from_bits(bits: u16) -> Self;
}
impl sealed::Sealed for Bf16 {}
impl WgmmaElem for Bf16 {
    const PTX: &'static str = "bf16";
    const WG_K: usize = 16;
    const KIND: u8 = 0;
}
impl WgmmaOut for Bf16 {
    #[inline(always)]
    fn pair_from_f32(x: f32, y: f32) -> [Self; 2] {
        #[cfg(target_arch = "nvptx64")]
        return imp::cvt_bf16x2(x, y).map(Bf16);
        #[cfg(not(target_arch = "nvptx64"))]
        return [Bf16::from_f32(x), Bf16::from_f32(y)];
    }
    #[inline(always)]
    fn bits(self) -> u16 {
        self.0
    }
    #[inline(always)]
    fn from_bits(bits: u16) -> Self {
        Bf16(bits)
    }
}
impl sealed::Sealed for F16 {}
impl WgmmaElem for F16 {
    const PTX: &'static str = "f16";
    const WG_K: usize = 16;
    const KIND: u8 = 1;
}
impl WgmmaOut for F16 {
    #[inline(always)]
    fn pair_from_f32(x: f32, y: f32) -> [Self; 2] {
        #[cfg(target_arch = "nvptx64")]
        return imp::cvt_f16x2(x, y).map(F16);
        #[cfg(not(target_arch = "nvptx64"))]
        return [F16::from_f32(x), F16::from_f32(y)];
    }
    #[inline(always)]
    fn bits(self) -> u16 {
        self.0
    }
    #[inline(always)]
    fn from_bits(bits: u16) -> Self {
        F16(bits)
    }
}

impl sealed::Sealed for E4M3 {}
impl WgmmaElem for E4M3 {
    const PTX: &'static str = "e4m3";
    const WG_K: usize = 32;
    const KIND: u8 = 2;
}
impl sealed::Sealed for E5M2 {}
impl WgmmaElem for E5M2 {
    const PTX: &'static str = "e5m2";
    const WG_K: usize = 32;
    const KIND: u8 = 3;
}

/// The PTX name of a `wgmma` of `kind` (a [`WgmmaElem::KIND`]) and width `n`, for the CPU
/// executor's error.
#[cfg(not(target_arch = "nvptx64"))]
macro_rules! mma_name {
    ($kind:expr, $n:literal) => {
        match $kind {
            0 => concat!("wgmma.mma_async.sync.aligned.m64n", stringify!($n), "k16.f32.bf16.bf16"),
            1 => concat!("wgmma.mma_async.sync.aligned.m64n", stringify!($n), "k16.f32.f16.f16"),
            2 => concat!("wgmma.mma_async.sync.aligned.m64n", stringify!($n), "k32.f32.e4m3.e4m3"),
            _ => concat!("wgmma.mma_async.sync.aligned.m64n", stringify!($n), "k32.f32.e5m2.e5m2"),
        }
    };
}

/// The shape of one `wgmma.mma_async`'s accumulator: `64 x N`, f32 (the product `64 x N x 16`
/// on 16-bit elements, `64 x N x 32` on FP8).
pub trait WgShape: sealed::Sealed + Copy {
    const N: usize;
    /// One thread's accumulator registers: `N / 2` f32 as bits.
    #[doc(hidden)]
    type Regs: Copy + AsRef<[u32]> + AsMut<[u32]>;
    #[doc(hidden)]
    const ZERO: Self::Regs;
    #[doc(hidden)]
    fn mma(kind: u8, d: &mut Self::Regs, a: u64, b: u64, scale_d: bool);
    #[doc(hidden)]
    fn wait<const N: u32>(d: &mut Self::Regs);
}

macro_rules! shapes {
    ($($name:ident = $n:literal, $mma:ident, $wait:ident;)*) => {$(
        #[doc = concat!("64 x ", stringify!($n), " x 16 (x 32 on FP8): an accumulator of ", stringify!($n), " / 2 f32 per thread.")]
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $name;
        impl sealed::Sealed for $name {}
        impl WgShape for $name {
            const N: usize = $n;
            type Regs = [u32; $n / 2];
            const ZERO: Self::Regs = [0; $n / 2];
            #[inline(always)]
            #[track_caller]
            fn mma(kind: u8, d: &mut Self::Regs, a: u64, b: u64, scale_d: bool) {
                #[cfg(target_arch = "nvptx64")]
                imp::$mma(kind, d, a, b, scale_d as u32);
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = (d, a, b, scale_d);
                    cpu_unsupported(mma_name!(kind, $n));
                }
            }
            #[inline(always)]
            #[track_caller]
            fn wait<const N: u32>(d: &mut Self::Regs) {
                #[cfg(target_arch = "nvptx64")]
                imp::$wait::<N>(d);
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = d;
                    cpu_unsupported("wgmma.wait_group.sync.aligned");
                }
            }
        }
    )*};
}
shapes! {
    M64N64K16 = 64, mma_n64, wait_n64;
    M64N128K16 = 128, mma_n128, wait_n128;
    M64N256K16 = 256, mma_n256, wait_n256;
}

/// [`M64N64K16`]'s accumulator, named for FP8 `wgmma`s (`m64n64k32`).
pub type M64N64K32 = M64N64K16;
/// [`M64N128K16`]'s accumulator, named for FP8 `wgmma`s (`m64n128k32`).
pub type M64N128K32 = M64N128K16;
/// [`M64N256K16`]'s accumulator, named for FP8 `wgmma`s (`m64n256k32`).
pub type M64N256K32 = M64N256K16;

// ---------------------------------------------------------------------------------------------
// Swizzle modes and K-major layouts

/// How a K-major tile's 16-byte chunks are permuted in shared memory (the same modes as TMA's
/// `CU_TENSOR_MAP_SWIZZLE_*`, so a TMA load with the same mode fills a tile in this layout).
pub trait Swizzle: sealed::Sealed + Copy {
    /// Bytes per row of the swizzle atom (8 rows); 0 for no swizzle.
    const BYTES: usize;
    /// The descriptor's bits 62-63.
    #[doc(hidden)]
    const MODE: u64;
}

macro_rules! swizzles {
    ($($name:ident = $bytes:expr, $mode:expr, $doc:expr;)*) => {$(
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $name;
        impl sealed::Sealed for $name {}
        impl Swizzle for $name {
            const BYTES: usize = $bytes;
            const MODE: u64 = $mode;
        }
    )*};
}
swizzles! {
    NoSwizzle = 0, 0, "No swizzle: 8 x 16-byte core matrices, each 128 contiguous bytes, along K first, then the next 8 rows.";
    Swizzle32B = 32, 3, "32-byte rows (16 bf16, 32 FP8); chunk bit 0 ^= row bit 2. Atoms of 8 rows: 256 bytes, 256-byte aligned.";
    Swizzle64B = 64, 2, "64-byte rows (32 bf16, 64 FP8); chunk bits 0-1 ^= row bits 1-2. Atoms of 512 bytes, 512-byte aligned.";
    Swizzle128B = 128, 1, "128-byte rows (64 bf16, 128 FP8); chunk bits 0-2 ^= row bits 0-2. Atoms of 1024 bytes, 1024-byte aligned.";
}

/// The shared-memory layout of a K-major `ROWS x K` tile of `T` with swizzle `SW`: where
/// element (row, k) lives ([`index`](Self::index)) and the matrix descriptors of its
/// `rows x WG_K` slices ([`desc`](Self::desc); `WG_K` = [`WgmmaElem::WG_K`]).
///
/// Swizzled (`SW::BYTES` = 32, 64 or 128): the tile is `K / W` column blocks of `W =
/// SW::BYTES / size_of::<T>()` elements, one after the other; in a block, row `r` is `SW::BYTES`
/// bytes at `r * SW::BYTES`, its 16-byte chunk `c` stored at chunk `c ^ (r * SW::BYTES / 128 %
/// (SW::BYTES / 16))`. Not swizzled: 8-row x 16-byte core matrices of 128 contiguous bytes,
/// core matrix (`r / 8`, `k / 8`) at `(r / 8 * K / 8 + k / 8) * 128` bytes.
///
/// `ROWS` must be a multiple of 8 and `K` of `WG_K` and, when swizzled, of `W` (a compile error
/// otherwise).
#[derive(Clone, Copy, Debug, Default)]
pub struct KMajor<T, SW, const ROWS: usize, const K: usize>(PhantomData<(T, SW)>);

impl<T: WgmmaElem, SW: Swizzle, const ROWS: usize, const K: usize> KMajor<T, SW, ROWS, K> {
    const SIZE: usize = core::mem::size_of::<T>();
    /// Elements per swizzle row (0 when not swizzled).
    const W: usize = SW::BYTES / Self::SIZE;
    const OK: () = assert!(
        ROWS % 8 == 0 && ROWS > 0 && K % T::WG_K == 0 && K > 0 && (SW::BYTES == 0 || K % Self::W == 0),
        "KMajor<T, SW, ROWS, K>: ROWS must be a multiple of 8, K of one wgmma's depth (16 bf16 / f16, 32 FP8) and of the swizzle row (32, 64 or 128 bytes)"
    );

    /// Elements in the tile.
    pub const LEN: usize = {
        let () = Self::OK;
        ROWS * K
    };

    /// Bytes the tile's first element must be aligned to: the swizzle atom (8 rows), 16 when
    /// not swizzled.
    pub const ALIGN: usize = if SW::BYTES == 0 { 16 } else { 8 * SW::BYTES };

    /// Element index in the tile of (row, k); `row < ROWS`, `k < K`.
    #[inline(always)]
    pub const fn index(row: usize, k: usize) -> usize {
        let () = Self::OK;
        if SW::BYTES == 0 {
            let e = 16 / Self::SIZE;
            (row / 8 * (K / e) + k / e) * (8 * e) + row % 8 * e + k % e
        } else {
            let (w, bytes) = (Self::W, SW::BYTES);
            let byte = k % w * Self::SIZE;
            let chunk = (byte / 16) ^ (row * bytes / 128 % (bytes / 16));
            k / w * ROWS * w + row * w + (chunk * 16 + byte % 16) / Self::SIZE
        }
    }

    /// Byte offset in the tile where the slice at (row0, k0) starts, and the leading and
    /// stride byte offsets of the descriptor.
    #[inline(always)]
    const fn geometry(row0: usize, k0: usize) -> (usize, usize, usize) {
        if SW::BYTES == 0 {
            (Self::index(row0, k0) * Self::SIZE, 128, K / (16 / Self::SIZE) * 128)
        } else {
            let w = Self::W;
            // Stepping along K inside a swizzled row moves the start address by whole 16-byte
            // chunks; the hardware applies the swizzle to the absolute address, so the slice
            // reads the chunks `index` put there.
            ((k0 / w * ROWS * w + row0 * w + k0 % w) * Self::SIZE, 16, 8 * SW::BYTES)
        }
    }

    /// `COUNT` tiles of this layout at the start of `view` (aligned to [`ALIGN`](Self::ALIGN)
    /// bytes, at least `COUNT * LEN` long: a panic otherwise), for descriptors without checks.
    #[inline(always)]
    #[track_caller]
    pub fn ring<const COUNT: usize>(view: SharedSlice<T>) -> TileRing<T, SW, ROWS, K, COUNT> {
        let () = Self::OK;
        if view.len() < COUNT * Self::LEN {
            bad_slice(0, 0, ROWS * COUNT, K, view.len(), T::WG_K);
        }
        if view.as_ptr() as usize % Self::ALIGN != 0 {
            misaligned(Self::ALIGN);
        }
        let addr = shared_addr(view.as_ptr() as *const u8);
        TileRing { view: view.split_at(COUNT * Self::LEN).0, addr, _sw: PhantomData }
    }

    /// The descriptor of the `(ROWS - row0) x WG_K` slice whose first element is (row0, k0) of
    /// the tile occupying `tile[0..LEN]` — for `wgmma`'s A (64 rows used) or B (N rows used).
    /// `row0` must be a multiple of 8 and `k0` of `WG_K` ([`WgmmaElem::WG_K`]: 16 for 16-bit
    /// elements, 32 for FP8), `k0 + WG_K <= K`, `tile` at least `LEN`
    /// long and aligned to [`ALIGN`](Self::ALIGN) bytes: a panic otherwise.
    #[inline(always)]
    #[track_caller]
    pub fn desc(tile: SharedSlice<T>, row0: usize, k0: usize) -> MatDesc<T> {
        let () = Self::OK;
        if row0 % 8 != 0 || row0 >= ROWS || k0 % T::WG_K != 0 || k0 + T::WG_K > K || tile.len() < Self::LEN {
            bad_slice(row0, k0, ROWS, K, tile.len(), T::WG_K);
        }
        let base = tile.as_ptr() as usize;
        if base % Self::ALIGN != 0 {
            misaligned(Self::ALIGN);
        }
        let (offset, lbo, sbo) = Self::geometry(row0, k0);
        let addr = shared_addr(tile.as_ptr() as *const u8) + offset as u32;
        MatDesc { bits: encode(addr, lbo as u32, sbo as u32, SW::MODE), rows: (ROWS - row0) as u32, _t: PhantomData }
    }
}

/// `COUNT` tiles of layout `L` one after the other in shared memory (a pipeline's stages),
/// checked once when made ([`KMajor::ring`]), so that the descriptors of its tiles
/// ([`desc`](Self::desc)) need no check — and a kernel's main loop no branch between its
/// `wgmma`s (ptxas serialises `wgmma`s around branches it cannot prove uniform).
pub struct TileRing<T, SW, const ROWS: usize, const K: usize, const COUNT: usize> {
    /// Exactly the `COUNT` tiles.
    view: SharedSlice<T>,
    /// The first tile's shared-space address.
    addr: u32,
    _sw: PhantomData<SW>,
}
impl<T, SW, const ROWS: usize, const K: usize, const COUNT: usize> Clone for TileRing<T, SW, ROWS, K, COUNT> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, SW, const ROWS: usize, const K: usize, const COUNT: usize> Copy for TileRing<T, SW, ROWS, K, COUNT> {}

impl<T: WgmmaElem, SW: Swizzle, const ROWS: usize, const K: usize, const COUNT: usize> TileRing<T, SW, ROWS, K, COUNT> {
    /// Tile `i % COUNT` (for the code that fills it: element (row, k) at
    /// [`KMajor::index`]`(row, k)`).
    #[inline(always)]
    pub fn tile(self, i: usize) -> SharedSlice<T> {
        let len = KMajor::<T, SW, ROWS, K>::LEN;
        self.view.split_at(i % COUNT * len).1.split_at(len).0
    }

    /// Tiles `i % COUNT ..` up to `n` of them (fewer at the ring's end), as one view: the
    /// destination of a TMA box that fills several neighbouring tiles at once (e.g. 128 rows
    /// of 128-byte rows fill two 64-row tiles of a ring).
    #[inline(always)]
    pub fn tiles(self, i: usize, n: usize) -> SharedSlice<T> {
        let len = KMajor::<T, SW, ROWS, K>::LEN;
        self.view.split_at(i % COUNT * len).1.split_at(n.saturating_mul(len)).0
    }

    /// The descriptor of the `ROWS x WG_K` slice at column `K0` of tile `i % COUNT` (`K0` a
    /// multiple of [`WgmmaElem::WG_K`] with `K0 + WG_K <= K`: a compile error otherwise).
    #[inline(always)]
    pub fn desc<const K0: usize>(self, i: usize) -> MatDesc<T> {
        const {
            assert!(
                K0 % T::WG_K == 0 && K0 + T::WG_K <= K,
                "TileRing::desc::<K0>: K0 must be a multiple of one wgmma's depth (16 bf16 / f16, 32 FP8) with K0 + depth <= K"
            )
        };
        self.at(i, K0)
    }

    /// The descriptor of the `J`-th `wgmma`'s slice of tile `i % COUNT`: columns `J * WG_K..`
    /// (`(J + 1) * WG_K <= K`: a compile error otherwise). The same code steps through a k-tile
    /// of 16-bit or FP8 elements: `step_desc::<0>` .. `step_desc::<3>` of a 128-byte row.
    #[inline(always)]
    pub fn step_desc<const J: usize>(self, i: usize) -> MatDesc<T> {
        const { assert!((J + 1) * T::WG_K <= K, "TileRing::step_desc::<J>: the J-th wgmma's slice must lie in the tile") };
        self.at(i, J * T::WG_K)
    }

    #[inline(always)]
    fn at(self, i: usize, k0: usize) -> MatDesc<T> {
        let l = KMajor::<T, SW, ROWS, K>::LEN * core::mem::size_of::<T>();
        let (offset, lbo, sbo) = KMajor::<T, SW, ROWS, K>::geometry(0, k0);
        let addr = self.addr + (i % COUNT * l + offset) as u32;
        MatDesc { bits: encode(addr, lbo as u32, sbo as u32, SW::MODE), rows: ROWS as u32, _t: PhantomData }
    }
}

/// The 64-bit descriptor: start address, leading and stride byte offsets (each >> 4, 14
/// bits), swizzle mode in bits 62-63.
#[inline(always)]
pub const fn encode(addr: u32, lbo: u32, sbo: u32, mode: u64) -> u64 {
    field(addr) | field(lbo) << 16 | field(sbo) << 32 | mode << 62
}

/// A byte count as a descriptor field: >> 4, 14 bits.
const fn field(v: u32) -> u64 {
    ((v >> 4) & 0x3fff) as u64
}

/// A shared-memory matrix descriptor of a `rows x WG_K` K-major slice of `T` (see [`KMajor::desc`]).
pub struct MatDesc<T> {
    bits: u64,
    /// Rows of the tile from the slice's first on (what `wgmma` may read).
    rows: u32,
    _t: PhantomData<T>,
}
impl<T> Clone for MatDesc<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for MatDesc<T> {}

impl<T> MatDesc<T> {
    /// The 64-bit descriptor `wgmma` takes.
    #[inline(always)]
    pub fn bits(self) -> u64 {
        self.bits
    }
    /// Rows of the tile from the slice's first row on.
    #[inline(always)]
    pub fn rows(self) -> usize {
        self.rows as usize
    }
}

/// The view's suffix starting at its first element aligned to `align` bytes (a power of two),
/// e.g. `aligned(dynamic_shared::<Bf16>(), 1024)` for tiles with 128-byte swizzle (ask for
/// `align` bytes more dynamic shared memory than the tiles need).
#[inline(always)]
pub fn aligned<T: SharedElem>(view: SharedSlice<T>, align: usize) -> SharedSlice<T> {
    let addr = view.as_ptr() as usize;
    let pad = addr.wrapping_neg() & (align - 1);
    view.split_at(pad / core::mem::size_of::<T>().max(1)).1
}

/// The shared-space address of a shared-memory pointer (`cvta.to.shared`; its low 32 bits on
/// the CPU executor, where only the alignment matters).
#[inline(always)]
fn shared_addr(p: *const u8) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    return imp::shared_addr(p);
    #[cfg(not(target_arch = "nvptx64"))]
    return (p as usize & 0x3ffff) as u32;
}

// ---------------------------------------------------------------------------------------------
// Accumulators and the operations

/// One thread's part of the 64 x N f32 accumulator of a `wgmma` of shape `S` (see the [module
/// docs](self) for which elements).
pub struct WgAcc<S: WgShape> {
    regs: S::Regs,
}
impl<S: WgShape> Clone for WgAcc<S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S: WgShape> Copy for WgAcc<S> {}

impl<S: WgShape> WgAcc<S> {
    /// Elements per thread: `N / 2`.
    pub const LEN: usize = S::N / 2;

    /// An accumulator of zeros.
    #[inline(always)]
    pub fn zero() -> Self {
        WgAcc { regs: S::ZERO }
    }

    /// Element `i` (`< LEN`).
    #[inline(always)]
    #[track_caller]
    pub fn get(&self, i: usize) -> f32 {
        f32::from_bits(self.regs.as_ref()[i])
    }

    /// Sets element `i` (`< LEN`).
    #[inline(always)]
    #[track_caller]
    pub fn set(&mut self, i: usize, v: f32) {
        self.regs.as_mut()[i] = v.to_bits();
    }

    /// Hands the accumulator to the tensor cores: a `wgmma.fence` (its registers were last
    /// written by ordinary code), then [`WgRunning::mma_async`]s on what this returns. A
    /// warpgroup collective.
    #[inline(always)]
    #[track_caller]
    pub fn start(self) -> WgRunning<S> {
        fence();
        WgRunning { regs: self.regs }
    }

    /// (row, column) in the 64 x N accumulator of element `i` of thread `t` of the warpgroup
    /// (`t < 128`, e.g. `thread_rank() % 128`).
    #[inline(always)]
    pub fn coord(t: u32, i: usize) -> (usize, usize) {
        let (w, lane) = (t as usize / 32 % 4, t as usize % 32);
        (16 * w + lane / 4 + 8 * (i / 2 % 2), 8 * (i / 4) + 2 * (lane % 4) + i % 2)
    }
}

/// Orders this warpgroup's earlier register and shared-memory accesses before the `wgmma`s
/// that follow (PTX `wgmma.fence.sync.aligned`). [`WgAcc::start`] issues one; a main loop may
/// issue more. A warpgroup collective.
#[inline(always)]
#[track_caller]
pub fn fence() {
    // Each warp is whole here (a panic otherwise); the checks stay out of the fence-to-commit
    // window, where ptxas serialises `wgmma`s around any branch.
    super::warp::require_converged("wgmma.fence");
    #[cfg(target_arch = "nvptx64")]
    imp::fence();
    #[cfg(not(target_arch = "nvptx64"))]
    cpu_unsupported("wgmma.fence.sync.aligned");
}

/// Closes the group of this warpgroup's `mma_async`s issued since the last commit (PTX
/// `wgmma.commit_group.sync.aligned`); [`WgRunning::commit_wait`] and [`WgRunning::finish`]
/// commit too. A warpgroup collective.
#[inline(always)]
#[track_caller]
pub fn commit_group() {
    #[cfg(target_arch = "nvptx64")]
    imp::commit_group();
    #[cfg(not(target_arch = "nvptx64"))]
    cpu_unsupported("wgmma.commit_group.sync.aligned");
}

/// An accumulator the tensor cores may still be writing (see the [module docs](self)): `wgmma`s
/// go on it, and [`finish`](Self::finish) gives back the [`WgAcc`] to read. Neither `Copy` nor
/// readable, so no code can touch its registers while a `wgmma` on them runs.
#[must_use = "an accumulator in flight is read only after `finish`"]
pub struct WgRunning<S: WgShape> {
    regs: S::Regs,
}

impl<S: WgShape> WgRunning<S> {
    /// `acc = A * B + (accumulate ? acc : 0)` for a 64 x K A and a K x N B in shared memory
    /// (PTX `wgmma.mma_async.sync.aligned.m64nNkK.f32.T.T`, both K-major; K =
    /// [`WgmmaElem::WG_K`]: 16 on bf16 / f16, 32 on FP8), started asynchronously. A warpgroup
    /// collective; panics when `a` has fewer than 64 rows or `b` fewer than N.
    ///
    /// On FP8, Hopper's tensor cores add into the accumulator with less than f32's precision
    /// (published measurements: about 14 significant bits), so long sums lose more than on
    /// 16-bit inputs; the GEMM example's check allows for it.
    #[inline(always)]
    #[track_caller]
    pub fn mma_async<T: WgmmaElem>(&mut self, a: MatDesc<T>, b: MatDesc<T>, accumulate: bool) {
        if a.rows < 64 || (b.rows as usize) < S::N {
            too_few_rows(a.rows, b.rows, S::N, T::WG_K);
        }
        S::mma(T::KIND, &mut self.regs, a.bits, b.bits, accumulate);
    }

    /// Commits the `mma_async`s issued since the last commit as one group, then waits until at
    /// most `N` of this warpgroup's groups are pending (PTX `wgmma.commit_group` +
    /// `wgmma.wait_group.sync.aligned N`): the shared memory the finished groups read may then
    /// be overwritten. The accumulator stays in flight (`N = 0` too: read it after
    /// [`finish`](Self::finish)).
    #[inline(always)]
    #[track_caller]
    pub fn commit_wait<const N: u32>(&mut self) {
        commit_group();
        S::wait::<N>(&mut self.regs);
    }

    /// Waits for every `wgmma` of this warpgroup (PTX `wgmma.wait_group.sync.aligned 0`, after a
    /// `commit_group` of any not yet committed) and gives the accumulator back to read.
    #[inline(always)]
    #[track_caller]
    pub fn finish(mut self) -> WgAcc<S> {
        commit_group();
        S::wait::<0>(&mut self.regs);
        WgAcc { regs: self.regs }
    }
}

/// Makes this thread's earlier generic-proxy writes to shared memory (plain stores,
/// `cp_async`) visible to the async proxy that [`WgRunning::mma_async`] (and TMA) read through (PTX
/// `fence.proxy.async.shared::cta`, sm_90): each writer runs it before the barrier that hands
/// the tile to the `wgmma`s. The same function as `mbarrier::fence_proxy_async`.
pub use super::mbarrier::fence_proxy_async;

/// Register budgets for warp-specialised kernels (`setmaxnreg`, sm_90a): the same items as
/// [`specialize`](super::specialize)'s.
pub use super::specialize::{setmaxnreg_dec, setmaxnreg_inc, warpgroup_registers, Role};

// ---------------------------------------------------------------------------------------------
// Output of wgmma accumulators

/// The accumulators of a warpgroup-tiled wgmma kernel, written where they belong: a row-major
/// matrix with `cols` columns (the host passes `oxide_rt::Slice2d::new(&mut buf, cols)`).
///
/// * Block `L = by * gx + bx` (`gx = grid_dim().x`, the tiles along the columns; `gy` along
///   the rows) owns tile `(tm, tn)`, the `BM x BN` tile whose top-left element is row `tm * BM`,
///   column `tn * BN`, in *grouped* order, so that blocks launched together share rows of A
///   and columns of B in L2: the tiles are taken `GROUP` tile-rows at a time, column by column
///   within a group — with `g = L / (GROUP * gx)`, `h = min(GROUP, gy - g * GROUP)` rows in
///   that group and `r = L % (GROUP * gx)`: `tm = g * GROUP + r % h`, `tn = r / h`. `GROUP = 1`
///   is the plain order (`tm = by`, `tn = bx`).
/// * Warpgroup `g` of the block (`thread_rank() / 128`) is *consumer* `c = g - WG0` when
///   `WG0 <= g < WG0 + BM / 64` (warpgroups before `WG0` are producers and own nothing); it
///   owns rows `64c..64c + 64` of the block's tile, all `BN` columns — one `64 x BN`
///   accumulator (`WgAcc` of a shape with `N = BN`).
/// * Thread `t = thread_rank() % 128` of it owns element `i < BN / 2` at
///   [`WgAcc::coord`]`(t, i)` of that 64 x BN piece: `get_mut(i)` is where `acc.get(i)` goes.
///
/// Why no two threads meet: `BM`, `BN`, `WG0` and `GROUP` are in the type and `cols` comes from
/// the host, so all threads agree on the tiling; `L -> (tm, tn)` is a bijection from the
/// blocks onto the `gy x gx` tiles (each group of `h * gx` blocks onto its `h` tile-rows), so
/// the blocks' tiles are disjoint, as are the
/// consumers' row ranges; `coord` is a bijection from (thread, element) onto the 64 x BN
/// piece; and a launch with more than one block along z owns nothing.
///
/// A persistent kernel (one block per SM, each taking tiles in turn) takes
/// [`DisjointPersistentWgmmaTiles`] instead; its tiles also store a whole accumulator with
/// 16-byte stores ([`WgmmaTile::store`]).
pub struct DisjointWgmmaTiles<'a, T, const BM: usize, const BN: usize, const WG0: usize, const GROUP: usize> {
    ptr: core::ptr::NonNull<T>,
    len: usize,
    /// At most `u32::MAX` (the launchers refuse more).
    cols: u32,
    /// `len / cols`, from the launcher.
    rows: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

super::slice::output_len!(DisjointWgmmaTiles, const BM: usize, const BN: usize, const WG0: usize, const GROUP: usize);

impl<T, const BM: usize, const BN: usize, const WG0: usize, const GROUP: usize>
    DisjointWgmmaTiles<'_, T, BM, BN, WG0, GROUP>
{
    const SHAPE_OK: () = assert!(
        BM % 64 == 0 && BM > 0 && BN % 8 == 0 && BN > 0 && BN <= 256 && GROUP > 0,
        "DisjointWgmmaTiles<T, BM, BN, WG0, GROUP>: BM must be a multiple of 64, BN a multiple of 8 up to 256, GROUP at least 1"
    );

    /// Columns of the matrix, as the host passed them.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols as usize
    }

    /// Whole rows in the buffer (`len / cols`).
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Row and column of this block's tile's top-left element (`tm * BM`, `tn * BN`, see the
    /// type's docs).
    #[inline(always)]
    pub fn origin(&self) -> (usize, usize) {
        let () = Self::SHAPE_OK;
        let (b, g) = (super::thread::block_idx(), super::thread::grid_dim());
        let (tm, tn) = grouped(b.x as usize, b.y as usize, g.x as usize, g.y as usize, GROUP);
        (tm * BM, tn * BN)
    }

    /// Row and column of the top-left element of this thread's warpgroup's 64 x BN piece, or
    /// `None` for a warpgroup that owns none.
    #[inline(always)]
    pub fn piece_origin(&self) -> Option<(usize, usize)> {
        if super::thread::grid_dim().z != 1 {
            return None;
        }
        piece_origin::<BM, WG0>(self.origin())
    }

    /// Matrix row and column of this thread's element `i`, or `None` when it has none: `i >=
    /// BN / 2`, past the matrix, or a warpgroup or launch that owns nothing.
    #[inline(always)]
    pub fn position(&self, i: usize) -> Option<(usize, usize)> {
        element_position::<BN>(self.piece_origin()?, i, self.rows, self.cols())
    }

    /// This thread's element `i` (see [`position`](Self::position)).
    #[inline(always)]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        let (row, col) = self.position(i)?;
        // SAFETY: `row < rows = len / cols` and `col < cols` (checked by `position`), so `row * cols + col < len`; owned by this thread only (see the type's docs); `&mut self` stops this thread from taking it twice.
        Some(unsafe { &mut *self.ptr.as_ptr().add(row * self.cols() + col) })
    }

    /// This thread's elements `i` and `i + 1` (`i` even: two neighbouring columns) as one
    /// pair, for a single wider store; `None` when either has no place or `cols` is odd (the
    /// pair would be misaligned) — then store them one by one with [`get_mut`](Self::get_mut).
    #[inline(always)]
    pub fn pair_mut(&mut self, i: usize) -> Option<&mut [T; 2]> {
        let (row, col) = pair_position(self.position(i)?, i, self.cols())?;
        // SAFETY: both elements are in bounds (`col + 1 < cols`, `row < rows`, checked by `pair_position` and `position`) and owned by this thread (elements `i` and `i + 1` are columns `col` and `col + 1`, see `WgAcc::coord`); `[T; 2]` needs only `T`'s alignment, which the buffer has (the launchers check it).
        Some(unsafe { &mut *(self.ptr.as_ptr().add(row * self.cols() + col) as *mut [T; 2]) })
    }
}

/// Top-left element of this thread's warpgroup's 64-row piece of the `BM`-row tile at
/// `origin`, or `None` for a warpgroup outside `WG0..WG0 + BM / 64`.
#[inline(always)]
fn piece_origin<const BM: usize, const WG0: usize>(origin: (usize, usize)) -> Option<(usize, usize)> {
    let g = super::thread::thread_rank() as usize / 128;
    if g < WG0 || g >= WG0 + BM / 64 {
        return None;
    }
    Some((origin.0 + (g - WG0) * 64, origin.1))
}

/// Matrix position of this thread's accumulator element `i` of the 64 x BN piece at `piece`,
/// or `None` past `BN / 2` or past the `rows x cols` matrix.
#[inline(always)]
fn element_position<const BN: usize>(
    piece: (usize, usize),
    i: usize,
    rows: usize,
    cols: usize,
) -> Option<(usize, usize)> {
    if i >= BN / 2 {
        return None;
    }
    let (r, c) = WgAcc::<M64N64K16>::coord(super::thread::thread_rank() % 128, i);
    let (row, col) = (piece.0 + r, piece.1 + c);
    (row < rows && col < cols).then_some((row, col))
}

impl<T: WgmmaOut, const BM: usize, const BN: usize, const WG0: usize> WgmmaTile<'_, T, BM, BN, WG0> {
    /// Stores this warpgroup's accumulator into its 64 x BN piece of the tile, rounded to `T`:
    /// every element [`get_mut`](Self::get_mut) reaches, no other. The four lanes of each quad
    /// trade their column pairs (`shfl.sync`) so that each holds eight neighbouring columns of a
    /// row, stored with one 16-byte store where the row allows (inside the matrix, `cols` a
    /// multiple of 8), element by element at the matrix's edges — a quarter of the stores of
    /// [`pair_mut`](Self::pair_mut), each filling whole 32-byte sectors.
    ///
    /// A warp collective: all 32 lanes of the warp call it together, on the tile of the same
    /// round (a panic otherwise: the quad writes its lanes' elements for them). It consumes the
    /// tile, so no lane writes it again. A warpgroup that owns no piece stores nothing.
    #[inline(always)]
    #[track_caller]
    pub fn store<S: WgShape>(self, acc: &WgAcc<S>) {
        let () = SameWidth::<S, BN>::OK;
        let Some((r0, c0)) = self.piece_origin() else { return };
        // The lanes trade values: all of them here, on one tile, their earlier writes ordered
        // before this.
        super::warp::require_converged("WgmmaTile::store");
        let first = super::warp::shfl_sync(super::warp::FULL_MASK, self.round as u64, 0, 32);
        if !super::warp::all_sync(super::warp::FULL_MASK, first == self.round as u64) {
            rounds_differ();
        }
        super::sync_warp(super::warp::FULL_MASK);
        let t = super::thread::thread_rank() as usize % 128;
        let (w, lane) = (t / 32, t % 32);
        let (rows, cols) = (self.rows, self.cols as usize);
        let base_aligned = (self.ptr.as_ptr() as usize) % core::mem::align_of::<Wide>() == 0;
        for half in 0..2 {
            let row = r0 + 16 * w + lane / 4 + 8 * half;
            for m in 0..BN / 32 {
                // This lane's pairs of column groups 4m..4m + 4 (columns 8j + 2q, 8j + 2q + 1 of
                // group j, q = lane % 4), then the quad's pairs of group 4m + q.
                let pairs = core::array::from_fn(|g| {
                    let i = 4 * (4 * m + g) + 2 * half;
                    let [x, y] = T::pair_from_f32(acc.get(i), acc.get(i + 1));
                    x.bits() as u32 | (y.bits() as u32) << 16
                });
                let v = quad_transpose(pairs, lane as u32 % 4);
                let col = c0 + 8 * (4 * m + lane % 4);
                if row >= rows {
                    continue;
                }
                // The output may be a view that starts at any element (`slice_mut(1..)`), not
                // only a whole (256-byte aligned) allocation: the wide store needs its base
                // 16-byte aligned too.
                if cols % 8 == 0 && col + 8 <= cols && base_aligned {
                    // SAFETY: `row < rows` and `col + 8 <= cols`: the eight elements are in bounds; they are the pairs of group `4m + q` of this row held by the four lanes of this quad, all of them here on the tile of this round (checked above), in this warpgroup's piece of this lane's tile, so no other thread writes them (see `DisjointPersistentWgmmaTiles`), and the lanes' own handles are consumed; `col` and `cols` are multiples of 8 (16 bytes of 2-byte elements) and the base is 16-byte aligned (`base_aligned`), so the address is 16-byte aligned.
                    unsafe { self.ptr.as_ptr().add(row * cols + col).cast::<Wide>().write(Wide(v)) };
                    continue;
                }
                for e in 0..8 {
                    if col + e < cols {
                        let bits = (v[e / 2] >> (16 * (e % 2))) as u16;
                        // SAFETY: `row < rows`, `col + e < cols`: in bounds; this quad's element, as above.
                        unsafe { self.ptr.as_ptr().add(row * cols + col + e).write(T::from_bits(bits)) };
                    }
                }
            }
        }
    }
}

/// Eight 16-bit elements, written by one 16-byte store.
#[repr(C, align(16))]
struct Wide([u32; 4]);

/// `S::N == BN`: the accumulator covers the tile's width.
struct SameWidth<S, const BN: usize>(PhantomData<S>);
impl<S: WgShape, const BN: usize> SameWidth<S, BN> {
    const OK: () = assert!(S::N == BN, "WgmmaTile::store: the accumulator's N must equal the tile's BN");
}

/// Within each quad (lanes `4k..4k + 4`): lane `q` holds `p` = row `q` of a 4 x 4 matrix and
/// gets back column `q` (element `r` = lane `r`'s `p[q]`). Two butterfly steps, each trading
/// half a row with the lane across one bit of the quad index.
#[inline(always)]
#[track_caller]
fn quad_transpose(p: [u32; 4], q: u32) -> [u32; 4] {
    use super::warp::{shfl_xor_sync, FULL_MASK};
    // Step 1, across bit 1: keep the columns whose bit 1 is ours, trade the others; slot
    // `2 * (row bit 1) + (column bit 0)`.
    let b = q & 2 != 0;
    let (keep, send) = if b { ([p[2], p[3]], [p[0], p[1]]) } else { ([p[0], p[1]], [p[2], p[3]]) };
    let recv = [shfl_xor_sync(FULL_MASK, send[0], 2, 32), shfl_xor_sync(FULL_MASK, send[1], 2, 32)];
    let s = if b { [recv[0], recv[1], keep[0], keep[1]] } else { [keep[0], keep[1], recv[0], recv[1]] };
    // Step 2, across bit 0: keep column `q`'s entries, trade the others.
    let a = q & 1 != 0;
    let (keep, send) = if a { ([s[1], s[3]], [s[0], s[2]]) } else { ([s[0], s[2]], [s[1], s[3]]) };
    let recv = [shfl_xor_sync(FULL_MASK, send[0], 1, 32), shfl_xor_sync(FULL_MASK, send[1], 1, 32)];
    if a {
        [recv[0], keep[0], recv[1], keep[1]]
    } else {
        [keep[0], recv[0], keep[1], recv[1]]
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn rounds_differ() -> ! {
    panic!(
        "WgmmaTile::store: the lanes of a warp store tiles of different rounds of `next_tile`; every thread of the block \
         must take its tiles together"
    )
}

/// `pos` (element `i`'s position) when elements `i` and `i + 1` can be stored as one aligned
/// pair: `i` and `cols` even, `col + 1` inside the row.
#[inline(always)]
fn pair_position((row, col): (usize, usize), i: usize, cols: usize) -> Option<(usize, usize)> {
    (i % 2 == 0 && cols % 2 == 0 && col + 1 < cols).then_some((row, col))
}

impl<T, const BM: usize, const BN: usize, const WG0: usize, const GROUP: usize> super::slice::OutputSlice
    for DisjointWgmmaTiles<'_, T, BM, BN, WG0, GROUP>
{
    type Elem = T;
    const NAME: &'static str = "DisjointWgmmaTiles";
    #[inline(always)]
    unsafe fn from_raw(ptr: *mut T, len: usize, shape: [usize; 3]) -> Self {
        // SAFETY: non-null by `OutputSlice::from_raw`'s contract 3; `len` elements live there by contract 1.
        let ptr = unsafe {
            crate::device::assume_buffer::<T>(ptr, len);
            core::ptr::NonNull::new_unchecked(ptr)
        };
        // `cols` fits in u32 (`check_shape`); `rows` is `len / cols` (contract 4).
        DisjointWgmmaTiles { ptr, len, cols: shape[0] as u32, rows: shape[1], _borrow: PhantomData }
    }
}

/// The accumulators of a *persistent* warpgroup-tiled wgmma kernel: like
/// [`DisjointWgmmaTiles`], but the launch has as many blocks as fit on the GPU at once (any
/// grid shape) and each block takes the matrix's tiles in turn with
/// [`next_tile`](Self::next_tile), so a block's next tile streams into shared memory while its
/// consumers still store the last one. The host passes `Slice2d::new(&mut buf, cols)`.
///
/// * The `BM x BN` tiles of the matrix (`ceil(rows / BM)` tile-rows of `ceil(cols / BN)`) are
///   numbered `L` in the grouped order of [`DisjointWgmmaTiles`] (`GROUP` tile-rows at a time,
///   column by column within a group).
/// * Block `b` (linear: `(bz * gy + by) * gx + bx`) of a launch of `B` blocks takes tiles
///   `b`, `b + B`, `b + 2B`, … : its `r`-th call of `next_tile` hands out tile `b + r B`
///   (`None` once that is past the last tile).
/// * Within a tile, warpgroup `WG0 + c` owns rows `64c..64c + 64` and its thread `t` the
///   elements at [`WgAcc::coord`]`(t, i)` of them, as in [`DisjointWgmmaTiles`].
///
/// Why no two threads meet: `b + r B = b' + r' B` with `b, b' < B` means `b = b'` and
/// `r = r'`, so the tiles of different blocks differ, as do one thread's tiles of different
/// rounds (which `&mut self` keeps one at a time); within a tile the warpgroups' rows and the
/// threads' coordinates are disjoint. `BM`, `BN`, `WG0`, `GROUP` are in the type and `cols`
/// comes from the host, so all threads agree on the numbering.
pub struct DisjointPersistentWgmmaTiles<'a, T, const BM: usize, const BN: usize, const WG0: usize, const GROUP: usize> {
    ptr: core::ptr::NonNull<T>,
    len: usize,
    /// At most `u32::MAX` (the launchers refuse more).
    cols: u32,
    /// `len / cols`, from the launcher.
    rows: usize,
    /// Tiles this thread has taken.
    round: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

super::slice::output_len!(DisjointPersistentWgmmaTiles, const BM: usize, const BN: usize, const WG0: usize, const GROUP: usize);

impl<T, const BM: usize, const BN: usize, const WG0: usize, const GROUP: usize>
    DisjointPersistentWgmmaTiles<'_, T, BM, BN, WG0, GROUP>
{
    const SHAPE_OK: () = DisjointWgmmaTiles::<T, BM, BN, WG0, GROUP>::SHAPE_OK;

    /// Columns of the matrix, as the host passed them.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols as usize
    }

    /// Whole rows in the buffer (`len / cols`).
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Tile-rows and tile-columns of the matrix: `(ceil(rows / BM), ceil(cols / BN))`.
    #[inline(always)]
    pub fn tile_grid(&self) -> (usize, usize) {
        let () = Self::SHAPE_OK;
        (self.rows.div_ceil(BM), self.cols().div_ceil(BN))
    }

    /// This block's next tile (see the type's docs), or `None` when it has taken its last.
    /// Every thread of the block calls it as often: the producers too, for the tile's origin.
    #[inline(always)]
    pub fn next_tile(&mut self) -> Option<WgmmaTile<'_, T, BM, BN, WG0>> {
        let (b, g) = (super::thread::block_idx(), super::thread::grid_dim());
        let blocks = g.x as usize * g.y as usize * g.z as usize;
        let block = (b.z as usize * g.y as usize + b.y as usize) * g.x as usize + b.x as usize;
        let (gy, gx) = self.tile_grid();
        let l = self.round.checked_mul(blocks)?.checked_add(block)?;
        if l >= gy * gx {
            return None;
        }
        let round = self.round;
        self.round += 1;
        let (tm, tn) = grouped(l % gx, l / gx, gx, gy, GROUP);
        let origin = (tm * BM, tn * BN);
        Some(WgmmaTile { ptr: self.ptr, cols: self.cols, rows: self.rows, origin, round, _borrow: PhantomData })
    }
}

impl<T, const BM: usize, const BN: usize, const WG0: usize, const GROUP: usize> super::slice::OutputSlice
    for DisjointPersistentWgmmaTiles<'_, T, BM, BN, WG0, GROUP>
{
    type Elem = T;
    const NAME: &'static str = "DisjointPersistentWgmmaTiles";
    #[inline(always)]
    unsafe fn from_raw(ptr: *mut T, len: usize, shape: [usize; 3]) -> Self {
        // SAFETY: non-null by `OutputSlice::from_raw`'s contract 3; `len` elements live there by contract 1.
        let ptr = unsafe {
            crate::device::assume_buffer::<T>(ptr, len);
            core::ptr::NonNull::new_unchecked(ptr)
        };
        // `cols` fits in u32 (`check_shape`); `rows` is `len / cols` (contract 4).
        DisjointPersistentWgmmaTiles { ptr, len, cols: shape[0] as u32, rows: shape[1], round: 0, _borrow: PhantomData }
    }
}

/// One `BM x BN` tile of a [`DisjointPersistentWgmmaTiles`], this thread's part of it: the
/// methods of [`DisjointWgmmaTiles`] for the tile at [`origin`](Self::origin).
pub struct WgmmaTile<'t, T, const BM: usize, const BN: usize, const WG0: usize> {
    ptr: core::ptr::NonNull<T>,
    cols: u32,
    rows: usize,
    origin: (usize, usize),
    /// The round of `next_tile` that handed it out.
    round: usize,
    _borrow: PhantomData<&'t mut [T]>,
}

impl<T, const BM: usize, const BN: usize, const WG0: usize> WgmmaTile<'_, T, BM, BN, WG0> {
    /// Row and column of the tile's top-left element.
    #[inline(always)]
    pub fn origin(&self) -> (usize, usize) {
        self.origin
    }

    /// Top-left element of this thread's warpgroup's 64 x BN piece, or `None` for a warpgroup
    /// that owns none.
    #[inline(always)]
    pub fn piece_origin(&self) -> Option<(usize, usize)> {
        piece_origin::<BM, WG0>(self.origin)
    }

    /// Matrix row and column of this thread's element `i`, or `None` when it has none.
    #[inline(always)]
    pub fn position(&self, i: usize) -> Option<(usize, usize)> {
        element_position::<BN>(self.piece_origin()?, i, self.rows, self.cols as usize)
    }

    /// This thread's element `i` (see [`position`](Self::position)).
    #[inline(always)]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        let (row, col) = self.position(i)?;
        // SAFETY: `row < rows = len / cols` and `col < cols` (checked by `position`), so in bounds; this thread's alone in this tile, and the tile this thread's alone in the launch (see `DisjointPersistentWgmmaTiles`); `&mut self` stops this thread from taking it twice.
        Some(unsafe { &mut *self.ptr.as_ptr().add(row * self.cols as usize + col) })
    }

    /// This thread's elements `i` and `i + 1` as one pair (see
    /// [`DisjointWgmmaTiles::pair_mut`]).
    #[inline(always)]
    pub fn pair_mut(&mut self, i: usize) -> Option<&mut [T; 2]> {
        let (row, col) = pair_position(self.position(i)?, i, self.cols as usize)?;
        // SAFETY: as in `DisjointWgmmaTiles::pair_mut`: both elements in bounds and this thread's, the pair aligned (`[T; 2]` needs only `T`'s alignment).
        Some(unsafe { &mut *(self.ptr.as_ptr().add(row * self.cols as usize + col) as *mut [T; 2]) })
    }
}

/// Tile (row, column) of block (bx, by) of a `gx x gy` grid in groups of `group` tile-rows (see
/// [`DisjointWgmmaTiles`]).
#[inline(always)]
pub const fn grouped(bx: usize, by: usize, gx: usize, gy: usize, group: usize) -> (usize, usize) {
    if group == 1 {
        return (by, bx);
    }
    let l = by * gx + bx;
    let g = l / (group * gx);
    let first = g * group;
    let h = if gy - first < group { gy - first } else { group };
    let r = l % (group * gx);
    (first + r % h, r / h)
}

#[cfg(not(target_arch = "nvptx64"))]
#[cold]
#[inline(never)]
#[track_caller]
fn cpu_unsupported(ptx: &str) -> ! {
    panic!(
        "`{ptx}` (device::wgmma) cannot run on the CPU executor: Hopper's asynchronous warpgroup tensor cores are \
         not emulated; run this kernel on an sm_90 GPU (OXIDE_BACKEND=cuda), or test its logic with device::tensor's \
         mma_sync, which the CPU executor emulates"
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn bad_slice(row0: usize, k0: usize, rows: usize, k: usize, len: usize, depth: usize) -> ! {
    panic!(
        "wgmma descriptor of the slice at row {row0}, k {k0} of a {rows} x {k} tile in a view of {len} elements: \
         row0 must be a multiple of 8 below ROWS, k0 a multiple of {depth} with k0 + {depth} <= K, and the view hold the tile"
    )
}

#[cold]
#[inline(never)]
#[track_caller]
fn misaligned(align: usize) -> ! {
    panic!("wgmma tile is not {align}-byte aligned (its swizzle atom); take it from `wgmma::aligned(view, {align})`")
}

#[cold]
#[inline(never)]
#[track_caller]
fn too_few_rows(a: u32, b: u32, n: usize, k: usize) -> ! {
    panic!("wgmma.mma_async 64 x {n} x {k}: A's descriptor has {a} rows (needs 64), B's {b} (needs {n})")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bijective<SW: Swizzle, const ROWS: usize, const K: usize>() {
        let mut seen = vec![false; ROWS * K];
        for r in 0..ROWS {
            for k in 0..K {
                let i = KMajor::<Bf16, SW, ROWS, K>::index(r, k);
                assert!(!seen[i], "({r}, {k}) -> {i} twice");
                seen[i] = true;
            }
        }
    }

    #[test]
    fn layouts_are_bijections() {
        bijective::<NoSwizzle, 64, 64>();
        bijective::<Swizzle32B, 64, 64>();
        bijective::<Swizzle64B, 128, 64>();
        bijective::<Swizzle128B, 256, 64>();
    }

    #[test]
    fn swizzle_128b_matches_the_pattern() {
        type L = KMajor<Bf16, Swizzle128B, 64, 64>;
        // Row 0 is not permuted; row 1 swaps chunk 0 and 1; row 9 is row 1 again, 1024 bytes on.
        assert_eq!(L::index(0, 17), 17);
        assert_eq!(L::index(1, 0), 64 + 8);
        assert_eq!(L::index(1, 8), 64);
        assert_eq!(L::index(9, 3), 9 * 64 + 8 + 3);
        // Row 7, chunk 7 of k 56..64: 7 ^ 7 = chunk 0.
        assert_eq!(L::index(7, 63), 7 * 64 + 7);
        // 32B: rows 4..8 flip chunk bit 0; K = 64 spans 4 column blocks of 16.
        type S = KMajor<Bf16, Swizzle32B, 64, 64>;
        assert_eq!(S::index(4, 0), 4 * 16 + 8);
        assert_eq!(S::index(3, 16), 64 * 16 + 3 * 16);
        // None: core matrix (1, 2) of a 64-wide tile.
        assert_eq!(KMajor::<Bf16, NoSwizzle, 64, 64>::index(9, 17), (8 + 2) * 64 + 8 + 1);
    }

    #[test]
    fn descriptor_fields() {
        assert_eq!(encode(0x1_0400, 16, 1024, Swizzle128B::MODE), 0x1040 | 1 << 16 | 64 << 32 | 1 << 62);
        assert_eq!(encode(0x80, 128, 1024, NoSwizzle::MODE), 8 | 8 << 16 | 64 << 32);
        assert_eq!(encode(0, 0, 0, Swizzle32B::MODE) >> 62, 3);
        type L = KMajor<Bf16, Swizzle128B, 128, 64>;
        assert_eq!(L::geometry(64, 48), ((64 * 64 + 48) * 2, 16, 1024));
        type C = KMajor<F16, Swizzle64B, 128, 64>;
        assert_eq!(C::geometry(8, 32), ((128 * 32 + 8 * 32) * 2, 16, 512));
        type N = KMajor<Bf16, NoSwizzle, 64, 32>;
        assert_eq!(N::geometry(8, 16), ((4 + 2) * 128, 128, 512));
    }

    #[test]
    fn grouped_order_is_a_bijection() {
        for (gx, gy, group) in [(5, 7, 1), (5, 7, 2), (5, 7, 3), (32, 64, 8), (3, 2, 8), (1, 9, 4)] {
            let mut seen = vec![false; gx * gy];
            for by in 0..gy {
                for bx in 0..gx {
                    let (tm, tn) = grouped(bx, by, gx, gy, group);
                    assert!(tm < gy && tn < gx && !seen[tm * gx + tn], "{gx}x{gy}/{group}: ({bx},{by})");
                    seen[tm * gx + tn] = true;
                }
            }
        }
        // Consecutive blocks walk down a group's rows first.
        assert_eq!(grouped(0, 0, 32, 64, 8), (0, 0));
        assert_eq!(grouped(1, 0, 32, 64, 8), (1, 0));
        assert_eq!(grouped(8, 0, 32, 64, 8), (0, 1));
        assert_eq!(grouped(0, 8, 32, 64, 8), (8, 0));
    }

    #[test]
    fn accumulator_coordinates_cover_the_tile_once() {
        for n in [64usize, 128, 256] {
            let mut seen = vec![false; 64 * n];
            for t in 0..128 {
                for i in 0..n / 2 {
                    let (r, c) = WgAcc::<M64N256K16>::coord(t, i);
                    assert!(r < 64 && c < n, "{t} {i}");
                    assert!(!seen[r * n + c]);
                    seen[r * n + c] = true;
                }
            }
        }
    }
}
