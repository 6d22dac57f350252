//! Barriers.

use super::backend;

/// Waits until every thread of the block has reached this call (CUDA `__syncthreads`).
///
/// Must be reached by all threads of the block or by none (as in CUDA).
#[inline(always)]
pub fn sync_threads() {
    backend::sync_threads()
}
