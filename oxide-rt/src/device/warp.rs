//! Warp-level operations: shuffles, votes, the active mask, and bit tricks.
//!
//! Every lane named in a `mask` must execute the same operation with the same mask (CUDA's
//! `*_sync` rule); [`FULL_MASK`] names all 32 lanes. `width` splits the warp into segments of
//! `width` lanes (a power of two, 1..=32) that shuffle independently, as in CUDA. Only the low
//! five bits of a shuffle's source lane, delta or lane mask count (PTX `shfl.sync` reads
//! `b[4:0]`): a delta of 40 moves by 8, on the GPU and on the CPU executor alike.
//!
//! A `width` that is not a power of two up to 32 panics at the caller's line (`#[track_caller]`)
//! on the GPU and on the CPU executor, so the `Error::KernelPanic` points into the kernel, not
//! into this file; the check folds away for a constant width. A `mask` without the calling lane
//! (undefined in PTX) panics the same way on both (free for a constant mask such as
//! [`FULL_MASK`]). The CPU executor with its checks on (`Error::CpuCheck`) also reports a
//! shuffle that reads a lane that does not take part (exited, outside the block, or not in the
//! mask), whose value the GPU leaves undefined.

use super::backend;

/// All 32 lanes of a warp.
pub const FULL_MASK: u32 = 0xffff_ffff;

/// Which lane a shuffle reads from (PTX `shfl.sync.{idx,up,down,bfly}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShflMode {
    /// From lane `src` (within the `width`-lane segment).
    Idx,
    /// From lane `lane - delta` (unchanged below the segment start).
    Up,
    /// From lane `lane + delta` (unchanged past the segment end).
    Down,
    /// From lane `lane ^ mask`.
    Xor,
}

/// A value that can move between lanes: 32- and 64-bit integers and floats. 64-bit values
/// travel as two 32-bit shuffles, as CUDA does.
pub trait Shuffle: Copy + sealed::Sealed {
    #[doc(hidden)]
    #[track_caller]
    fn shfl(self, mode: ShflMode, mask: u32, lane_or_delta: u32, width: u32) -> Self;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! shuffle32 {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Shuffle for $t {
            #[inline(always)]
            #[track_caller]
            fn shfl(self, mode: ShflMode, mask: u32, lane_or_delta: u32, width: u32) -> Self {
                <$t>::from_ne_bytes(backend::shfl_u32(mode, mask, u32::from_ne_bytes(self.to_ne_bytes()), lane_or_delta, width).to_ne_bytes())
            }
        }
    )*};
}
shuffle32!(u32, i32, f32);

macro_rules! shuffle64 {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Shuffle for $t {
            #[inline(always)]
            #[track_caller]
            fn shfl(self, mode: ShflMode, mask: u32, lane_or_delta: u32, width: u32) -> Self {
                let bits = u64::from_ne_bytes(self.to_ne_bytes());
                let lo = backend::shfl_u32(mode, mask, bits as u32, lane_or_delta, width);
                let hi = backend::shfl_u32(mode, mask, (bits >> 32) as u32, lane_or_delta, width);
                <$t>::from_ne_bytes((lo as u64 | (hi as u64) << 32).to_ne_bytes())
            }
        }
    )*};
}
shuffle64!(u64, i64, f64);

/// `value` of lane `src_lane` of this thread's `width`-lane segment (CUDA `__shfl_sync`).
#[inline(always)]
#[track_caller]
pub fn shfl_sync<T: Shuffle>(mask: u32, value: T, src_lane: u32, width: u32) -> T {
    value.shfl(ShflMode::Idx, mask, src_lane, width)
}

/// `value` of lane `lane - delta`, or this lane's own below the segment start
/// (CUDA `__shfl_up_sync`).
#[inline(always)]
#[track_caller]
pub fn shfl_up_sync<T: Shuffle>(mask: u32, value: T, delta: u32, width: u32) -> T {
    value.shfl(ShflMode::Up, mask, delta, width)
}

/// `value` of lane `lane + delta`, or this lane's own past the segment end
/// (CUDA `__shfl_down_sync`).
#[inline(always)]
#[track_caller]
pub fn shfl_down_sync<T: Shuffle>(mask: u32, value: T, delta: u32, width: u32) -> T {
    value.shfl(ShflMode::Down, mask, delta, width)
}

/// `value` of lane `lane ^ lane_mask` (CUDA `__shfl_xor_sync`, a butterfly).
#[inline(always)]
#[track_caller]
pub fn shfl_xor_sync<T: Shuffle>(mask: u32, value: T, lane_mask: u32, width: u32) -> T {
    value.shfl(ShflMode::Xor, mask, lane_mask, width)
}

/// Whether `pred` holds on every lane in `mask` (CUDA `__all_sync`).
#[inline(always)]
#[track_caller]
pub fn all_sync(mask: u32, pred: bool) -> bool {
    backend::vote_all(mask, pred)
}

