//! Warp specialization (sm_90 / sm_90a): choosing one lane of a warp to issue work for it, and
//! moving registers between warpgroups that do different work (a TMA producer needs few, MMA
//! consumers many).
//!
//! | operation | PTX instruction | needs |
//! | --- | --- | --- |
//! | [`elect_sync`] | `elect.sync` | sm_90 |
//! | [`setmaxnreg_inc`], [`setmaxnreg_dec`] | `setmaxnreg.{inc,dec}.sync.aligned.u32` | sm_90a |
//!
//! # The rules
//! [`elect_sync`] is a warp collective: all 32 lanes of the warp call it. `setmaxnreg` is a
//! warpgroup collective: all 128 threads of an aligned group of four warps execute the same
//! call, and the kernel is compiled for `sm_90a` (oxide-build refuses other targets). On the
//! CPU executor [`elect_sync`] elects the lowest lane and `setmaxnreg` does nothing.

#[cfg(not(target_arch = "nvptx64"))]
use super::cpu_hopper as imp;
#[cfg(target_arch = "nvptx64")]
use super::nvptx_hopper as imp;

/// True in exactly one lane of the warp, the same for every lane: the lowest (`elect.sync`
/// with every lane in the mask).
#[inline(always)]
#[track_caller]
pub fn elect_sync() -> bool {
    imp::elect_sync()
}

/// Raises this warpgroup's per-thread register limit to `N` (24..=256, a multiple of 8):
/// `setmaxnreg.inc.sync.aligned.u32 N`, waiting until the registers are free.
#[inline(always)]
pub fn setmaxnreg_inc<const N: u32>() {
    const { assert!(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes 24..=256 registers, a multiple of 8") };
    imp::setmaxnreg::<N, true>()
}

/// Lowers this warpgroup's per-thread register limit to `N` (24..=256, a multiple of 8),
/// releasing the rest for other warpgroups: `setmaxnreg.dec.sync.aligned.u32 N`.
#[inline(always)]
pub fn setmaxnreg_dec<const N: u32>() {
    const { assert!(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes 24..=256 registers, a multiple of 8") };
    imp::setmaxnreg::<N, false>()
}
