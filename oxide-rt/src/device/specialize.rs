//! Warp specialization (sm_90 / sm_90a): choosing one lane of a warp to issue work for it, and
//! moving registers between warpgroups that do different work (a TMA producer needs few, MMA
//! consumers many).
//!
//! | operation | PTX instruction | needs |
//! | --- | --- | --- |
//! | [`elect_sync`] | `elect.sync` | sm_90 |
//! | [`warpgroup_registers`] | `barrier.red.and.pred` (named, per warpgroup), `activemask`, `setmaxnreg.{inc,dec}.sync.aligned.u32` | sm_90a |
//! | [`setmaxnreg_inc`], [`setmaxnreg_dec`] (`unsafe`) | `setmaxnreg.{inc,dec}.sync.aligned.u32` | sm_90a |
//!
//! # The rules
//! [`elect_sync`] is a warp collective: all 32 lanes of the warp call it. `setmaxnreg` is a
//! warpgroup collective whose misuse PTX leaves undefined: all four warps of an aligned group
//! of four execute the same call, every lane of each, with a warpgroup barrier between two
//! calls; the kernel is compiled for `sm_90a` (oxide-build refuses other targets).
//! [`warpgroup_registers`] keeps those rules itself (it is the safe way in); the raw
//! [`setmaxnreg_inc`] / [`setmaxnreg_dec`] are `unsafe`. On the CPU executor [`elect_sync`]
//! elects the lowest lane and `setmaxnreg` does nothing.

use super::thread;

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

/// Which side of a warp-specialised block a thread is on ([`warpgroup_registers`]), with its
/// warpgroup's index among those of its side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Warpgroup `i` (`< FIRST_CONSUMER`): few registers (e.g. one thread issuing TMA loads).
    Producer(u32),
    /// Consumer `i`, warpgroup `FIRST_CONSUMER + i`: many registers (e.g. wgmma accumulators).
    Consumer(u32),
}

/// Splits the block's warpgroups (`thread_rank() / 128`) for warp specialisation: those below
/// `FIRST_CONSUMER` become producers with at most `PRODUCER_REGS` registers per thread
/// (`setmaxnreg.dec`), the others consumers with `CONSUMER_REGS` (`setmaxnreg.inc`, waiting
/// until the producers have released enough); returns this thread's [`Role`]. Every thread of
/// the block calls it once, before the roles part ways:
/// ```ignore
/// match warpgroup_registers::<1, 40, 232>() {
///     Role::Producer(_) => { /* one thread issues the TMA loads */ }
///     Role::Consumer(c) => { /* wgmma on what they bring, rows 64 c .. 64 c + 64 */ }
/// }
/// ```
/// It keeps `setmaxnreg`'s rules: each warpgroup first meets at a barrier of its own, which
/// also checks that every lane of every warp is there (a warp some of whose lanes returned or
/// went elsewhere would make `setmaxnreg` undefined), and then executes one `setmaxnreg`. Panics
/// (the whole warpgroup, before any `setmaxnreg`) when the block is not a whole number of
/// warpgroups or a warp is not whole. Register counts are 24..=256, multiples of 8, producers'
/// at most consumers'; the kernel's own count (what ptxas allocated for its `launch_bounds`)
/// should lie between them.
#[inline(always)]
#[track_caller]
pub fn warpgroup_registers<const FIRST_CONSUMER: u32, const PRODUCER_REGS: u32, const CONSUMER_REGS: u32>() -> Role {
    const {
        assert!(
            valid_count(PRODUCER_REGS) && valid_count(CONSUMER_REGS),
            "setmaxnreg takes 24..=256 registers, a multiple of 8"
        );
        assert!(PRODUCER_REGS <= CONSUMER_REGS, "producers get at most the consumers' registers");
    };
    let b = thread::block_dim();
    let threads = b.x * b.y * b.z;
    if threads % 128 != 0 {
        not_warpgroups(threads);
    }
    let wg = thread::thread_rank() / 128;
    let whole = super::warp::active_mask() == u32::MAX;
    // The same answer in all 128 threads: either none of them reaches `setmaxnreg` or all do.
    if !imp::warpgroup_all(wg, whole) {
        partial_warp(wg);
    }
    if wg < FIRST_CONSUMER {
        // SAFETY: every thread of the warpgroup is here (the barrier above), every warp whole (checked), and the barrier separates this from any earlier `setmaxnreg` of the warpgroup.
        unsafe { imp::setmaxnreg::<PRODUCER_REGS, false>() };
        Role::Producer(wg)
    } else {
        // SAFETY: as above.
        unsafe { imp::setmaxnreg::<CONSUMER_REGS, true>() };
        Role::Consumer(wg - FIRST_CONSUMER)
    }
}

const fn valid_count(n: u32) -> bool {
    n >= 24 && n <= 256 && n % 8 == 0
}

/// Raises this warpgroup's per-thread register limit to `N` (24..=256, a multiple of 8):
/// `setmaxnreg.inc.sync.aligned.u32 N`, waiting until the registers are free.
///
/// # Safety
/// Every lane of all four warps of the warpgroup executes this same call, with a barrier of the
/// warpgroup since its last `setmaxnreg` (PTX leaves anything else undefined).
/// [`warpgroup_registers`] does this safely.
#[inline(always)]
pub unsafe fn setmaxnreg_inc<const N: u32>() {
    const { assert!(valid_count(N), "setmaxnreg takes 24..=256 registers, a multiple of 8") };
    // SAFETY: the caller keeps the warpgroup rule (this function's contract).
    unsafe { imp::setmaxnreg::<N, true>() }
}

/// Lowers this warpgroup's per-thread register limit to `N` (24..=256, a multiple of 8),
/// releasing the rest for other warpgroups: `setmaxnreg.dec.sync.aligned.u32 N`.
///
/// # Safety
/// As for [`setmaxnreg_inc`].
#[inline(always)]
pub unsafe fn setmaxnreg_dec<const N: u32>() {
    const { assert!(valid_count(N), "setmaxnreg takes 24..=256 registers, a multiple of 8") };
    // SAFETY: the caller keeps the warpgroup rule (this function's contract).
    unsafe { imp::setmaxnreg::<N, false>() }
}

#[cold]
#[inline(never)]
#[track_caller]
fn not_warpgroups(threads: u32) -> ! {
    panic!("warpgroup_registers: a block of {threads} threads is not a whole number of 128-thread warpgroups")
}

#[cold]
#[inline(never)]
#[track_caller]
fn partial_warp(wg: u32) -> ! {
    panic!(
        "warpgroup_registers: warpgroup {wg} reached it with a warp missing lanes; every thread of the block calls it"
    )
}