/// Whether `pred` holds on any lane in `mask` (CUDA `__any_sync`).
#[inline(always)]
#[track_caller]
pub fn any_sync(mask: u32, pred: bool) -> bool {
    backend::vote_any(mask, pred)
}

/// Bit `i` is set when lane `i` is in `mask` and its `pred` holds (CUDA `__ballot_sync`).
#[inline(always)]
#[track_caller]
pub fn ballot_sync(mask: u32, pred: bool) -> u32 {
    backend::vote_ballot(mask, pred)
}

/// The lanes currently executing together with this one (CUDA `__activemask`).
#[inline(always)]
pub fn active_mask() -> u32 {
    backend::active_mask()
}

/// Panics (at the caller's line) unless all 32 lanes of the warp execute this call together.
/// PTX's `.aligned` collectives (`mma.sync`, `ldmatrix`, `wgmma`, `setmaxnreg`) require every
/// lane of the warp at the same instruction and are undefined when one diverged or exited: a
/// full `activemask` right before one means the 32 lanes reach it together. `wgmma::fence` and
/// `tensor::mma_sync_grid` call this; `mma_sync` and `ldmatrix` fuse the same test into their
/// own `asm!` (the instruction runs under its predicate, then [`not_converged`] on failure). The
/// CPU executor checks the same when the lanes exchange their operands.
#[inline(always)]
#[track_caller]
pub(crate) fn require_converged(op: &'static str) {
    #[cfg(target_arch = "nvptx64")]
    if backend::active_mask() != FULL_MASK {
        not_converged(op);
    }
    #[cfg(not(target_arch = "nvptx64"))]
    let _ = op;
}

/// The panic of a `.aligned` collective reached by part of a warp.
#[cfg(target_arch = "nvptx64")]
#[cold]
#[track_caller]
pub(crate) fn not_converged(op: &'static str) -> ! {
    panic!("{op} needs all 32 lanes of the warp together: the warp diverged or a lane exited before it")
}

/// Re-export of the lane and warp index, so `warp::lane_id()` reads naturally.
pub use super::thread::{lane_id, warp_id, WARP_SIZE};

/// Sum of `value` over all 32 lanes, returned to every lane (butterfly reduction). Every lane of
/// the warp must call it.
#[inline(always)]
pub fn reduce_add_f32(value: f32) -> f32 {
    let mut v = value;
    let mut offset = 16;
    while offset > 0 {
        v += shfl_xor_sync(FULL_MASK, v, offset, 32);
        offset /= 2;
    }
    v
}

/// Sum of `value` over all 32 lanes (wrapping), returned to every lane. Every lane of the warp
/// must call it.
#[inline(always)]
pub fn reduce_add_u32(value: u32) -> u32 {
    let mut v = value;
    let mut offset = 16;
    while offset > 0 {
        v = v.wrapping_add(shfl_xor_sync(FULL_MASK, v, offset, 32));
        offset /= 2;
    }
    v
}

// ---------------------------------------------------------------------------------------------
// Bit operations (CUDA intrinsics; core's methods lower to the same PTX instructions)

/// Integers with CUDA's bit intrinsics.
pub trait Bits: Copy + sealed::Sealed {
    /// Number of set bits (CUDA `__popc`/`__popcll`, PTX `popc`).
    fn popc(self) -> u32;
    /// Leading zero bits (CUDA `__clz`/`__clzll`, PTX `clz`).
    fn clz(self) -> u32;
    /// Bits in reverse order (CUDA `__brev`/`__brevll`, PTX `brev`).
    fn brev(self) -> Self;
    /// 1-based position of the lowest set bit, 0 when none (CUDA `__ffs`/`__ffsll`).
    fn ffs(self) -> u32;
}

macro_rules! bits {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            #[inline(always)]
            fn popc(self) -> u32 { self.count_ones() }
            #[inline(always)]
            fn clz(self) -> u32 { self.leading_zeros() }
            #[inline(always)]
            fn brev(self) -> Self { self.reverse_bits() }
            #[inline(always)]
            fn ffs(self) -> u32 { if self == 0 { 0 } else { self.trailing_zeros() + 1 } }
        }
    )*};
}
bits!(u32, i32, u64, i64);

/// Set bits in `x` (CUDA `__popc`).
#[inline(always)]
pub fn popc<T: Bits>(x: T) -> u32 {
    x.popc()
}

/// Leading zero bits of `x` (CUDA `__clz`).
#[inline(always)]
pub fn clz<T: Bits>(x: T) -> u32 {
    x.clz()
}

/// `x` with its bits reversed (CUDA `__brev`).
#[inline(always)]
pub fn brev<T: Bits>(x: T) -> T {
    x.brev()
}

/// 1-based position of the lowest set bit of `x`, 0 when `x == 0` (CUDA `__ffs`).
#[inline(always)]
pub fn ffs<T: Bits>(x: T) -> u32 {
    x.ffs()
}
