//! Barriers and memory fences.
//!
//! As in CUDA, a block barrier must be reached by every thread of the block or by none, and a
//! warp barrier by every lane named in its mask; a barrier inside a branch that only some threads
//! take hangs or corrupts the kernel. The CPU executor, with its checks on, reports threads that
//! wait at different `sync_threads*` calls, or at a barrier that other threads of the block
//! have left the kernel without reaching, as `Error::CpuCheck` naming both source lines. A barrier the compiler copied into both arms of a branch
//! still counts each thread once: it is `barrier.sync`, which threads may reach at different
//! instructions.

use super::backend;

/// Waits until every thread of the block has reached this call; their shared- and global-memory
/// writes before it are visible to the block after it (CUDA `__syncthreads`).
#[inline(always)]
#[track_caller]
pub fn sync_threads() {
    backend::sync_threads()
}

/// [`sync_threads`] that also returns how many threads of the block passed `pred == true`
/// (CUDA `__syncthreads_count`).
#[inline(always)]
#[track_caller]
pub fn sync_threads_count(pred: bool) -> u32 {
    backend::sync_threads_count(pred)
}

/// [`sync_threads`] that also returns whether `pred` was true for every thread of the block
/// (CUDA `__syncthreads_and`).
#[inline(always)]
#[track_caller]
pub fn sync_threads_and(pred: bool) -> bool {
    backend::sync_threads_and(pred)
}

/// [`sync_threads`] that also returns whether `pred` was true for any thread of the block
/// (CUDA `__syncthreads_or`).
#[inline(always)]
#[track_caller]
pub fn sync_threads_or(pred: bool) -> bool {
    backend::sync_threads_or(pred)
}

/// Waits until every lane in `mask` has reached this call, with memory ordering among them
/// (CUDA `__syncwarp(mask)`). Every lane in `mask` must call it with the same mask.
#[inline(always)]
#[track_caller]
pub fn sync_warp(mask: u32) {
    backend::sync_warp(mask)
}

/// Orders this thread's memory accesses as seen by the other threads of its block
/// (CUDA `__threadfence_block`, PTX `membar.cta`).
#[inline(always)]
pub fn fence_block() {
    backend::fence_block()
}

/// Orders this thread's memory accesses as seen by every thread on the device
/// (CUDA `__threadfence`, PTX `membar.gl`).
#[inline(always)]
pub fn fence_device() {
    backend::fence_device()
}

/// Orders this thread's memory accesses as seen by the whole system, host included
/// (CUDA `__threadfence_system`, PTX `membar.sys`).
#[inline(always)]
pub fn fence_system() {
    backend::fence_system()
}
