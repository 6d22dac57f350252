//! Tensor cores and asynchronous copies (sm_80 and newer): warp-wide matrix multiply-accumulate
//! ([`mma_sync`]), matrix loads from shared memory ([`ldmatrix_x4`] and friends, or the
//! fragment loaders such as [`FragA::load`]), and global → shared copies that complete in the
//! background ([`cp_async`], [`cp_async_commit`], [`cp_async_wait`]).
//!
//! | operation | PTX instruction | needs |
//! | --- | --- | --- |
//! | [`mma_sync`] on `Bf16` / [`M16N8K16`] | `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32` | sm_80 |
//! | [`mma_sync`] on `F16` / [`M16N8K16`] | `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` | sm_80 |
//! | [`mma_sync`] on `Tf32` / [`M16N8K8`] | `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` | sm_80 |
//! | [`mma_sync`] on `i8` / [`M16N8K32`] | `mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32` (wrapping) | sm_80 |
//! | [`mma_sync_grid`]: an `M x N` tile of the above | `M * N` of the same `mma.sync` after one `activemask` test | sm_80 |
//! | [`mma_sync_tile`]: a k-step of a warp's tile from shared memory (bf16/f16) | `ldmatrix.x4` (A), `ldmatrix.x4.trans` (B) and `M * N` `mma.sync`, after one `activemask` test | sm_80 |
//! | [`ldmatrix_x1`], [`ldmatrix_x2`], [`ldmatrix_x4`] (`_trans`: `.trans`) | `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16` | sm_75 (oxide: sm_80) |
//! | [`cp_async`] of 4 / 8 bytes, of 16 bytes | `cp.async.ca.shared.global` / `cp.async.cg.shared.global` with src-size (zero-fill) | sm_80 |
//! | [`cp_async_matrix`]: the same from a [`Matrix`]'s row | the same | sm_80 |
//! | [`cp_async_commit`], [`cp_async_wait`] | `cp.async.commit_group`, `cp.async.wait_group N` | sm_80 |
//!
//! Building kernels that use them for an older architecture fails in oxide-build with an error
//! naming the operation and the architecture.
//!
//! # Fragments
//! A warp multiplies an `M x K` matrix A by a `K x N` matrix B and adds an `M x N` accumulator C;
//! each of the 32 lanes holds a fixed part of each matrix, a *fragment*. [`FragA`], [`FragB`]
//! and [`FragC`] carry the element type and the shape ([`M16N8K16`], [`M16N8K8`],
//! [`M16N8K32`]) in their type, so [`mma_sync`] only accepts operands that fit one PTX
//! instruction. Which element of the matrix a lane holds is the PTX ISA's layout (section
//! "Matrix Fragments for mma.m16n8k*"), with `g = lane / 4` (groupID) and `t = lane % 4`
//! (threadID_in_group); [`FragA::coord`], [`FragB::coord`] and [`FragC::coord`] compute it:
//!
//! | fragment | element `i` of lane `4g + t` is at (row, column) |
//! | --- | --- |
//! | A, bf16/f16 m16n8k16 (8 per lane) | `(g + 8 * (i / 2 % 2), 2t + i % 2 + 8 * (i / 4))` |
//! | B, bf16/f16 m16n8k16 (4) | `(2t + i % 2 + 8 * (i / 2), g)` |
//! | A, tf32 m16n8k8 (4) | `(g + 8 * (i % 2), t + 4 * (i / 2))` |
//! | B, tf32 m16n8k8 (2) | `(t + 4i, g)` |
//! | A, s8 m16n8k32 (16) | `(g + 8 * (i / 4 % 2), 4t + i % 4 + 16 * (i / 8))` |
//! | B, s8 m16n8k32 (8) | `(4t + i % 4 + 16 * (i / 4), g)` |
//! | C/D, every shape (4) | `(g + 8 * (i / 2), 2t + i % 2)` |
//!
//! Elements are packed into 32-bit registers from the low bits up (two 16-bit or four 8-bit
//! elements per register), as the PTX ISA says.
//!
//! Operands that fit one instruction compile:
//! ```
//! use oxide_rt::device::tensor::*;
//! use oxide_rt::{Bf16, Tf32};
//! fn bf16(a: FragA<Bf16, M16N8K16>, b: FragB<Bf16, M16N8K16>, c: FragC<f32, M16N8K16>) -> FragC<f32, M16N8K16> {
//!     mma_sync(a, b, c)
//! }
//! fn tf32(a: FragA<Tf32, M16N8K8>, b: FragB<Tf32, M16N8K8>, c: FragC<f32, M16N8K8>) -> FragC<f32, M16N8K8> {
//!     mma_sync(a, b, c)
//! }
//! fn s8(a: FragA<i8, M16N8K32>, b: FragB<i8, M16N8K32>, c: FragC<i32, M16N8K32>) -> FragC<i32, M16N8K32> {
//!     mma_sync(a, b, c)
//! }
//! ```
//! Mixed element types do not:
//! ```compile_fail
//! use oxide_rt::device::tensor::*;
//! use oxide_rt::{Bf16, F16};
//! fn mixed(a: FragA<Bf16, M16N8K16>, b: FragB<F16, M16N8K16>, c: FragC<f32, M16N8K16>) -> FragC<f32, M16N8K16> {
//!     mma_sync(a, b, c)
//! }
//! ```
//! Nor a shape the element type has no instruction for:
//! ```compile_fail
//! use oxide_rt::device::tensor::*;
//! use oxide_rt::Bf16;
//! fn shape(a: FragA<Bf16, M16N8K8>, b: FragB<Bf16, M16N8K8>, c: FragC<f32, M16N8K8>) -> FragC<f32, M16N8K8> {
//!     mma_sync(a, b, c)
//! }
//! ```
//! Nor the wrong accumulator type, or fragments of different shapes:
//! ```compile_fail
//! use oxide_rt::device::tensor::*;
//! use oxide_rt::Bf16;
//! fn acc(a: FragA<Bf16, M16N8K16>, b: FragB<Bf16, M16N8K16>, c: FragC<i32, M16N8K16>) -> FragC<i32, M16N8K16> {
//!     mma_sync(a, b, c)
//! }
//! ```
//! ```compile_fail
//! use oxide_rt::device::tensor::*;
//! use oxide_rt::Bf16;
//! fn shapes(a: FragA<Bf16, M16N8K16>, b: FragB<Bf16, M16N8K16>, c: FragC<f32, M16N8K8>) -> FragC<f32, M16N8K8> {
//!     mma_sync(a, b, c)
//! }
//! ```
//!
//! # The rules
//! [`mma_sync`] and the `ldmatrix` functions are warp collectives: all 32 lanes of the warp
//! must call the same one (CUDA's `.sync.aligned`). A call from a warp with exited, missing
//! (blocks whose size is not a multiple of 32) or diverged lanes panics, on the GPU too, where
//! PTX leaves the instruction undefined: each runs under an `activemask` test (a vote, a
//! compare and a branch to the panic). In a GEMM's inner loop those tests cost a quarter of the
//! speed (ptxas schedules each `mma_sync` alone); [`mma_sync_grid`] multiplies a warp's whole
//! tile of fragments after one test. Shared-memory addresses come from [`SharedSlice`] views and are bounds-checked;
//! `ldmatrix` rows must be 16-byte aligned, and [`cp_async`] needs its destination and source
//! aligned to the copy's size (a panic otherwise). A `cp_async` destination holds its data only
//! after the issuing thread's [`cp_async_wait`] covering it; other threads see it after a
//! barrier that follows that wait (the CPU executor writes the data at the wait).
//!
//! On the CPU executor the operations are emulated with the GPU's semantics: fragments are
//! exchanged between the lanes of the warp, 16-bit inputs are converted exactly, TF32 inputs
//! lose their low 13 mantissa bits, products are exact and the sum is rounded to `f32` once
//! (the GPU's accumulation order and rounding are unspecified, so results may differ from a
//! GPU's in the last bits).

