//! Thread-block clusters (sm_90): groups of blocks that run at the same time on neighbouring
//! SMs, meet at cluster barriers and read and write each other's shared memory (*distributed
//! shared memory*).
//!
//! A kernel declares its cluster shape with `#[kernel(cluster(x, y, z))]` (at most 8 blocks,
//! literals); PTX gets `.reqnctapercluster`, and every launch forms clusters of that shape (the
//! launchers refuse a grid that is not a whole number of clusters). Without it every block is
//! a cluster of one, and these functions answer accordingly.
//!
//! | operation | PTX instruction | needs |
//! | --- | --- | --- |
//! | `#[kernel(cluster(x, y, z))]` | `.reqnctapercluster x, y, z` (entry directive) | sm_90 |
//! | [`ctarank`], [`nctarank`] | `mov.u32 %cluster_ctarank` / `%cluster_nctarank` | sm_90 |
//! | [`cluster_idx`], [`cluster_dim`], [`block_in_cluster`], [`grid_clusters`] | `%clusterid`, `%cluster_nctaid`, `%cluster_ctaid`, `%nclusterid` | sm_90 |
//! | [`arrive`], [`wait`], [`sync`] | `barrier.cluster.arrive.release`, `barrier.cluster.wait.acquire` | sm_90 |
//! | [`map_shared`] ([`RemoteShared`] reads and writes) | `mapa.u64`, then generic `ld`/`st` | sm_90 |
//! | entry and exit of a `cluster(..)` kernel (generated) | `mbarrier.init` + `barrier.cluster`; `mbarrier.arrive.release.cluster.shared::cluster`, `mbarrier.try_wait.parity.acquire.cluster` | sm_90 |
//!
//! # The rules
//! 1. Every thread of every block of the cluster that has not returned from the kernel reaches
//!    each [`sync`] (or [`arrive`] then [`wait`]): a cluster barrier waits for the threads
//!    still running (PTX's "non-exited threads"), so a block may return early. A thread that
//!    [`arrive`]s waits ([`wait`]) before it returns.
//! 2. A write to another block's shared memory and an access to it by that block are ordered
//!    only by a cluster barrier between them ([`sync`] is release/acquire); without one it is a
//!    data race and the value read is unspecified, as in a block's own shared memory.
//!
//! Two rules of CUDA's are kept by oxide instead of by the program, since breaking them is
//! undefined behaviour rather than a wrong value:
//! * Another block's shared memory may be touched only once that block has started:
//!   [`map_shared`] takes a [`ClusterStarted`], which only a completed cluster barrier
//!   ([`sync`] or [`wait`]) hands out.
//! * It may be touched only while that block runs: a `#[kernel(cluster(..))]` kernel keeps
//!   every block until all threads of the cluster have left the body (early returns too, and
//!   whatever cluster barriers they took or skipped on the way). Each block sets up an exit
//!   mbarrier on entry (then one cluster barrier, so all are ready); a thread leaving the body
//!   arrives on every block's exit mbarrier (release), and the last thread of each block to
//!   leave stays until its block's one completes (acquire), meanwhile taking part in cluster
//!   barriers so that blocks still running complete theirs. A thread that skips a [`sync`]
//!   the others reach therefore never makes another block exit under them: a block returning
//!   early stays until they are done. (A thread that panics exits at once; the launch then
//!   fails with the panic.) The cost: one cluster barrier on entry and `nctarank()` remote
//!   arrivals per thread on exit.
//!
//! ```compile_fail
//! use oxide_rt::device::*;
//! // No barrier, no `ClusterStarted`: the next block may not have started.
//! fn peek(mine: SharedSlice<u32>) -> u32 {
//!     cluster::map_shared(mine, 1).get(0)
//! }
//! ```
//!
//! The CPU executor runs the blocks of a cluster together, as fibers of one scheduler: cluster
//! barriers complete once every thread that has not returned arrived, [`map_shared`] reaches the
//! other block's copy of the array, and every block's memory lives until the whole cluster has
//! finished, as the GPU's exit barrier arranges. With its checks on, an access to another
//! block's memory that no cluster barrier orders against a conflicting one is a reported race
//! (`CpuCheck::SharedRace`), as within a block. Without `cluster(..)` every block is a cluster
//! of one there too.

use super::shared::{block_checked, track_access, Access, SharedElem, SharedSlice};
use crate::dim::Dim3;

#[cfg(not(target_arch = "nvptx64"))]
use super::cpu_hopper as imp;
#[cfg(target_arch = "nvptx64")]
use super::nvptx_hopper as imp;

/// This block's rank in its cluster, `0..nctarank()` (`%cluster_ctarank`).
#[inline(always)]
pub fn ctarank() -> u32 {
    imp::cluster_reg(imp::ClusterReg::CtaRank).x
}

/// Blocks in this block's cluster (`%cluster_nctarank`).
#[inline(always)]
pub fn nctarank() -> u32 {
    imp::cluster_reg(imp::ClusterReg::NCtaRank).x
}

/// The cluster's index in the grid of clusters (`%clusterid`).
#[inline(always)]
pub fn cluster_idx() -> Dim3 {
    imp::cluster_reg(imp::ClusterReg::ClusterId)
}

