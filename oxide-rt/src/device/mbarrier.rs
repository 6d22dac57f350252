//! Transaction barriers in shared memory (`mbarrier`, sm_80 / sm_90): the completion mechanism
//! of TMA copies ([`tma`](super::tma)) and of producer/consumer pipelines.
//!
//! An mbarrier is a 64-bit object in shared memory that counts two things in its current
//! *phase*: arrivals still expected (set by [`init`](UninitMbarriers::init)) and bytes of asynchronous
//! transactions still expected ([`Mbarrier::arrive_expect_tx`], decremented by the copies that
//! complete on it). When both reach zero the phase completes, its parity flips, and the counts
//! are re-armed for the next phase. Waiting names the parity of the phase waited for: phase 0,
//! 1, 2, ... have parity 0, 1, 0, ...; a pipeline stage that has been used `n` times waits
//! with parity `n % 2`.
//!
//! | operation | PTX instruction | needs |
//! | --- | --- | --- |
//! | [`mbarriers!`](crate::mbarriers) + [`UninitMbarriers::init`] | `mbarrier.init.shared::cta.b64` (thread 0), `barrier.sync` | sm_80 |
//! | [`UninitMbarriers::init_async`] | as `init`, then `fence.mbarrier_init.release.cluster` | sm_90 |
//! | [`Mbarrier::arrive`] | `mbarrier.arrive.shared.b64` | sm_80 |
//! | [`Mbarrier::arrive_expect_tx`] | `mbarrier.arrive.expect_tx.shared::cta.b64` | sm_90 |
//! | [`Mbarrier::expect_tx`] | `mbarrier.expect_tx.relaxed.cta.shared::cta.b64` | sm_90 |
//! | [`Mbarrier::complete_tx`] | `mbarrier.complete_tx.relaxed.cta.shared::cta.b64` | sm_90 |
//! | [`Mbarrier::try_wait_parity`], [`Mbarrier::wait_parity`] | `mbarrier.try_wait.parity.shared::cta.b64` | sm_90 |
//! | [`fence_mbarrier_init`] | `fence.mbarrier_init.release.cluster` | sm_90 |
//! | [`fence_proxy_async`] | `fence.proxy.async.shared::cta` | sm_90 |
//!
//! Building kernels that use an operation for an older architecture fails in oxide-build with
//! an error naming the operation and both architectures.
//!
//! # The rules
//! The object lives in shared memory and is reachable only through these handles (no plain
//! loads or stores touch it), so the counts cannot be corrupted by safe code. Nor can it be
//! used before it is initialised (undefined in PTX): [`mbarriers!`](crate::mbarriers) gives an
//! [`UninitMbarriers`], and only its [`init`](UninitMbarriers::init) (which every thread of the
//! block calls: it ends with a block barrier, like [`sync_threads`](super::sync::sync_threads))
//! gives the [`Mbarriers`] that every other operation needs:
//! ```compile_fail
//! use oxide_rt::device::*;
//! fn early() {
//!     let bars = oxide_rt::mbarriers!(1);
//!     bars.get(0).arrive(); // not initialised: no `get` on `UninitMbarriers`
//! }
//! ```
//! What the program must do itself, as in CUDA:
//! 1. Expect what arrives: a phase completes only after exactly `count` arrivals and all
//!    announced bytes; waiting for a phase that never completes hangs on the GPU (the CPU
//!    executor reports the deadlock: which threads wait on which barrier).
//! 2. Wait before reading what a TMA copy wrote; data written by the async proxy is visible to
//!    the threads that observed the phase complete.
//! 3. Before a TMA store ([`tma`](super::tma)) reads shared memory that threads wrote, call
//!    [`fence_proxy_async`] (threads' writes are in the generic proxy, TMA reads in the async one).
//!
//! On the CPU executor the barriers are emulated (counts, transaction bytes, phases); a thread
//! waiting for a phase is suspended until other threads complete it, and a completed phase
//! orders accesses for the race check as a block barrier would.
//!
//! # A pipeline
//! A ring of `S` stages with a *full* barrier (the TMA copy's bytes) and an *empty* barrier
//! (the consumers' arrivals) per stage; round `k` uses stage `k % S` and waits for phase
//! `k / S` of it (`tests/hopper`'s `tma_pipeline` runs this on the GPU):
//! ```ignore
//! let full = mbarriers!(S).init_async(1);
//! let empty = mbarriers!(S).init_async(CONSUMERS);
//! if producer {
//!     for k in 0..tiles {
//!         let s = k % S;
//!         if k >= S {
//!             empty.get(s).wait_parity((k / S - 1) as u32 % 2);   // consumers freed the stage
//!         }
//!         full.get(s).arrive_expect_tx(map.box_bytes());
//!         map.load(stage(s), coords(k), full.get(s));
//!     }
//! } else {
//!     for k in 0..tiles {
//!         let s = k % S;
//!         full.get(s).wait_parity((k / S) as u32 % 2);           // the box has landed
//!         consume(stage(s));
//!         empty.get(s).arrive();
//!     }
//! }
//! ```