use super::half::{Bf16, Tf32, F16};
use super::matrix::Matrix;
use super::shared::{SharedElem, SharedSlice};
use core::marker::PhantomData;

#[cfg(not(target_arch = "nvptx64"))]
use super::cpu_tensor as imp;
#[cfg(target_arch = "nvptx64")]
use super::nvptx_tensor as imp;

mod sealed {
    pub trait Sealed {}
}

// ---------------------------------------------------------------------------------------------
// Shapes and element types

/// The shape of one warp-wide MMA: `M x K` times `K x N`.
pub trait Shape: sealed::Sealed + Copy {
    const M: usize;
    const N: usize;
    const K: usize;
}

macro_rules! shapes {
    ($($name:ident = ($m:expr, $n:expr, $k:expr), $doc:expr;)*) => {$(
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $name;
        impl sealed::Sealed for $name {}
        impl Shape for $name {
            const M: usize = $m;
            const N: usize = $n;
            const K: usize = $k;
        }
    )*};
}
shapes! {
    M16N8K16 = (16, 8, 16), "16 x 8 x 16: bf16 and f16 inputs.";
    M16N8K8 = (16, 8, 8), "16 x 8 x 8: tf32 inputs.";
    M16N8K32 = (16, 8, 32), "16 x 8 x 32: s8 inputs.";
}

/// An element type of MMA inputs: [`Bf16`], [`F16`], [`Tf32`], `i8`.
pub trait MmaElem: sealed::Sealed + Copy {
    /// Bits per element in a fragment register.
    const BITS: u32;
    #[doc(hidden)]
    fn to_bits(self) -> u32;
    #[doc(hidden)]
    fn from_bits(bits: u32) -> Self;
    /// The exact value the tensor cores use.
    #[doc(hidden)]
    fn value(self) -> f64;
}

macro_rules! elems {
    ($($t:ty: $bits:expr, |$s:ident| $to:expr, |$b:ident| $from:expr, |$v:ident| $val:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl MmaElem for $t {
            const BITS: u32 = $bits;
            #[inline(always)]
            fn to_bits(self) -> u32 { let $s = self; $to }
            #[inline(always)]
            fn from_bits($b: u32) -> Self { $from }
            #[inline(always)]
            fn value(self) -> f64 { let $v = self; $val }
        }
    )*};
}
elems! {
    Bf16: 16, |s| s.0 as u32, |b| Bf16(b as u16), |v| v.to_f32() as f64;
    F16: 16, |s| s.0 as u32, |b| F16(b as u16), |v| v.to_f32() as f64;
    Tf32: 32, |s| s.0, |b| Tf32(b), |v| v.to_f32() as f64;
    i8: 8, |s| s as u8 as u32, |b| b as u8 as i8, |v| v as f64;
}

/// An accumulator element type: `f32` or `i32`.
pub trait Accum: sealed::Sealed + Copy {
    const ZERO: Self;
    #[doc(hidden)]
    fn to_bits(self) -> u32;
    #[doc(hidden)]
    fn from_bits(bits: u32) -> Self;
    /// `self + dot`, `dot` being the exact sum of products (the emulation's rounding).
    #[doc(hidden)]
    fn accumulate(self, dot: f64) -> Self;
}

impl sealed::Sealed for f32 {}
impl Accum for f32 {
    const ZERO: f32 = 0.0;
    #[inline(always)]
    fn to_bits(self) -> u32 {
        f32::to_bits(self)
    }
    #[inline(always)]
    fn from_bits(bits: u32) -> f32 {
        f32::from_bits(bits)
    }
    #[inline(always)]
    fn accumulate(self, dot: f64) -> f32 {
        (self as f64 + dot) as f32
    }
}

