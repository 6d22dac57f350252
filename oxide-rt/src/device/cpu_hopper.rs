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
//! **TMA.** A CPU launcher's tensor map describes host memory ([`CpuTensorMap`]): a load copies
//! its box into the tile at once, in the GPU's layout, and completes the barrier's transaction
//! bytes; a store copies the tile back. The shared-memory race check sees the tile written
//! (read) by the issuing thread, so a read before the barrier's phase completes is reported.

use super::cpu::{collective, with_block, Op};
use super::tma::CpuTensorMap;
use std::collections::HashMap;
use std::panic::Location;

// A phase never completes while transaction bytes are expected: only a TMA load delivers them,
// so a wait on a phase whose bytes no load brings is reported as a deadlock, never passed.

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

/// Where element `k` of a box (innermost first) lies in the tensor: its element offset, or
/// `None` outside the tensor.
fn box_element<const D: usize>(m: &CpuTensorMap, coords: [i32; D], k: usize) -> Option<u64> {
    let mut rest = k;
    let mut at = 0u64;
    for (d, &c) in coords.iter().enumerate() {
        let extent = m.box_dims[d].max(1) as usize;
        let x = i64::from(c) + (rest % extent) as i64;
        rest /= extent;
        if x < 0 || x as u64 >= m.dims[d] {
            return None;
        }
        at += x as u64 * m.strides[d];
    }
    Some(at)
}

/// Byte `a` of a box in the shared tile: with a swizzle of `span` bytes, address bits 4.. XOR
/// bits 7.., over as many bits as the span has 16-byte chunks (the tile starts aligned to 8 spans).
fn swizzled(a: usize, span: u32) -> usize {
    let mask = (span as usize / 16).saturating_sub(1);
    a ^ (((a >> 7) & mask) << 4)
}

/// The elements of one box.
fn box_len(m: &CpuTensorMap, rank: usize) -> usize {
    m.box_dims[..rank].iter().map(|&b| b.max(1) as usize).product()
}

/// Copies the box at `coords` of the host tensor into the tile at `dst` (zeros outside the
/// tensor, the map's swizzle), then completes the box's transaction bytes on `bar`.
///
/// # Safety
/// `map` is the address of a [`CpuTensorMap`] that outlives the launch (what a CPU launcher
/// passes); `dst` is shared memory of the running block holding the box (checked by the
/// caller); `bar` an mbarrier of the block.
#[track_caller]
pub(crate) unsafe fn tma_load<const D: usize>(dst: *mut u8, map: u64, coords: [i32; D], bar: *mut u64) {
    // SAFETY: guaranteed by the caller.
    let m = unsafe { &*(map as *const CpuTensorMap) };
    let n = box_len(m, D);
    super::shared::track_access(super::shared::block_checked(), dst, n * m.elem, super::shared::Access::Write);
    for k in 0..n {
        // SAFETY: the tile holds the whole box (`n * elem` bytes; the swizzle permutes within it); a source element inside the tensor lies in the host buffer the map borrows (its extent was checked against the buffer when the map was made).
        unsafe {
            let to = dst.add(swizzled(k * m.elem, m.swizzle));
            match box_element(m, coords, k) {
                Some(at) => std::ptr::copy_nonoverlapping(m.base.add(at as usize * m.elem), to, m.elem),
                None => std::ptr::write_bytes(to, 0, m.elem),
            }
        }
    }
    // SAFETY: as guaranteed by the caller.
    unsafe { mbarrier_complete_tx(bar, (n * m.elem) as u32) }
}

/// Copies the tile at `src` (the map's swizzle) to the box at `coords` of the host tensor;
/// elements outside the tensor are not written.
///
/// # Safety
/// As [`tma_load`], for a map of a writable host tensor (the caller checked `writable`), and
/// the caller's contract of `TensorMap::store` (no other access to the box meanwhile).
#[track_caller]
pub(crate) unsafe fn tma_store<const D: usize>(src: *const u8, map: u64, coords: [i32; D]) {
    // SAFETY: guaranteed by the caller.
    let m = unsafe { &*(map as *const CpuTensorMap) };
    if !m.writable {
        panic!("TMA store through a read-only tensor map: build it with `TensorMap::host_mut` on the host");
    }
    let n = box_len(m, D);
    super::shared::track_access(super::shared::block_checked(), src, n * m.elem, super::shared::Access::Read);
    for k in 0..n {
        if let Some(at) = box_element(m, coords, k) {
            // SAFETY: as in `tma_load`, the other way; the map borrows the host buffer exclusively.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    src.add(swizzled(k * m.elem, m.swizzle)),
                    m.base.add(at as usize * m.elem),
                    m.elem,
                )
            }
        }
    }
}

/// The executor's stores complete when issued: nothing to group or wait for.
pub(crate) fn tma_store_commit() {}

pub(crate) fn tma_store_wait<const N: u32>() {}

pub(crate) fn tma_store_wait_read<const N: u32>() {}

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
