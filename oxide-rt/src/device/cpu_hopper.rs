//! CPU executor side of [`device::mbarrier`](super::mbarrier) and [`device::tma`](super::tma).
//!
//! **mbarrier.** Each barrier's state lives in a per-block table keyed by its address (the
//! shared-memory word itself is never touched): arrivals still expected, transaction bytes
//! still expected, and completed phases. A thread that waits for a phase that has not completed
//! suspends at [`Op::MbarrierWait`]; the block scheduler releases it once another thread
//! completes that phase, and reports a deadlock (naming the barrier's waiters) when no thread
//! can run. A `try_wait` that would fail therefore waits instead (the GPU's `try_wait` may also
//! wait, for a time of its choosing), so a wait loop never spins on the CPU.
//!
//! **TMA.** Tensor maps describe device memory, which the CPU executor cannot read: launchers
//! of kernels with a `TensorMap` argument return `Err` before running, and the copies here
//! panic naming the operation (they are reachable only through a hand-built map).

use super::cpu::{collective, with_block, Op};
use std::collections::HashMap;
use std::panic::Location;

// A phase never completes while transaction bytes are expected: on the CPU nothing delivers
// them (no TMA), so a wait on such a phase is reported as a deadlock, never passed.

/// Per block: the state of every initialised mbarrier, by address.
#[derive(Default)]
pub(crate) struct HopperState {
    barriers: HashMap<usize, Barrier>,
}

#[derive(Clone, Copy, Debug)]
struct Barrier {
    count: u32,
    pending: u32,
    tx: i64,
    /// Completed phases; the current phase's parity is `phases & 1`.
    phases: u32,
}

impl Barrier {
    /// Completes the phase when nothing is pending; returns whether it did.
    fn complete_if_done(&mut self) -> bool {
        let done = self.pending == 0 && self.tx == 0;
        if done {
            self.phases = self.phases.wrapping_add(1);
            self.pending = self.count;
        }
        done
    }
}

/// Whether the phase of `parity` of the barrier at `addr` has completed (for the scheduler).
pub(crate) fn phase_done(state: &HopperState, addr: usize, parity: u32) -> bool {
    state.barriers.get(&addr).is_some_and(|b| b.phases & 1 != parity)
}

#[track_caller]
fn with_barrier<R>(bar: *mut u64, what: &str, f: impl FnOnce(&mut Barrier) -> R) -> R {
    let site = Location::caller();
    with_block(|mem, _| {
        let mut state = mem.hopper.borrow_mut();
        match state.barriers.get_mut(&(bar as usize)) {
            Some(b) => f(b),
            None => panic!(
                "`{what}` at {site} on an mbarrier that was never initialised; declare it with `mbarriers!(n).init(count)` (every thread)"
            ),
        }
    })
}

/// An arrival (`tx` more bytes expected first). A completed phase orders every access before
/// an arrival on it before every access after a wait on it, so the race check's barrier epoch
/// advances: no ordered pair is reported as a race (a race with a thread that does not arrive
/// on this barrier may go unreported, as the race check's docs allow).
#[track_caller]
fn arrive(bar: *mut u64, what: &str, tx: u32) {
    let site = Location::caller();
    let completed = with_barrier(bar, what, |b| {
        b.tx += i64::from(tx);
        if b.pending == 0 {
            panic!("`{what}` at {site}: more arrivals than the phase expects (init count {})", b.count);
        }
        b.pending -= 1;
        b.complete_if_done()
    });
    if completed {
        with_block(|mem, _| mem.epoch.set(mem.epoch.get().wrapping_add(1)));
    }
}

/// # Safety
/// `bar` is an mbarrier slot of the running block.
pub(crate) unsafe fn mbarrier_init(bar: *mut u64, count: u32) {
    with_block(|mem, _| {
        mem.hopper.borrow_mut().barriers.insert(bar as usize, Barrier { count, pending: count, tx: 0, phases: 0 });
    })
}

/// # Safety
/// As [`mbarrier_init`].
#[track_caller]
pub(crate) unsafe fn mbarrier_arrive(bar: *mut u64) {
    arrive(bar, "mbarrier.arrive", 0)
}

/// # Safety
/// As [`mbarrier_init`].
#[track_caller]
pub(crate) unsafe fn mbarrier_arrive_expect_tx(bar: *mut u64, bytes: u32) {
    arrive(bar, "mbarrier.arrive.expect_tx", bytes)
}

/// # Safety
/// As [`mbarrier_init`].
#[track_caller]
pub(crate) unsafe fn mbarrier_expect_tx(bar: *mut u64, bytes: u32) {
    with_barrier(bar, "mbarrier.expect_tx", |b| b.tx += i64::from(bytes))
}