impl sealed::Sealed for i32 {}
impl Accum for i32 {
    const ZERO: i32 = 0;
    #[inline(always)]
    fn to_bits(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn from_bits(bits: u32) -> i32 {
        bits as i32
    }
    #[inline(always)]
    fn accumulate(self, dot: f64) -> i32 {
        // Exact products of s8 values summed over k <= 32 fit an i32; the add wraps (no
        // `.satfinite`).
        self.wrapping_add(dot as i64 as i32)
    }
}

/// An element type that multiplies in shape `S` on the tensor cores, with its accumulator
/// type and fragment layouts. Implemented for exactly the combinations of the [module
/// table](self); anything else does not compile.
pub trait Mma<S: Shape>: MmaElem {
    /// `f32`, or `i32` for `i8`.
    type Acc: Accum;
    /// The PTX instruction.
    const PTX: &'static str;
    /// (row, column) in A of element `i` of lane `lane`'s A fragment.
    fn a_coord(lane: u32, i: usize) -> (usize, usize);
    /// (row, column) in B of element `i` of lane `lane`'s B fragment.
    fn b_coord(lane: u32, i: usize) -> (usize, usize);
    /// `D = A * B + C` on raw registers: a panic when part of the warp calls it.
    #[doc(hidden)]
    fn mma(a: [u32; 4], b: [u32; 2], c: [u32; 4]) -> [u32; 4];
    /// The same without the warp test, for [`mma_sync_grid`] right after its own.
    #[doc(hidden)]
    fn mma_tested(a: [u32; 4], b: [u32; 2], c: [u32; 4]) -> [u32; 4];
}

/// The instructions the backends implement.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]
pub(crate) enum MmaKind {
    Bf16,
    F16,
    Tf32,
    S8,
}

macro_rules! mma_impl {
    ($t:ty, $shape:ty, $acc:ty, $kind:ident, $ptx:expr, a: |$al:ident, $ai:ident| $a:expr, b: |$bl:ident, $bi:ident| $b:expr) => {
        impl Mma<$shape> for $t {
            type Acc = $acc;
            const PTX: &'static str = $ptx;
            #[inline(always)]
            fn a_coord($al: u32, $ai: usize) -> (usize, usize) {
                let ($al, $ai) = ($al as usize, $ai);
                $a
            }
            #[inline(always)]
            fn b_coord($bl: u32, $bi: usize) -> (usize, usize) {
                let ($bl, $bi) = ($bl as usize, $bi);
                $b
            }
            #[inline(always)]
            #[track_caller]
            fn mma(a: [u32; 4], b: [u32; 2], c: [u32; 4]) -> [u32; 4] {
                #[cfg(target_arch = "nvptx64")]
                {
                    let (d, whole) = imp::mma::<{ MmaKind::$kind as u8 }, true>(a, b, c);
                    if !whole {
                        super::warp::not_converged("mma.sync");
                    }
                    return d;
                }
                #[cfg(not(target_arch = "nvptx64"))]
                return emulate::<$t, $shape>(a, b, c);
            }
            #[inline(always)]
            #[track_caller]
            fn mma_tested(a: [u32; 4], b: [u32; 2], c: [u32; 4]) -> [u32; 4] {
                #[cfg(target_arch = "nvptx64")]
                return imp::mma::<{ MmaKind::$kind as u8 }, false>(a, b, c).0;
                #[cfg(not(target_arch = "nvptx64"))]
                return emulate::<$t, $shape>(a, b, c);
            }
        }
    };
}

mma_impl!(Bf16, M16N8K16, f32, Bf16, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
    a: |l, i| (l / 4 + 8 * (i / 2 % 2), 2 * (l % 4) + i % 2 + 8 * (i / 4)),
    b: |l, i| (2 * (l % 4) + i % 2 + 8 * (i / 2), l / 4));
mma_impl!(F16, M16N8K16, f32, F16, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    a: |l, i| (l / 4 + 8 * (i / 2 % 2), 2 * (l % 4) + i % 2 + 8 * (i / 4)),
    b: |l, i| (2 * (l % 4) + i % 2 + 8 * (i / 2), l / 4));
mma_impl!(Tf32, M16N8K8, f32, Tf32, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
    a: |l, i| (l / 4 + 8 * (i % 2), l % 4 + 4 * (i / 2)),
    b: |l, i| (l % 4 + 4 * i, l / 4));
mma_impl!(i8, M16N8K32, i32, S8, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
    a: |l, i| (l / 4 + 8 * (i / 4 % 2), 4 * (l % 4) + i % 4 + 16 * (i / 8)),
    b: |l, i| (4 * (l % 4) + i % 4 + 16 * (i / 4), l / 4));

/// Elements per 32-bit register.
const fn per_reg<T: MmaElem>() -> usize {
    (32 / T::BITS) as usize
}

#[inline(always)]
fn get_elem<T: MmaElem>(regs: &[u32], i: usize) -> T {
    let per = per_reg::<T>();
    let shift = (i % per) as u32 * T::BITS;
    let mask = if T::BITS == 32 { u32::MAX } else { (1u32 << T::BITS) - 1 };
    T::from_bits((regs[i / per] >> shift) & mask)
}

#[inline(always)]
fn set_elem<T: MmaElem>(regs: &mut [u32], i: usize, v: T) {
    let per = per_reg::<T>();
    let shift = (i % per) as u32 * T::BITS;
    let mask = if T::BITS == 32 { u32::MAX } else { (1u32 << T::BITS) - 1 };
    let r = &mut regs[i / per];
    *r = (*r & !(mask << shift)) | ((v.to_bits() & mask) << shift);
}

// ---------------------------------------------------------------------------------------------
// Fragments

/// Lane `lane`'s part of the `M x K` matrix A of an MMA of shape `S` on elements `T`: four
/// 32-bit registers (see the [module docs](self) for which elements).
pub struct FragA<T, S> {
    regs: [u32; 4],
    _t: PhantomData<(T, S)>,
}

/// Lane `lane`'s part of the `K x N` matrix B: two 32-bit registers.
pub struct FragB<T, S> {
    regs: [u32; 2],
    _t: PhantomData<(T, S)>,
}

/// Lane `lane`'s four elements of the `M x N` accumulator (C or D) of an MMA of shape `S`, of
/// type `A` (`f32` or `i32`).
pub struct FragC<A, S> {
    /// The elements `c0..c3` (see [`FragC::coord`]).
    pub elems: [A; 4],
    _s: PhantomData<S>,
}

macro_rules! copy_frag {
    ($($f:ident),*) => {$(
        impl<T, S> Clone for $f<T, S> where $f<T, S>: Copy {
            fn clone(&self) -> Self {
                *self
            }
        }
    )*};
}
copy_frag!(FragA, FragB, FragC);
impl<T, S> Copy for FragA<T, S> {}
impl<T, S> Copy for FragB<T, S> {}
impl<A: Copy, S> Copy for FragC<A, S> {}

impl<T: Mma<S>, S: Shape> FragA<T, S> {
    /// Elements per lane.
    pub const ELEMS: usize = 4 * per_reg::<T>();

    /// The fragment in these registers (elements packed from the low bits up).
    #[inline(always)]
    pub fn from_regs(regs: [u32; 4]) -> Self {
        FragA { regs, _t: PhantomData }
    }

