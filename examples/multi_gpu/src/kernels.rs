//! Compiled twice: for the host (typed launchers, CPU executor) and for nvptx64 (PTX).
use oxide_rt::device::atomic::AtomicU32;
use oxide_rt::device::*;

/// Bins of the histogram: values are binned by their top byte.
pub const BINS: usize = 256;

/// Adds the histogram of `values` by top byte into `hist` (256 bins).
///
/// Each block first counts its share (a grid-stride loop) into bins in shared memory, where
/// atomics only contend within the block, then adds its non-empty bins to `hist` with
/// device-scope atomics. Any 1D block size works.
#[kernel(launch_bounds(1024), dims = 1)]
pub fn top_byte_histogram(values: &[u32], hist: &[AtomicU32]) {
    let bins = shared_array!(u32, BINS);
    let threads = thread::block_dim().x as usize;
    let mut b = thread::thread_idx().x as usize;
    while b < BINS {
        bins.set(b, 0);
        b += threads;
    }
    sync_threads();
    let stride = thread::grid_dim().x as usize * threads;
    let mut i = thread::global_x();
    while i < values.len() {
        bins.atomic((values[i] >> 24) as usize).atomic_add(1, Scope::Block);
        i += stride;
    }
    sync_threads();
    let mut b = thread::thread_idx().x as usize;
    while b < BINS {
        let count = bins.get(b);
        if let (true, Some(h)) = (count != 0, hist.get(b)) {
            h.atomic_add(count, Scope::Device);
        }
        b += threads;
    }
}