use super::shared::SharedSlice;

#[cfg(not(target_arch = "nvptx64"))]
use super::cpu_hopper as imp;
#[cfg(target_arch = "nvptx64")]
use super::nvptx_hopper as imp;

/// The largest arrival count of one phase (PTX: 2^20 - 1).
pub const MAX_ARRIVALS: u32 = (1 << 20) - 1;

/// `N` mbarriers in shared memory as [`mbarriers!`](crate::mbarriers) declares them, not yet
/// initialised: [`init`](Self::init) or [`init_async`](Self::init_async) turns them into
/// [`Mbarriers`]. Neither `Copy` nor `Clone`, so each declaration is initialised once.
pub struct UninitMbarriers {
    slots: SharedSlice<u64>,
}

/// `N` initialised mbarriers in shared memory, from [`UninitMbarriers::init`]. `Copy`; each
/// barrier is reached through [`get`](Self::get).
#[derive(Clone, Copy)]
pub struct Mbarriers {
    slots: SharedSlice<u64>,
}

/// One mbarrier (see the [module docs](self)). `Copy`: every thread holds the same handle.
#[derive(Clone, Copy)]
pub struct Mbarrier {
    slot: SharedSlice<u64>,
}

impl UninitMbarriers {
    /// # Safety
    /// `slots` is a shared array that nothing but this handle accesses (what `mbarriers!`
    /// declares).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn __from_shared(slots: SharedSlice<u64>) -> Self {
        UninitMbarriers { slots }
    }

    /// Initialises every barrier to expect `count` arrivals per phase: thread 0 of the block
    /// writes them (`mbarrier.init`), then the whole block meets at a barrier, so every thread
    /// must call it (as [`sync_threads`](super::sync::sync_threads)). Panics when `count` is 0
    /// or above [`MAX_ARRIVALS`].
    #[inline(always)]
    #[track_caller]
    pub fn init(self, count: u32) -> Mbarriers {
        self.init_with(count, false)
    }

    /// As [`init`](Self::init), then `fence.mbarrier_init.release.cluster` (sm_90) before the
    /// block barrier, so TMA copies and other blocks of a cluster see the initialised barriers.
    /// Use this form for barriers that TMA copies complete on.
    #[inline(always)]
    #[track_caller]
    pub fn init_async(self, count: u32) -> Mbarriers {
        self.init_with(count, true)
    }

    #[inline(always)]
    #[track_caller]
    fn init_with(self, count: u32, fence: bool) -> Mbarriers {
        if count == 0 || count > MAX_ARRIVALS {
            bad_count(count);
        }
        if super::thread::thread_idx() == super::Dim3::new(0, 0, 0) {
            for i in 0..self.slots.len() {
                let (p, _) = self.slots.range_ptr(i, 1);
                // SAFETY: `p` is an in-bounds, 8-byte aligned slot of this block's barrier array, which only these handles touch.
                unsafe { imp::mbarrier_init(p, count) };
            }
            if fence {
                fence_mbarrier_init();
            }
        }
        super::sync::sync_threads();
        Mbarriers { slots: self.slots }
    }
}

impl Mbarriers {
    /// How many barriers there are.
    #[inline(always)]
    pub fn len(self) -> usize {
        self.slots.len()
    }

    /// Whether there are none.
    #[inline(always)]
    pub fn is_empty(self) -> bool {
        self.slots.is_empty()
    }

    /// Barrier `i`. Panics when `i >= len()`.
    #[inline(always)]
    #[track_caller]
    pub fn get(self, i: usize) -> Mbarrier {
        if i >= self.len() {
            no_barrier(i, self.len());
        }
        let (_, rest) = self.slots.split_at(i);
        Mbarrier { slot: rest.split_at(1).0 }
    }
}