    /// The registers.
    #[inline(always)]
    pub fn regs(self) -> [u32; 4] {
        self.regs
    }

    /// (row, column) in A of element `i` of lane `lane`'s fragment.
    #[inline(always)]
    pub fn coord(lane: u32, i: usize) -> (usize, usize) {
        T::a_coord(lane, i)
    }

    /// The calling lane's fragment of the matrix whose element (row, column) is `f(row, col)`,
    /// e.g. `FragA::from_fn(|r, c| tile.get(r * 16 + c))`.
    #[inline(always)]
    pub fn from_fn(mut f: impl FnMut(usize, usize) -> T) -> Self {
        let lane = super::thread::lane_id();
        let mut regs = [0u32; 4];
        for i in 0..Self::ELEMS {
            let (r, c) = T::a_coord(lane, i);
            set_elem(&mut regs, i, f(r, c));
        }
        Self::from_regs(regs)
    }

    /// Element `i` (`< ELEMS`) of this lane's fragment.
    #[inline(always)]
    #[track_caller]
    pub fn get(self, i: usize) -> T {
        get_elem(&self.regs, i)
    }
}

impl<T: Mma<S>, S: Shape> FragB<T, S> {
    /// Elements per lane.
    pub const ELEMS: usize = 2 * per_reg::<T>();

    /// The fragment in these registers (elements packed from the low bits up).
    #[inline(always)]
    pub fn from_regs(regs: [u32; 2]) -> Self {
        FragB { regs, _t: PhantomData }
    }

    /// The registers.
    #[inline(always)]
    pub fn regs(self) -> [u32; 2] {
        self.regs
    }

    /// (row, column) in B of element `i` of lane `lane`'s fragment.
    #[inline(always)]
    pub fn coord(lane: u32, i: usize) -> (usize, usize) {
        T::b_coord(lane, i)
    }

    /// The calling lane's fragment of the matrix whose element (row, column) is `f(row, col)`.
    #[inline(always)]
    pub fn from_fn(mut f: impl FnMut(usize, usize) -> T) -> Self {
        let lane = super::thread::lane_id();
        let mut regs = [0u32; 2];
        for i in 0..Self::ELEMS {
            let (r, c) = T::b_coord(lane, i);
            set_elem(&mut regs, i, f(r, c));
        }
        Self::from_regs(regs)
    }

    /// Element `i` (`< ELEMS`) of this lane's fragment.
    #[inline(always)]
    #[track_caller]
    pub fn get(self, i: usize) -> T {
        get_elem(&self.regs, i)
    }
}

impl<A: Accum, S: Shape> FragC<A, S> {
    /// A fragment of zeros.
    #[inline(always)]
    pub fn zero() -> Self {
        FragC { elems: [A::ZERO; 4], _s: PhantomData }
    }

    /// The fragment with elements `c0..c3`.
    #[inline(always)]
    pub fn new(elems: [A; 4]) -> Self {
        FragC { elems, _s: PhantomData }
    }

    /// (row, column) in C of element `i` (`< 4`) of lane `lane`'s fragment: `(g + 8 * (i / 2),
    /// 2t + i % 2)`, the same for every shape.
    #[inline(always)]
    pub fn coord(lane: u32, i: usize) -> (usize, usize) {
        let lane = lane as usize;
        (lane / 4 + 8 * (i / 2), 2 * (lane % 4) + i % 2)
    }

