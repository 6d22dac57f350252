//! Compiled twice: for the host (typed launchers, CPU executor) and for nvptx64 (PTX).
use oxide_rt::device::atomic::AtomicU32;
use oxide_rt::device::*;

pub const BINS: usize = 256;

/// Adds the byte histogram of the first `n` bytes of `words` (packed little-endian, 4 per
/// `u32`) into `hist` (256 bins).
///
/// Each block counts into its own 256 bins in shared memory with block-scope atomics (cheap,
/// contention only within the block), reading one 32-bit word (4 bytes) per load in a
/// grid-stride loop; then each thread merges bins into the global histogram with device-scope
/// atomics, skipping empty ones. Any 1D block size works.
#[kernel(launch_bounds(1024), dims = 1)]
pub fn histogram256(words: &[u32], n: usize, hist: &[AtomicU32]) {
    let bins = shared_array!(u32, BINS);
    let t = thread::thread_idx().x as usize;
    let threads = thread::block_dim().x as usize;
    let mut b = t;
    while b < BINS {
        bins.set(b, 0);
        b += threads;
    }
    sync_threads();

    // Whole words; the partial last word (n % 4 bytes) goes to the launch's thread 0.
    let full = (n / 4).min(words.len());
    // 1D launch: the plain x index and stride (see the reduction example).
    let stride = thread::grid_dim().x as usize * threads;
    let me = thread::global_x();
    let mut i = me;
    while i < full {
        let w = words[i];
        bins.atomic((w & 0xff) as usize).atomic_add(1, Scope::Block);
        bins.atomic(((w >> 8) & 0xff) as usize).atomic_add(1, Scope::Block);
        bins.atomic(((w >> 16) & 0xff) as usize).atomic_add(1, Scope::Block);
        bins.atomic((w >> 24) as usize).atomic_add(1, Scope::Block);
        i += stride;
    }
    if me == 0 && n & 3 != 0 && full < words.len() {
        let w = words[full];
        for byte in 0..n & 3 {
            bins.atomic(((w >> (8 * byte)) & 0xff) as usize).atomic_add(1, Scope::Block);
        }
    }
    sync_threads();

    let mut b = t;
    while b < BINS {
        let count = bins.get(b);
        if let (true, Some(h)) = (count != 0, hist.get(b)) {
            h.atomic_add(count, Scope::Device);
        }
        b += threads;
    }
}