impl Mbarrier {
    #[inline(always)]
    #[track_caller]
    fn ptr(self) -> *mut u64 {
        self.slot.range_ptr(0, 1).0
    }

    /// Arrives once on the current phase (`mbarrier.arrive`, sm_80).
    #[inline(always)]
    #[track_caller]
    pub fn arrive(self) {
        // SAFETY: `ptr` is this block's live barrier slot (checked by `range_ptr`).
        unsafe { imp::mbarrier_arrive(self.ptr()) }
    }

    /// Announces `bytes` more bytes of asynchronous copies for the current phase and arrives
    /// once (`mbarrier.arrive.expect_tx`, sm_90): what the thread issuing a TMA load calls.
    #[inline(always)]
    #[track_caller]
    pub fn arrive_expect_tx(self, bytes: u32) {
        // SAFETY: as in `arrive`.
        unsafe { imp::mbarrier_arrive_expect_tx(self.ptr(), bytes) }
    }

    /// Announces `bytes` more bytes of asynchronous copies for the current phase without
    /// arriving (`mbarrier.expect_tx`, sm_90).
    #[inline(always)]
    #[track_caller]
    pub fn expect_tx(self, bytes: u32) {
        // SAFETY: as in `arrive`.
        unsafe { imp::mbarrier_expect_tx(self.ptr(), bytes) }
    }

    /// Counts `bytes` of the current phase's expected transactions as done, as a completed
    /// copy does (`mbarrier.complete_tx`, sm_90): for a producer that delivers data another way.
    #[inline(always)]
    #[track_caller]
    pub fn complete_tx(self, bytes: u32) {
        // SAFETY: as in `arrive`.
        unsafe { imp::mbarrier_complete_tx(self.ptr(), bytes) }
    }

    /// Whether the phase of parity `parity` (0 or 1; only its lowest bit counts) has completed,
    /// waiting a while for it first (`mbarrier.try_wait.parity`, sm_90).
    #[inline(always)]
    #[track_caller]
    pub fn try_wait_parity(self, parity: u32) -> bool {
        // SAFETY: as in `arrive`.
        unsafe { imp::mbarrier_try_wait_parity(self.ptr(), parity & 1) }
    }

    /// Waits until the phase of parity `parity` has completed (a loop of
    /// [`try_wait_parity`](Self::try_wait_parity), sm_90).
    #[inline(always)]
    #[track_caller]
    pub fn wait_parity(self, parity: u32) {
        while !self.try_wait_parity(parity) {}
    }

    /// The shared-memory address of the barrier object, for inline PTX (`asm!`) and TMA.
    #[inline(always)]
    #[track_caller]
    pub fn as_ptr(self) -> *mut u64 {
        self.ptr()
    }
}

/// `fence.mbarrier_init.release.cluster` (sm_90): makes this thread's `mbarrier.init`s visible
/// to the async proxy and to the other blocks of the cluster ([`UninitMbarriers::init_async`] calls it).
#[inline(always)]
pub fn fence_mbarrier_init() {
    imp::fence_mbarrier_init()
}

/// `fence.proxy.async.shared::cta` (sm_90): orders this thread's earlier shared-memory accesses
/// before later accesses of the async proxy (TMA), e.g. before a TMA store reads a tile the
/// threads wrote.
#[inline(always)]
pub fn fence_proxy_async() {
    imp::fence_proxy_async()
}

#[cold]
#[inline(never)]
#[track_caller]
fn no_barrier(i: usize, len: usize) -> ! {
    panic!("mbarrier index {i} is out of bounds: the array has {len}")
}

#[cold]
#[inline(never)]
#[track_caller]
fn bad_count(count: u32) -> ! {
    panic!("an mbarrier expects 1..={MAX_ARRIVALS} arrivals per phase, not {count}")
}

/// Declares `N` mbarriers in shared memory (8-byte aligned) and returns them not yet
/// initialised, as an [`UninitMbarriers`](crate::device::mbarrier::UninitMbarriers), like
/// `shared_array!`: each use of the macro is one array per block. Its `init` or `init_async`
/// (every thread) gives the [`Mbarriers`](crate::device::mbarrier::Mbarriers) to use.
#[macro_export]
macro_rules! mbarriers {
    ($n:expr) => {{
        let __oxide_slots = $crate::shared_array!(u64, $n);
        // SAFETY: a fresh shared array of this macro's call site that only the returned handle reaches.
        unsafe { $crate::device::mbarrier::UninitMbarriers::__from_shared(__oxide_slots) }
    }};
}