    /// The calling lane's fragment of the matrix whose element (row, column) is `f(row, col)`.
    #[inline(always)]
    pub fn from_fn(mut f: impl FnMut(usize, usize) -> A) -> Self {
        let lane = super::thread::lane_id();
        Self::new(core::array::from_fn(|i| {
            let (r, c) = Self::coord(lane, i);
            f(r, c)
        }))
    }
}

/// `D = A * B + C` over the warp (PTX `mma.sync.aligned`, see the [module table](self) for the
/// instruction per element type). Every lane of the warp must call it with its own fragments;
/// each gets its fragment of D.
#[inline(always)]
#[track_caller]
pub fn mma_sync<T: Mma<S>, S: Shape>(a: FragA<T, S>, b: FragB<T, S>, c: FragC<T::Acc, S>) -> FragC<T::Acc, S> {
    let d = T::mma(a.regs, b.regs, c.elems.map(Accum::to_bits));
    FragC::new(d.map(<T::Acc as Accum>::from_bits))
}

/// `acc[i][j] = a[i] * b[j] + acc[i][j]` for every `i < M`, `j < N`: a warp's tile of
/// `M x N` [`mma_sync`]s (in that order) after one test that the whole warp is here, where
/// `mma_sync` tests before each. The same rules and results; use it for the inner loop of a
/// GEMM, where a test per instruction stops ptxas from overlapping them.
#[inline(always)]
#[track_caller]
pub fn mma_sync_grid<T: Mma<S>, S: Shape, const M: usize, const N: usize>(
    a: &[FragA<T, S>; M],
    b: &[FragB<T, S>; N],
    acc: &mut [[FragC<T::Acc, S>; N]; M],
) {
    // After this, every lane runs the same M x N instructions with no lane-dependent branch
    // between them (the bounds are constants), so the warp stays whole for each of them.
    super::warp::require_converged("mma_sync_grid");
    for (fa, row) in a.iter().zip(acc.iter_mut()) {
        for (fb, c) in b.iter().zip(row.iter_mut()) {
            let d = T::mma_tested(fa.regs, fb.regs, c.elems.map(Accum::to_bits));
            *c = FragC::new(d.map(<T::Acc as Accum>::from_bits));
        }
    }
}

/// One k-step of a warp's GEMM tile straight from shared memory: the `M` blocks of A that
/// [`FragA::load_column`]`(a, a_ld, a_at.0, a_at.1)` loads and the `N` blocks of B that
/// [`FragB::load_trans_row`]`(b, b_ld, b_at.0, b_at.1)` loads, multiplied into `acc` as
/// [`mma_sync_grid`] does — with one test that the whole warp is here where those three make
/// one each (every row is checked first, then the test, then the loads and products, with no
/// lane-dependent branch among them). The same results and panics.
#[inline(always)]
#[track_caller]
pub fn mma_sync_tile<T: Mma<M16N8K16> + Elem16, const M: usize, const N: usize>(
    a: SharedSlice<T>,
    a_ld: usize,
    a_at: (usize, usize),
    b: SharedSlice<T>,
    b_ld: usize,
    b_at: (usize, usize),
    acc: &mut [[FragC<T::Acc, M16N8K16>; N]; M],
) {
    const { assert!(N % 2 == 0, "mma_sync_tile::<M, N>: N must be even (one ldmatrix.x4 loads two blocks of B)") };
    let l = super::thread::lane_id() as usize;
    let (row0, col0) = a_at;
    let (k0, n0) = b_at;
    let a_rows: [_; M] = ldmatrix_rows(a, (row0 + l % 16) * a_ld + col0 + l / 16 * 8, 16 * a_ld, M);
    let b_rows: [_; N] = ldmatrix_rows(b, (k0 + l % 16) * b_ld + n0 + l / 16 * 8, 16, N / 2);
    super::warp::require_converged("mma_sync_tile");
    let fa: [FragA<T, M16N8K16>; M] = a_rows.map(|row| FragA::from_regs(ldmatrix_at::<4, false, false>(row)));
    let mut fb = [FragB::<T, M16N8K16>::from_regs([0; 2]); N];
    for p in 0..N / 2 {
        let r = ldmatrix_at::<4, true, false>(b_rows[p]);
        fb[2 * p] = FragB::from_regs([r[0], r[1]]);
        fb[2 * p + 1] = FragB::from_regs([r[2], r[3]]);
    }
    for (fa, row) in fa.iter().zip(acc.iter_mut()) {
        for (fb, c) in fb.iter().zip(row.iter_mut()) {
            let d = T::mma_tested(fa.regs, fb.regs, c.elems.map(Accum::to_bits));
            *c = FragC::new(d.map(<T::Acc as Accum>::from_bits));
        }
    }
}

/// The CPU executor's `mma.sync`: the warp's fragments are exchanged, the whole A and B rebuilt
/// from the PTX layouts, and this lane's four elements of D computed.
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn emulate<T: Mma<S>, S: Shape>(a: [u32; 4], b: [u32; 2], c: [u32; 4]) -> [u32; 4] {
    let mut mine = [0u64; imp::WORDS];
    for (w, r) in mine.iter_mut().zip(a.iter().chain(&b)) {
        *w = u64::from(*r);
    }
    let all = imp::warp_exchange(T::PTX, core::panic::Location::caller(), mine);
    let mut am = [[0f64; 32]; 16];
    let mut bm = [[0f64; 8]; 32];
    for (lane, words) in all.iter().enumerate() {
        let regs: [u32; 6] = core::array::from_fn(|i| words[i] as u32);
        for i in 0..4 * per_reg::<T>() {
            let (r, col) = T::a_coord(lane as u32, i);
            am[r][col] = get_elem::<T>(&regs[..4], i).value();
        }
        for i in 0..2 * per_reg::<T>() {
            let (r, col) = T::b_coord(lane as u32, i);
            bm[r][col] = get_elem::<T>(&regs[4..], i).value();
        }
    }
    let lane = super::thread::lane_id();
    core::array::from_fn(|i| {
        let (r, col) = FragC::<T::Acc, S>::coord(lane, i);
        let dot: f64 = (0..S::K).map(|k| am[r][k] * bm[k][col]).sum();
        <T::Acc as Accum>::from_bits(c[i]).accumulate(dot).to_bits()
    })
}

// ---------------------------------------------------------------------------------------------
// ldmatrix

/// A 16-bit element type that `ldmatrix` moves: [`Bf16`], [`F16`], `u16`, `i16`.
pub trait Elem16: SharedElem + sealed::Sealed {}
impl Elem16 for Bf16 {}
impl Elem16 for F16 {}
impl sealed::Sealed for u16 {}
impl Elem16 for u16 {}
impl sealed::Sealed for i16 {}
impl Elem16 for i16 {}

/// `ldmatrix` of `N` 8x8 matrices: this lane's row start is element `row` of `src` (8
/// elements, 16-byte aligned), with the warp test (a panic when part of the warp calls it).
#[inline(always)]
#[track_caller]
fn ldmatrix<T: Elem16, const N: usize, const TRANS: bool>(src: SharedSlice<T>, row: usize) -> [u32; N] {
    ldmatrix_at::<N, TRANS, true>(ldmatrix_row(src, row))
}

/// The address of this lane's `ldmatrix` row (element `row` of `src`, 8 elements), checked to
/// be in bounds and 16-byte aligned (a panic otherwise), and whether `src` was checked.
#[inline(always)]
#[track_caller]
fn ldmatrix_row<T: Elem16>(src: SharedSlice<T>, row: usize) -> (*const u8, bool) {
    let (ptr, checked) = src.range_ptr(row, 8);
    // The view's start and the offset each 16-byte aligned: the start's test is the same for
    // every row (tested once in a loop), and the offset's folds away for rows at multiples of 8.
    if (src.as_ptr() as usize | (row * core::mem::size_of::<T>())) % 16 != 0 {
        misaligned("ldmatrix row (the view's start and the row's offset)", 16);
    }
    (ptr as *const u8, checked)
}

/// The `ldmatrix` rows `first + i * step` of `src` for `i < count` (at most `M`; the rest of
/// the array repeats the first), each checked as [`ldmatrix_row`] checks one, by the first and
/// the last alone: the rows between lie between them. (`step` below the view's length keeps
/// `(count - 1) * step` from wrapping, so the last is the largest; a larger `step` puts the
/// second row out of bounds anyway.)
#[inline(always)]
#[track_caller]
fn ldmatrix_rows<T: Elem16, const M: usize>(
    src: SharedSlice<T>,
    first: usize,
    step: usize,
    count: usize,
) -> [(*const u8, bool); M] {
    let count = count.min(M);
    let (p0, checked) = ldmatrix_row(src, first);
    if count > 1 {
        if step >= src.len() {
            ldmatrix_row(src, first.saturating_add(step)); // out of bounds: panics
        }
        ldmatrix_row(src, first + (count - 1) * step);
        if (step * core::mem::size_of::<T>()) % 16 != 0 {
            misaligned("ldmatrix row (the step between rows)", 16);
        }
    }
    let size = core::mem::size_of::<T>();
    core::array::from_fn(|i| (p0.wrapping_add(if i < count { i * step * size } else { 0 }), checked))
}

/// `ldmatrix` from a row of [`ldmatrix_row`]. `TEST`: with the warp test; without, only right
/// after a test of the caller's, with no lane-dependent branch (no bounds check) since.
#[inline(always)]
#[track_caller]
fn ldmatrix_at<const N: usize, const TRANS: bool, const TEST: bool>((ptr, checked): (*const u8, bool)) -> [u32; N] {
    #[cfg(target_arch = "nvptx64")]
    {
        let (r, whole) = imp::ldmatrix::<N, TRANS, TEST>(ptr, checked);
        if TEST && !whole {
            super::warp::not_converged("ldmatrix");
        }
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    imp::ldmatrix::<N, TRANS>(ptr, checked)
}

macro_rules! ldmatrix_fns {
    ($($name:ident, $n:expr, $trans:expr, $ptx:expr;)*) => {$(
        #[doc = concat!("PTX `", $ptx, "` (sm_80 in oxide): loads ", stringify!($n), " 8x8 matrices of 16-bit elements from shared memory, a warp collective. ")]
        #[doc = "Lane `8j + r` (`r < 8`) passes the index in `src` of row `r` of matrix `j` (8 consecutive, 16-byte aligned elements); lanes past the matrices' rows pass any in-bounds index (the GPU ignores them). "]
        #[doc = "Register `j` of lane `4g + t` gets elements `2t, 2t + 1` of row `g` of matrix `j` (with `.trans`: elements `g` of rows `2t` and `2t + 1`), the lower index in the low half. Panics when a row is out of bounds or misaligned."]
        #[inline(always)]
        #[track_caller]
        pub fn $name<T: Elem16>(src: SharedSlice<T>, row: usize) -> [u32; $n] {
            ldmatrix::<T, $n, $trans>(src, row)
        }
    )*};
}
ldmatrix_fns! {
    ldmatrix_x1, 1, false, "ldmatrix.sync.aligned.m8n8.x1.shared.b16";
    ldmatrix_x2, 2, false, "ldmatrix.sync.aligned.m8n8.x2.shared.b16";
    ldmatrix_x4, 4, false, "ldmatrix.sync.aligned.m8n8.x4.shared.b16";
    ldmatrix_x1_trans, 1, true, "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16";
    ldmatrix_x2_trans, 2, true, "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16";
    ldmatrix_x4_trans, 4, true, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16";
}

impl<T: Mma<M16N8K16> + Elem16> FragA<T, M16N8K16> {
    /// The 16 x 16 block at (`row0`, `col0`) of a row-major matrix in shared memory with `ld`
    /// elements per row (`ldmatrix.x4`, a warp collective). Rows must start 16-byte aligned:
    /// `ld` and `col0` multiples of 8, the view aligned.
    #[inline(always)]
    #[track_caller]
    pub fn load(src: SharedSlice<T>, ld: usize, row0: usize, col0: usize) -> Self {
        let l = super::thread::lane_id() as usize;
        Self::from_regs(ldmatrix_x4(src, (row0 + l % 16) * ld + col0 + l / 16 * 8))
    }
}

impl<T: Mma<M16N8K16> + Elem16> FragA<T, M16N8K16> {
    /// `M` blocks of 16 x 16 down the rows, block `i` at (`row0 + 16 i`, `col0`): [`load`](Self::load)
    /// `M` times after one test that the whole warp is here (as [`mma_sync_grid`]).
    #[inline(always)]
    #[track_caller]
    pub fn load_column<const M: usize>(src: SharedSlice<T>, ld: usize, row0: usize, col0: usize) -> [Self; M] {
        let l = super::thread::lane_id() as usize;
        // Every row is checked before the test (a lane failing a check panics there), so no
        // lane-dependent branch separates the test from the loads.
        let rows: [_; M] = ldmatrix_rows(src, (row0 + l % 16) * ld + col0 + l / 16 * 8, 16 * ld, M);
        super::warp::require_converged("FragA::load_column");
        rows.map(|row| Self::from_regs(ldmatrix_at::<4, false, false>(row)))
    }
}

impl<T: Mma<M16N8K16> + Elem16> FragB<T, M16N8K16> {
    /// The 16 x 8 block at (`k0`, `n0`) of a `K x N` row-major B in shared memory with `ld`
    /// elements per row (`ldmatrix.x2.trans`, a warp collective; alignment as [`FragA::load`]).
    #[inline(always)]
    #[track_caller]
    pub fn load_trans(src: SharedSlice<T>, ld: usize, k0: usize, n0: usize) -> Self {
        let l = super::thread::lane_id() as usize;
        Self::from_regs(ldmatrix_x2_trans(src, (k0 + l % 16) * ld + n0))
    }

    /// Two neighbouring blocks of a row-major B, at (`k0`, `n0`) and (`k0`, `n0 + 8`), with
    /// one `ldmatrix.x4.trans`.
    #[inline(always)]
    #[track_caller]
    pub fn load_trans_pair(src: SharedSlice<T>, ld: usize, k0: usize, n0: usize) -> (Self, Self) {
        let l = super::thread::lane_id() as usize;
        let r = ldmatrix_x4_trans(src, (k0 + l % 16) * ld + n0 + l / 16 * 8);
        (Self::from_regs([r[0], r[1]]), Self::from_regs([r[2], r[3]]))
    }

    /// `N` (even) blocks of 16 x 8 side by side, block `j` at (`k0`, `n0 + 8 j`) of a row-major
    /// B: [`load_trans_pair`](Self::load_trans_pair) `N / 2` times after one test that the whole
    /// warp is here (as [`mma_sync_grid`]).
    #[inline(always)]
    #[track_caller]
    pub fn load_trans_row<const N: usize>(src: SharedSlice<T>, ld: usize, k0: usize, n0: usize) -> [Self; N] {
        const { assert!(N % 2 == 0, "FragB::load_trans_row::<N>: N must be even (one ldmatrix.x4 loads two blocks)") };
        let l = super::thread::lane_id() as usize;
        // As in `FragA::load_column`: every row checked, then the test, then the loads. Entry
        // `j` is the row of pair `j` (`N / 2` is no array length here: the rest go unused).
        let rows: [_; N] = ldmatrix_rows(src, (k0 + l % 16) * ld + n0 + l / 16 * 8, 16, N / 2);
        super::warp::require_converged("FragB::load_trans_row");
        let mut out = [Self::from_regs([0; 2]); N];
        for p in 0..N / 2 {
            let r = ldmatrix_at::<4, true, false>(rows[p]);
            out[2 * p] = Self::from_regs([r[0], r[1]]);
            out[2 * p + 1] = Self::from_regs([r[2], r[3]]);
        }
        out
    }

    /// The 16 x 8 block at (`k0`, `n0`) of B stored transposed (`N x K` row-major, like a
    /// weight matrix `W[n][k]`) with `ld` elements per row (`ldmatrix.x2`, a warp collective).
    #[inline(always)]
    #[track_caller]
    pub fn load_nk(src: SharedSlice<T>, ld: usize, k0: usize, n0: usize) -> Self {
        let l = super::thread::lane_id() as usize;
        Self::from_regs(ldmatrix_x2(src, (n0 + l % 8) * ld + k0 + l / 8 % 2 * 8))
    }
}

// ---------------------------------------------------------------------------------------------
// cp.async

/// Starts copying `N` elements `src[src_index..]` to `dst[dst_index..]` in the background
/// (PTX `cp.async.{ca,cg}.shared.global` with a source size, sm_80). Source elements past the
/// end of `src` are not read: their places are zero-filled, so edge tiles need no branch.
/// `N * size_of::<T>()` must be 4, 8 or 16 bytes (16 uses `.cg`, which bypasses L1).
///
/// The copy belongs to the next group [`cp_async_commit`] closes and is complete after a
/// [`cp_async_wait`] that covers that group (other threads: after a barrier that follows it).
/// `src` must be in global memory (a kernel's `&[T]` input, or a part of one). Panics when the
/// destination is out of bounds, when either address is not aligned to the copy's size, or
/// (GPU) when `src` is not global memory.
#[inline(always)]
#[track_caller]
pub fn cp_async<T: SharedElem, const N: usize>(dst: SharedSlice<T>, dst_index: usize, src: &[T], src_index: usize) {
    let bytes = const {
        let b = N * core::mem::size_of::<T>();
        assert!(
            b == 4 || b == 8 || b == 16,
            "cp_async copies 4, 8 or 16 bytes: N * size_of::<T>() must be one of them"
        );
        b
    };
    let (d, _) = dst.range_ptr(dst_index, N);
    let valid = src.len().saturating_sub(src_index).min(N);
    if (d as usize) % bytes != 0 {
        misaligned("cp_async destination", bytes);
    }
    if valid == 0 {
        // Nothing to read (a row past the matrix, often an empty `&[]`, which is no global
        // address): the zeros are stored at once, which an asynchronous copy may also do.
        // SAFETY: `d..d + bytes` is in bounds of the live shared view (checked above).
        unsafe { imp::cp_async_zero(d as *mut u8, bytes) };
        return;
    }
    let s = src.as_ptr().wrapping_add(src_index);
    if (s as usize) % bytes != 0 {
        misaligned("cp_async source", bytes);
    }
    // SAFETY: `d..d + bytes` is in bounds of the live shared view and aligned (checked above); `s..s + valid * size_of::<T>()` is in bounds of `src`, and nothing past it is read.
    unsafe { imp::cp_async(d as *mut u8, s as *const u8, bytes, valid * core::mem::size_of::<T>()) }
}

/// Starts copying `N` elements of `src`'s row `row`, columns `col..col + N`, to
/// `dst[dst_index..]` in the background, like [`cp_async`]; elements outside the matrix (a row
/// past the last, columns past the last) are zero-filled, so a GEMM's edge tiles need no branch.
///
/// What it saves over `cp_async(dst, i, src.row(r).unwrap_or(&[]), c)` in a GEMM's main loop:
/// a `Matrix` always lies in global memory (only a launcher makes one), so there is no address
/// space test and no separate path for a row with nothing to read; and alignment is checked on
/// the matrix as a whole — its first element, its row length and `col` — so when `col` steps
/// by multiples of `N` the optimiser tests it once, outside the loop. Panics when the
/// destination is out of bounds or either side is not aligned to the copy's size (on the source
/// side: when the matrix's rows are not whole multiples of the copy).
#[inline(always)]
#[track_caller]
pub fn cp_async_matrix<T: SharedElem, const N: usize>(
    dst: SharedSlice<T>,
    dst_index: usize,
    src: Matrix<T>,
    row: usize,
    col: usize,
) {
    let size = core::mem::size_of::<T>();
    let bytes = const {
        let b = N * core::mem::size_of::<T>();
        assert!(
            b == 4 || b == 8 || b == 16,
            "cp_async_matrix copies 4, 8 or 16 bytes: N * size_of::<T>() must be one of them"
        );
        b
    };
    let _ = dst.range_ptr(dst_index, N); // the bounds check
                                         // The view's start and the offset each aligned: the start's test is the same for every copy
                                         // (tested once in a loop), the offset's folds away for indices at multiples of `N`.
    if (dst.as_ptr() as usize | (dst_index * size)) % bytes != 0 {
        misaligned("cp_async_matrix destination (the view's start and the index's offset)", bytes);
    }
    let offset = dst_index * size;
    let base = src.as_ptr();
    if (base as usize | (src.cols() * size) | (col * size)) % bytes != 0 {
        misaligned("cp_async_matrix source (matrix start, row length or column)", bytes);
    }
    // `cols` and `col` are multiples of `N` (checked above), so a copy inside the matrix is
    // whole: it copies all `N` elements or, outside, none.
    let (rows, cols) = (src.rows(), src.cols());
    let inside = row < rows && col < cols;
    // A copy with nothing to read still names an address: the matrix's first element (no byte
    // of it is read).
    let s = base.wrapping_add(if inside { row * cols + col } else { 0 });
    // SAFETY: `dst + offset .. + bytes` (offset `dst_index * size`) is in bounds of the live shared view and aligned (checked above); `s..s + bytes` lies in the matrix when `inside` (`row < rows`, and `col + N <= cols` as both are multiples of `N`; nothing is read otherwise), whose elements are global memory on the GPU (only a launcher makes a `Matrix`) and non-null and aligned for `T` on the CPU; `s` is aligned to `bytes` (the matrix's start, row length and `col` are).
    unsafe { imp::cp_async_global(dst.as_ptr() as *mut u8, offset, s as *const u8, bytes, inside) }
}

/// Closes the group of this thread's [`cp_async`] copies issued since the last commit (PTX
/// `cp.async.commit_group`, sm_80).
#[inline(always)]
pub fn cp_async_commit() {
    imp::cp_async_commit()
}

/// Waits until at most `N` of this thread's committed groups are still in flight (PTX
/// `cp.async.wait_group N`, sm_80): `cp_async_wait::<0>()` waits for all of them.
#[inline(always)]
pub fn cp_async_wait<const N: u32>() {
    imp::cp_async_wait::<N>()
}

#[cold]
#[inline(never)]
#[track_caller]
fn misaligned(what: &str, align: usize) -> ! {
    panic!("{what} address is not {align}-byte aligned")
}

// ---------------------------------------------------------------------------------------------
// Output of MMA accumulators

/// The accumulators of a warp-tiled MMA kernel, written where they belong: a row-major matrix
/// with `cols` columns (the host passes `oxide_rt::Slice2d::new(&mut buf, cols)`), tiled as a
/// tensor-core GEMM tiles its C.
///
/// * The block at `(bx, by)` owns the `BM x BN` tile whose top-left element is row `by * BM`,
///   column `bx * BN`.
/// * Warp `w` of the block ([`warp_id`](super::thread::warp_id)) owns, when
///   `w < (BM / WM) * (BN / WN)`, the `WM x WN` sub-tile at row `(w / (BN / WN)) * WM`, column
///   `(w % (BN / WN)) * WN` of the block's tile.
/// * Lane `l` owns, in each 16 x 8 piece `(mi, ni)` of its warp's sub-tile (`mi < WM / 16`,
///   `ni < WN / 8`), the four elements of an accumulator fragment: element `i` at
///   [`FragC::coord`]`(l, i)` of the piece. So `get_mut(mi, ni, i)` is where `acc[mi][ni].elems[i]`
///   goes.
///
/// Why no two threads meet: `BM`, `BN`, `WM` and `WN` are in the type and `cols` comes from the
/// host, so all threads agree on the tiling; tiles of distinct blocks are disjoint, as are the
/// sub-tiles of distinct warps and the 16 x 8 pieces of one sub-tile; inside a piece, `coord` is
/// a bijection from (lane, element) to the piece's 128 positions; and a launch with more than
/// one block along z owns nothing.
pub struct DisjointMmaTiles<'a, T, const BM: usize, const BN: usize, const WM: usize, const WN: usize> {
    ptr: core::ptr::NonNull<T>,
    len: usize,
    /// At most `u32::MAX` (the launchers refuse more).
    cols: u32,
    /// `len / cols`, from the launcher.
    rows: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

super::slice::output_len!(DisjointMmaTiles, const BM: usize, const BN: usize, const WM: usize, const WN: usize);

impl<T, const BM: usize, const BN: usize, const WM: usize, const WN: usize> DisjointMmaTiles<'_, T, BM, BN, WM, WN> {
    const SHAPE_OK: () = assert!(
        WM > 0 && WN > 0 && WM % 16 == 0 && WN % 8 == 0 && BM % WM == 0 && BN % WN == 0 && BM <= 1 << 16 && BN <= 1 << 16,
        "DisjointMmaTiles<T, BM, BN, WM, WN>: WM must be a multiple of 16, WN of 8, and they must divide BM and BN (at most 65536)"
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

    /// Row and column of this block's tile's top-left element (`by * BM`, `bx * BN`).
    #[inline(always)]
    pub fn origin(&self) -> (usize, usize) {
        let () = Self::SHAPE_OK;
        let b = super::thread::block_idx();
        (b.y as usize * BM, b.x as usize * BN)
    }

    /// Row and column of this warp's sub-tile's top-left element in the matrix, or `None` for
    /// a warp that owns none.
    #[inline(always)]
    pub fn warp_origin(&self) -> Option<(usize, usize)> {
        let () = Self::SHAPE_OK;
        if super::thread::grid_dim().z != 1 {
            return None;
        }
        let w = super::thread::warp_id() as usize;
        if w >= (BM / WM) * (BN / WN) {
            return None;
        }
        let (r, c) = self.origin();
        Some((r + w / (BN / WN) * WM, c + w % (BN / WN) * WN))
    }

    /// Matrix row and column of element `i` of piece `(mi, ni)` of this lane, or `None` when it
    /// has none: past the sub-tile, past the matrix, or a warp or launch that owns nothing.
    #[inline(always)]
    pub fn position(&self, mi: usize, ni: usize, i: usize) -> Option<(usize, usize)> {
        if mi >= WM / 16 || ni >= WN / 8 || i >= 4 {
            return None;
        }
        let (r0, c0) = self.warp_origin()?;
        let (r, c) = FragC::<f32, M16N8K16>::coord(super::thread::lane_id(), i);
        let (row, col) = (r0 + mi * 16 + r, c0 + ni * 8 + c);
        (row < self.rows && col < self.cols()).then_some((row, col))
    }

    /// This lane's element `i` of piece `(mi, ni)` (see [`position`](Self::position)).
    #[inline(always)]
    pub fn get_mut(&mut self, mi: usize, ni: usize, i: usize) -> Option<&mut T> {
        let (row, col) = self.position(mi, ni, i)?;
        // SAFETY: `row < rows = len / cols` and `col < cols` (checked by `position`), so `row * cols + col < len`; owned by this thread only (see the type's docs); `&mut self` stops this thread from taking it twice.
        Some(unsafe { &mut *self.ptr.as_ptr().add(row * self.cols() + col) })
    }
}

impl<T, const BM: usize, const BN: usize, const WM: usize, const WN: usize> super::slice::OutputSlice
    for DisjointMmaTiles<'_, T, BM, BN, WM, WN>
{
    type Elem = T;
    const NAME: &'static str = "DisjointMmaTiles";
    #[inline(always)]
    unsafe fn from_raw(ptr: *mut T, len: usize, shape: [usize; 3]) -> Self {
        // SAFETY: non-null by `OutputSlice::from_raw`'s contract 3; `len` elements live there by contract 1.
        let ptr = unsafe {
            crate::device::assume_buffer::<T>(ptr, len);
            core::ptr::NonNull::new_unchecked(ptr)
        };
        // `cols` fits in u32 (`check_shape`); `rows` is `len / cols` (contract 4).
        DisjointMmaTiles { ptr, len, cols: shape[0] as u32, rows: shape[1], _borrow: PhantomData }
    }
}