/// # Safety
/// As [`mbarrier_init`].
#[track_caller]
pub(crate) unsafe fn mbarrier_complete_tx(bar: *mut u64, bytes: u32) {
    let completed = with_barrier(bar, "mbarrier.complete_tx", |b| {
        b.tx -= i64::from(bytes);
        b.complete_if_done()
    });
    if completed {
        with_block(|mem, _| mem.epoch.set(mem.epoch.get().wrapping_add(1)));
    }
}

/// # Safety
/// As [`mbarrier_init`].
#[track_caller]
pub(crate) unsafe fn mbarrier_try_wait_parity(bar: *mut u64, parity: u32) -> bool {
    let site = Location::caller();
    if with_barrier(bar, "mbarrier.try_wait.parity", |b| b.phases & 1 != parity) {
        return true;
    }
    collective("mbarrier.try_wait.parity", Op::MbarrierWait { addr: bar as usize, parity, site });
    true
}

pub(crate) fn fence_mbarrier_init() {}

pub(crate) fn fence_proxy_async() {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

#[cold]
#[track_caller]
fn no_tma(what: &str) -> ! {
    panic!(
        "`{what}` (TMA) cannot run on the CPU executor: a tensor map describes GPU memory; run this kernel on the GPU"
    )
}

/// # Safety
/// Never runs: panics.
#[track_caller]
pub(crate) unsafe fn tma_load<const D: usize>(_dst: *mut u8, _map: u64, _coords: [i32; D], _bar: *mut u64) {
    no_tma("cp.async.bulk.tensor (load)")
}

/// # Safety
/// Never runs: panics.
#[track_caller]
pub(crate) unsafe fn tma_store<const D: usize>(_src: *const u8, _map: u64, _coords: [i32; D]) {
    no_tma("cp.async.bulk.tensor (store)")
}

#[track_caller]
pub(crate) fn tma_store_commit() {
    no_tma("cp.async.bulk.commit_group")
}

#[track_caller]
pub(crate) fn tma_store_wait<const N: u32>() {
    no_tma("cp.async.bulk.wait_group")
}

#[track_caller]
pub(crate) fn tma_store_wait_read<const N: u32>() {
    no_tma("cp.async.bulk.wait_group.read")
}

/// The cluster special registers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClusterReg {
    CtaRank,
    NCtaRank,
    ClusterId,
    ClusterNCtaId,
    ClusterCtaId,
    NClusterId,
}

/// A launch of a `cluster(..)` kernel runs each cluster's blocks together; without clusters
/// every block is a cluster of one, which is also what the GPU reports then.
pub(crate) fn cluster_reg(r: ClusterReg) -> crate::dim::Dim3 {
    use crate::dim::Dim3;
    let one = Dim3::new(1, 1, 1);
    let (dims, idx, grid, rank) = super::cpu::cluster().unwrap_or_else(|| {
        let (b, g) = (super::cpu::block_idx(), super::cpu::grid_dim());
        (one, b, g, 0)
    });
    match r {
        ClusterReg::CtaRank => Dim3::new(rank, 1, 1),
        ClusterReg::NCtaRank => Dim3::new(dims.x * dims.y * dims.z, 1, 1),
        ClusterReg::ClusterId => idx,
        ClusterReg::ClusterNCtaId => dims,
        ClusterReg::ClusterCtaId => Dim3::new(rank % dims.x, rank / dims.x % dims.y, rank / (dims.x * dims.y)),
        ClusterReg::NClusterId => grid,
    }
}

#[track_caller]
pub(crate) fn cluster_arrive() {
    super::cpu::cluster_arrive()
}

#[track_caller]
pub(crate) fn cluster_wait() {
    super::cpu::cluster_wait()
}

/// The executor keeps a cluster's blocks (and their shared memory) until all of them have
/// finished, which is what the GPU's entry and exit barriers arrange.
pub(crate) fn cluster_enter() {}

pub(crate) fn cluster_exit() {}

/// # Safety
/// `local` is shared memory of the running block.
#[track_caller]
pub(crate) unsafe fn mapa(local: *mut u8, rank: u32) -> *mut u8 {
    super::cpu::map_to_rank(local, rank)
}

#[track_caller]
pub(crate) fn elect_sync() -> bool {
    let ballot = super::cpu::vote_ballot(u32::MAX, true);
    ballot.trailing_zeros() == super::cpu::lane_id()
}

/// The executor has no named barriers: a block barrier that ANDs the predicates (every thread of
/// the block calls `warpgroup_registers` at once, as the kernels that use it do).
#[track_caller]
pub(crate) fn warpgroup_all(_wg: u32, pred: bool) -> bool {
    super::sync::sync_threads_and(pred)
}

/// # Safety
/// None on the executor (it has no register file to move); `unsafe` as on the GPU.
pub(crate) unsafe fn setmaxnreg<const N: u32, const INC: bool>() {}
