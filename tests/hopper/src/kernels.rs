//! One kernel per mbarrier / TMA use the tests check. Every TMA kernel: thread 0 announces the
//! box's bytes and issues the load, every thread waits for the phase, then the block writes
//! its tile (in shared-memory order) to its row of the output.
use oxide_rt::device::mbarrier::fence_proxy_async;
use oxide_rt::device::tma;
use oxide_rt::device::*;

/// Threads per block of the mbarrier kernels.
pub const THREADS: usize = 128;
/// Rounds of [`mbar_rounds`], and barriers it cycles through.
pub const ROUNDS: usize = 10;
pub const STAGES: usize = 3;
/// Elements of the tiles of the TMA kernels (u32) and of the swizzle kernel (u16).
pub const TILE: usize = 2048;

/// Round `r`: every thread writes `block * 100000 + t * 1000 + r` into stage `r % STAGES`,
/// arrives on that stage's barrier and waits for the phase (parity `r / STAGES % 2`), then
/// reads its neighbour `(t + r + 1) % THREADS`'s value. Barrier `s` goes through phases 0, 1,
/// 2, 3 with alternating parity; a wrong phase or parity reads a stale or unwritten value.
#[kernel(block(128))]
pub fn mbar_rounds(mut out: DisjointChunks<u32, ROUNDS>) {
    let buf = shared_array!(u32, STAGES * THREADS);
    let bars = mbarriers!(STAGES);
    bars.init(THREADS as u32);
    let t = thread::thread_idx().x as usize;
    let b = thread::block_idx().x;
    let mut got = [0u32; ROUNDS];
    for (r, g) in got.iter_mut().enumerate() {
        let s = r % STAGES;
        buf.set(s * THREADS + t, b * 100_000 + t as u32 * 1000 + r as u32);
        bars.get(s).arrive();
        bars.get(s).wait_parity((r / STAGES % 2) as u32);
        *g = buf.get(s * THREADS + (t + r + 1) % THREADS);
    }
    if let Some(o) = out.get_mut(thread::index()) {
        *o = got;
    }
}

/// A phase that cannot complete: the barrier expects one more arrival than the block has
/// threads. (CPU executor only: on a GPU it hangs.)
#[kernel(block(128))]
pub fn mbar_never(mut out: DisjointSlice<u32>) {
    let bars = mbarriers!(1);
    bars.init(THREADS as u32 + 1);
    bars.get(0).arrive();
    bars.get(0).wait_parity(0);
    if let Some(o) = out.get_mut(thread::index()) {
        *o = 1;
    }
}

/// Thread 0 expects `bytes` transaction bytes that nothing delivers and arrives; the phase must
/// not complete (CPU executor only).
#[kernel(block(32))]
pub fn mbar_tx_pending(bytes: u32, mut out: DisjointSlice<u32>) {
    let bars = mbarriers!(1);
    bars.init(1);
    if thread::thread_idx().x == 0 {
        bars.get(0).arrive_expect_tx(bytes);
    }
    bars.get(0).wait_parity(0);
    if let Some(o) = out.get_mut(thread::index()) {
        *o = 1;
    }
}

/// The box at block `b`'s coordinates (`coords[b * D..]`) into a tile, then the tile to row `b`.
#[inline(always)]
fn load_box<const D: usize>(map: TensorMap<u32, D>, coords: &[i32], out: &mut DisjointRows<u32>) {
    let tile = shared_array!(align(1024) u32, TILE);
    let bars = mbarriers!(1);
    bars.init_async(1);
    let b = thread::block_idx().x as usize;
    if thread::thread_idx().x == 0 {
        let c: [i32; D] = core::array::from_fn(|i| coords[b * D + i]);
        bars.get(0).arrive_expect_tx(map.box_bytes());
        map.load(tile, c, bars.get(0));
    }
    bars.get(0).wait_parity(0);
    let n = map.box_len();
    for (col, y) in out.iter_mut() {
        *y = if col < n { tile.get(col) } else { u32::MAX };
    }
}

#[kernel(block(128))]
pub fn tma_load_1d(map: TensorMap<u32, 1>, coords: &[i32], mut out: DisjointRows<u32>) {
    load_box(map, coords, &mut out)
}

#[kernel(block(128))]
pub fn tma_load_2d(map: TensorMap<u32, 2>, coords: &[i32], mut out: DisjointRows<u32>) {
    load_box(map, coords, &mut out)
}

#[kernel(block(128))]
pub fn tma_load_3d(map: TensorMap<u32, 3>, coords: &[i32], mut out: DisjointRows<u32>) {
    load_box(map, coords, &mut out)
}

#[kernel(block(128))]
pub fn tma_load_4d(map: TensorMap<u32, 4>, coords: &[i32], mut out: DisjointRows<u32>) {
    load_box(map, coords, &mut out)
}

#[kernel(block(128))]
pub fn tma_load_5d(map: TensorMap<u32, 5>, coords: &[i32], mut out: DisjointRows<u32>) {
    load_box(map, coords, &mut out)
}

/// A 2-D box of u16 into a 1024-byte aligned tile, written out in shared-memory order: with a
/// swizzle the 16-byte chunks of each row appear permuted.
#[kernel(block(128))]
pub fn tma_load_u16(map: TensorMap<u16, 2>, coords: &[i32], mut out: DisjointRows<u16>) {
    let tile = shared_array!(align(1024) u16, TILE);
    let bars = mbarriers!(1);
    bars.init_async(1);
    let b = thread::block_idx().x as usize;
    if thread::thread_idx().x == 0 {
        bars.get(0).arrive_expect_tx(map.box_bytes());
        map.load(tile, [coords[2 * b], coords[2 * b + 1]], bars.get(0));
    }
    bars.get(0).wait_parity(0);
    let n = map.box_len();
    for (col, y) in out.iter_mut() {
        *y = if col < n { tile.get(col) } else { u16::MAX };
    }
}

/// Two boxes through one barrier in two phases, then a stored box: block `b` loads the box at
/// `coords[2b..]` of `src`, adds 1 to every element, and stores it to the same box of `dst`
/// (TMA store: fence, commit, wait). Phase 1 reloads the stored box from `dst` to check the
/// store landed before `store_wait` returned.
#[kernel(block(128))]
pub fn tma_store_2d(src: TensorMap<u32, 2>, dst: TensorMap<u32, 2>, coords: &[i32], mut out: DisjointRows<u32>) {
    let tile = shared_array!(align(128) u32, TILE);
    let bars = mbarriers!(1);
    bars.init_async(1);
    let b = thread::block_idx().x as usize;
    let t = thread::thread_idx().x as usize;
    let c = [coords[2 * b], coords[2 * b + 1]];
    if t == 0 {
        bars.get(0).arrive_expect_tx(src.box_bytes());
        src.load(tile, c, bars.get(0));
    }
    bars.get(0).wait_parity(0);
    let n = src.box_len();
    let mut i = t;
    while i < n {
        tile.set(i, tile.get(i) + 1);
        i += THREADS;
    }
    fence_proxy_async();
    sync_threads();
    if t == 0 {
        dst.store(tile, c);
        tma::store_commit();
        tma::store_wait::<0>();
    }
    sync_threads();
    if t == 0 {
        bars.get(0).arrive_expect_tx(dst.box_bytes());
        dst.load(tile, c, bars.get(0));
    }
    bars.get(0).wait_parity(1);
    for (col, y) in out.iter_mut() {
        *y = if col < n { tile.get(col) } else { u32::MAX };
    }
}
