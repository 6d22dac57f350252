//! Each kernel has one deliberate bug (except `big_frame_with_barrier`, which is correct and
//! needs a big stack). Compiled for the host (CPU launchers) and for nvptx64 by build.rs; the
//! tests only run them on the CPU executor, whose checks must report the bug.
use oxide_rt::device::atomic::{AtomicU32, Ordering};
use oxide_rt::device::*;

pub const TILE: usize = 64;

/// Every thread clears its element of a tile; after a barrier it stores its input there and
/// reads its neighbour's with no barrier in between: a read-after-write (or write-after-read)
/// race.
#[kernel]
pub fn racy_neighbour(x: &[u32], mut out: DisjointSlice<u32>) {
    let tile = shared_array!(u32, TILE);
    let t = thread::thread_idx().x as usize;
    let i = thread::index();
    tile.set(t, 0);
    sync_threads();
    tile.set(t, x.get(i.get()).copied().unwrap_or(0));
    // Missing: sync_threads();
    let v = tile.get((t + 1) % TILE);
    if let Some(o) = out.get_mut(i) {
        *o = v;
    }
}

/// Only the first half of the block fills the tile, then every thread reads its mirror element
/// after a barrier: the second half of the tile was never written (garbage on the GPU).
#[kernel]
pub fn half_filled_tile(x: &[u32], mut out: DisjointSlice<u32>) {
    let tile = shared_array!(u32, TILE);
    let t = thread::thread_idx().x as usize;
    let i = thread::index();
    if t < TILE / 2 {
        tile.set(t, x.get(i.get()).copied().unwrap_or(0));
    }
    sync_threads();
    let v = tile.get(TILE - 1 - t);
    if let Some(o) = out.get_mut(i) {
        *o = v;
    }
}

/// The same exchange with the barrier: correct.
#[kernel]
pub fn synced_neighbour(x: &[u32], mut out: DisjointSlice<u32>) {
    let tile = shared_array!(u32, TILE);
    let t = thread::thread_idx().x as usize;
    let i = thread::index();
    tile.set(t, x.get(i.get()).copied().unwrap_or(0));
    sync_threads();
    let v = tile.get((t + 1) % TILE);
    if let Some(o) = out.get_mut(i) {
        *o = v;
    }
}

/// The first half-warp waits at one barrier, the rest at another.
#[kernel]
pub fn divergent_barrier(mut out: DisjointSlice<u32>) {
    let t = thread::thread_idx().x;
    let n = if t < 16 { sync_threads_count(true) } else { sync_threads_count(false) };
    if let Some(o) = out.get_mut(thread::index()) {
        *o = n;
    }
}

/// Half the block returns before the barrier the other half waits at.
#[kernel]
pub fn early_exit_barrier(n: u32, mut out: DisjointSlice<u32>) {
    let t = thread::thread_idx().x;
    if t >= n {
        return;
    }
    sync_threads();
    if let Some(o) = out.get_mut(thread::index()) {
        *o = t;
    }
}

/// The upper half-warp has exited; the lower half reads it with a full-mask butterfly (the GPU
/// returns zeros there).
#[kernel]
pub fn absent_lane_shuffle(mut out: DisjointSlice<u32>) {
    let lane = warp::lane_id();
    if lane >= 16 {
        return;
    }
    let v = warp::shfl_xor_sync(FULL_MASK, lane + 100, 16, 32);
    if let Some(o) = out.get_mut(thread::index()) {
        *o = v;
    }
}

/// Thread 0 waits for a flag that thread 1 raises only after a barrier thread 0 never reaches.
#[kernel]
pub fn spin_wait(flag: &[AtomicU32], mut out: DisjointSlice<u32>) {
    let t = thread::thread_idx().x;
    if t == 0 {
        while flag[0].load(Ordering::Acquire) == 0 {
            core::hint::spin_loop();
        }
    } else {
        sync_threads();
        flag[0].store(1, Ordering::Release);
    }
    if let Some(o) = out.get_mut(thread::index()) {
        *o = t;
    }
}

/// `depth` levels of recursion with a 256-byte frame each.
#[inline(never)]
fn descend(depth: u32, salt: u32) -> u32 {
    let frame = core::hint::black_box([salt; 64]);
    if depth == 0 {
        return frame[0];
    }
    descend(depth - 1, salt.wrapping_mul(31).wrapping_add(depth)).wrapping_add(frame[(depth % 64) as usize])
}

/// Thread `deep` recurses `depth` levels; the others 4.
#[kernel]
pub fn deep_recursion(deep: u32, depth: u32, mut out: DisjointSlice<u32>) {
    let i = thread::index();
    let d = if i.get() == deep as usize { depth } else { 4 };
    let v = descend(d, i.get() as u32);
    if let Some(o) = out.get_mut(i) {
        *o = v;
    }
}

/// Elements of `big_frame_with_barrier`'s per-thread array: 320 KiB, more than the CPU
/// executor's default fiber stack but within a GPU thread's 512 KiB.
pub const BIG_FRAME: usize = 80 * 1024;

/// A 320 KiB local array and a barrier: legal, and the CPU executor must size its fiber stacks
/// for it. The first `n` elements are filled (a bound known only at run time, so that the
/// device build does not unroll the loop); thread `t` returns element `t` after the barrier.
#[kernel]
pub fn big_frame_with_barrier(n: u32, salt: u32, mut out: DisjointSlice<u32>) {
    let t = thread::thread_idx().x;
    let mut a = [0u32; BIG_FRAME];
    for (k, slot) in a.iter_mut().enumerate().take(n as usize) {
        *slot = (k as u32).wrapping_mul(salt) ^ t;
    }
    let a = core::hint::black_box(&a);
    sync_threads();
    if let Some(o) = out.get_mut(thread::index()) {
        *o = a[t as usize];
    }
}