/// The cluster's shape in blocks (`%cluster_nctaid`).
#[inline(always)]
pub fn cluster_dim() -> Dim3 {
    imp::cluster_reg(imp::ClusterReg::ClusterNCtaId)
}

/// This block's position in its cluster (`%cluster_ctaid`).
#[inline(always)]
pub fn block_in_cluster() -> Dim3 {
    imp::cluster_reg(imp::ClusterReg::ClusterCtaId)
}

/// The grid's shape in clusters (`%nclusterid`).
#[inline(always)]
pub fn grid_clusters() -> Dim3 {
    imp::cluster_reg(imp::ClusterReg::NClusterId)
}

/// Arrives at the cluster barrier with release semantics (`barrier.cluster.arrive.release`):
/// this thread's earlier writes, shared memory of other blocks included, are visible to threads
/// that complete the matching [`wait`].
#[inline(always)]
#[track_caller]
pub fn arrive() {
    imp::cluster_arrive()
}

/// Waits until every thread of the cluster has arrived (`barrier.cluster.wait.acquire`);
/// every block of the cluster has then started.
#[inline(always)]
#[track_caller]
pub fn wait() -> ClusterStarted {
    imp::cluster_wait();
    ClusterStarted(())
}

/// [`arrive`] then [`wait`]: a barrier of every thread of every block of the cluster.
#[inline(always)]
#[track_caller]
pub fn sync() -> ClusterStarted {
    arrive();
    wait()
}

/// The start of a `#[kernel(cluster(..))]` entry (generated code, through `__private`).
#[doc(hidden)]
#[inline(always)]
pub fn __enter() {
    imp::cluster_enter()
}

/// The end of a `#[kernel(cluster(..))]` entry, after the body (generated code).
#[doc(hidden)]
#[inline(always)]
pub fn __exit() {
    imp::cluster_exit()
}

/// What a completed cluster barrier proves: every block of this thread's cluster has started,
/// so its shared memory may be reached ([`map_shared`]). Only [`sync`] and [`wait`] make one.
#[derive(Clone, Copy, Debug)]
pub struct ClusterStarted(());

/// `local`, the same shared array in the block of rank `rank` of this cluster (`mapa`): each
/// block of a cluster runs the same kernel, so its array sits at the same offset there.
/// `started` (from a [`sync`]) shows that block has started. Panics when `rank >= nctarank()`.
#[inline(always)]
#[track_caller]
pub fn map_shared<T: SharedElem>(local: SharedSlice<T>, rank: u32, started: ClusterStarted) -> RemoteShared<T> {
    let ClusterStarted(()) = started;
    let n = nctarank();
    if rank >= n {
        no_such_rank(rank, n);
    }
    // SAFETY: `local` is a live shared array of this block and `rank` a block of this cluster, whose copy of the array has the same length.
    let ptr = unsafe { imp::mapa(local.as_ptr() as *mut u8, rank) } as *mut T;
    RemoteShared { ptr, len: local.len() }
}

/// A shared array of another block of the cluster (or of this one), from [`map_shared`].
/// Accesses are plain loads and stores through generic addresses; see the [rules](self).
pub struct RemoteShared<T> {
    ptr: *mut T,
    len: usize,
}

impl<T> Clone for RemoteShared<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for RemoteShared<T> {}

impl<T: SharedElem> RemoteShared<T> {
    /// Elements in the array.
    #[inline(always)]
    pub fn len(self) -> usize {
        self.len
    }

    /// Whether the array has no elements.
    #[inline(always)]
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// Tells the CPU executor's checks about an access of element `i` (on the executor the
    /// array is the block's own); nothing on the GPU.
    #[inline(always)]
    #[track_caller]
    fn track(self, i: usize, access: Access) {
        let at = self.ptr.wrapping_add(i) as *const u8;
        track_access(block_checked(), at, core::mem::size_of::<T>(), access);
    }

    /// The element at `i`. Panics when `i >= len`.
    #[inline(always)]
    #[track_caller]
    pub fn get(self, i: usize) -> T {
        if i >= self.len {
            out_of_bounds(i, self.len);
        }
        self.track(i, Access::Read);
        // SAFETY: in bounds of the remote copy of the array; that block has started (`ClusterStarted`) and has not exited (the kernel's exit barrier, see the module docs); a plain load, races being the program's responsibility (rule 2), and any bit pattern a valid `T` (`SharedElem`).
        unsafe { self.ptr.add(i).read() }
    }

    /// Stores `v` at `i`. Panics when `i >= len`.
    #[inline(always)]
    #[track_caller]
    pub fn set(self, i: usize, v: T) {
        if i >= self.len {
            out_of_bounds(i, self.len);
        }
        self.track(i, Access::Write);
        // SAFETY: as in `get`; a plain store.
        unsafe { self.ptr.add(i).write(v) }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn no_such_rank(rank: u32, n: u32) -> ! {
    panic!("map_shared: block rank {rank} is not in this cluster of {n} blocks")
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_bounds(i: usize, len: usize) -> ! {
    panic!("index {i} is out of bounds of a remote shared array of {len} elements")
}
