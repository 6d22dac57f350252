//! One kernel per mbarrier / TMA use the tests check. Every TMA kernel: thread 0 announces the
//! box's bytes and issues the load, every thread waits for the phase, then the block writes
//! its tile (in shared-memory order) to its row of the output.
use oxide_rt::device::cluster;
use oxide_rt::device::mbarrier::fence_proxy_async;
use oxide_rt::device::specialize::elect_sync;
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
    let bars = mbarriers!(STAGES).init(THREADS as u32);
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
    let bars = mbarriers!(1).init(THREADS as u32 + 1);
    bars.get(0).arrive();
    bars.get(0).wait_parity(0);
    if let Some(o) = out.get_mut(thread::index()) {
        *o = 1;
    }
}

/// Thread 0 expects `bytes` transaction bytes, arrives, and reports `delivered` of them done;
/// the phase completes only when they match (a hang otherwise: CPU executor only).
#[kernel(block(32))]
pub fn mbar_tx_pending(bytes: u32, delivered: u32, mut out: DisjointSlice<u32>) {
    let bars = mbarriers!(1).init(1);
    if thread::thread_idx().x == 0 {
        bars.get(0).arrive_expect_tx(bytes);
        if delivered > 0 {
            bars.get(0).complete_tx(delivered);
        }
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
    let bars = mbarriers!(1).init_async(1);
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
    let bars = mbarriers!(1).init_async(1);
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
    let bars = mbarriers!(1).init_async(1);
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
        // SAFETY: the test passes each block its own box (distinct 32 x 8 boxes that tile the
        // tensor), and nothing else reads `dst` during the launch.
        unsafe { dst.store(tile, c) };
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

/// As [`tma_load_2d`] with the map read from global memory (`map[0..16]`, copied there by the
/// host) instead of parameter space: TMA accepts either, and the comparison tells a wrong map
/// from a wrong parameter address.
#[kernel(block(128))]
pub fn tma_load_2d_global(map: &[u64], info: [u32; 9], coords: &[i32], mut out: DisjointRows<u32>) {
    let info = oxide_rt::__private::TensorMapInfo {
        box_dims: [info[0], info[1], info[2], info[3], info[4]],
        box_bytes: info[5],
        swizzle: info[6],
        rank: info[7],
        writable: info[8],
    };
    // SAFETY: `map` holds a 2-D tensor map of u32 written by the host (16 words, 256-byte aligned allocation) and `info` its box.
    let map = unsafe { TensorMap::<u32, 2>::__from_param(map.as_ptr() as u64, info) };
    load_box(map, coords, &mut out)
}

/// Blocks per cluster of [`cluster_dsmem`], and the words of cluster registers each block
/// writes before its data.
pub const CLUSTER: usize = 4;
pub const REGS: usize = 6;
/// Threads per block of the cluster kernels (and elements of their shared arrays).
pub const CLUSTER_THREADS: usize = 64;

/// The cluster registers of this block: rank, blocks, cluster index, position in the cluster,
/// cluster extent and clusters in the grid (x).
fn cluster_regs() -> [u32; REGS] {
    [
        cluster::ctarank(),
        cluster::nctarank(),
        cluster::cluster_idx().x,
        cluster::block_in_cluster().x,
        cluster::cluster_dim().x,
        cluster::grid_clusters().x,
    ]
}

/// The block's row: the cluster registers, then each thread's `read`, then each thread's `got`
/// (gathered in shared memory first: thread `t` owns columns `t, t + 64, ..` of the row).
fn write_row(out: &mut DisjointRows<u32>, read: u32, got: u32) {
    let row = shared_array!(u32, REGS + 2 * CLUSTER_THREADS);
    let t = thread::thread_idx().x as usize;
    if t < REGS {
        row.set(t, cluster_regs()[t]);
    }
    row.set(REGS + t, read);
    row.set(REGS + CLUSTER_THREADS + t, got);
    sync_threads();
    for (c, y) in out.iter_mut() {
        *y = row.get(c);
    }
}

/// Distributed shared memory: each block fills `mine` with `block * 1000 + t`; after a cluster
/// barrier it reads the next rank's `mine` and writes `value + 7` into the next rank's
/// `inbox`; after another barrier it reads its own `inbox`. Row of block `b`: the cluster
/// registers, the 64 values read remotely, the 64 values received.
#[kernel(block(64), cluster(4))]
pub fn cluster_dsmem(mut out: DisjointRows<u32>) {
    let mine = shared_array!(u32, CLUSTER_THREADS);
    let inbox = shared_array!(u32, CLUSTER_THREADS);
    let t = thread::thread_idx().x as usize;
    let b = thread::block_idx().x;
    mine.set(t, b * 1000 + t as u32);
    let started = cluster::sync();
    let next = (cluster::ctarank() + 1) % cluster::nctarank();
    let read = cluster::map_shared(mine, next, started).get(t);
    cluster::map_shared(inbox, next, started).set(t, b * 1000 + t as u32 + 7);
    cluster::sync();
    let got = inbox.get(t);
    write_row(&mut out, read, got);
}

/// Blocks and threads that leave early: rank 1 returns at once and warp 1 of every other block
/// too, so the others' cluster barriers are never matched by theirs. The live threads (warp 0
/// of ranks 0, 2, 3) read the `mine` of the next live rank and write into its `inbox`, rank 0
/// writes into rank 1's `inbox` as well (rank 1 must still be there: its memory may not be freed
/// while another block reaches it), then they read their own `inbox`. Row of block `b`: column `t` the
/// value read, column `64 + t` the value received; the rest stays as the host filled it.
#[kernel(block(64), cluster(4))]
pub fn cluster_early_exit(mut out: DisjointRows<u32>) {
    let mine = shared_array!(u32, CLUSTER_THREADS);
    let inbox = shared_array!(u32, CLUSTER_THREADS);
    let t = thread::thread_idx().x as usize;
    let b = thread::block_idx().x;
    let rank = cluster::ctarank();
    if rank == 1 || t >= 32 {
        return;
    }
    mine.set(t, b * 1000 + t as u32);
    let started = cluster::sync();
    let next = [2, 0, 3, 0][rank as usize];
    let read = cluster::map_shared(mine, next, started).get(t);
    cluster::map_shared(inbox, next, started).set(t, b * 1000 + t as u32 + 7);
    if rank == 0 {
        cluster::map_shared(inbox, 1, started).set(t, b);
    }
    cluster::sync();
    let got = inbox.get(t);
    for (c, y) in out.iter_mut() {
        *y = if c < CLUSTER_THREADS { read } else { got };
    }
}

/// A data race across blocks: rank 0 writes into rank 1's `inbox` after a cluster barrier, and
/// rank 1 reads it with no second barrier between (`fixed` = 1 puts one there).
#[kernel(block(64), cluster(2))]
pub fn cluster_race(fixed: u32, mut out: DisjointSlice<u32>) {
    let inbox = shared_array!(u32, CLUSTER_THREADS);
    let t = thread::thread_idx().x as usize;
    inbox.set(t, 0);
    let started = cluster::sync();
    if cluster::ctarank() == 0 {
        cluster::map_shared(inbox, 1, started).set(t, 100 + t as u32);
    }
    if fixed == 1 {
        cluster::sync();
    }
    let got = inbox.get(t);
    if let Some(o) = out.get_mut(thread::index()) {
        *o = got;
    }
}

/// The same without `cluster(..)`: every block is a cluster of one (the GPU's implicit
/// clusters, and the CPU executor's), so rank 0 is the block itself.
#[kernel(block(64))]
pub fn cluster_solo(mut out: DisjointRows<u32>) {
    let mine = shared_array!(u32, CLUSTER_THREADS);
    let inbox = shared_array!(u32, CLUSTER_THREADS);
    let t = thread::thread_idx().x as usize;
    let b = thread::block_idx().x;
    mine.set(t, b * 1000 + t as u32);
    let started = cluster::sync();
    let next = (cluster::ctarank() + 1) % cluster::nctarank();
    let read = cluster::map_shared(mine, next, started).get((t + 1) % CLUSTER_THREADS);
    cluster::sync();
    cluster::map_shared(inbox, next, started).set(t, read + 7);
    cluster::sync();
    let got = inbox.get(t);
    write_row(&mut out, read, got);
}

/// `%laneid` through inline PTX (`asm!`) on the GPU; the device API on the CPU executor, where
/// PTX cannot run (the escape-hatch pattern of the README).
#[inline(always)]
fn lane_via_asm() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let lane: u32;
        // SAFETY: a special-register read; no memory.
        unsafe { core::arch::asm!("mov.u32 {0}, %laneid;", out(reg32) lane, options(nomem, nostack, pure)) };
        lane
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        thread::lane_id()
    }
}

/// `a * b + c` with PTX `mad.lo.u32` on the GPU, wrapping arithmetic on the CPU.
#[inline(always)]
fn mad_via_asm(a: u32, b: u32, c: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let d: u32;
        // SAFETY: register arithmetic only.
        unsafe {
            core::arch::asm!("mad.lo.u32 {d}, {a}, {b}, {c};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b,
                c = in(reg32) c, options(nomem, nostack, pure))
        };
        d
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a.wrapping_mul(b).wrapping_add(c)
    }
}

/// Per thread: whether `elect_sync` chose it, its lane read with `asm!`, and `asm!` arithmetic
/// on its index.
#[kernel(block(96))]
pub fn elect_and_asm(mut out: DisjointChunks<u32, 3>) {
    let i = thread::index();
    let elected = elect_sync() as u32;
    let v = [elected, lane_via_asm(), mad_via_asm(i.get() as u32, 3, 1)];
    if let Some(o) = out.get_mut(i) {
        *o = v;
    }
}

/// Loads each leaving block of [`tma_exit_in_flight`] issues before it exits, and its boxes'
/// width (rows of 64 u32 from tensors of [`EXIT_ROWS`] rows: the box fills the tile).
pub const LEAVER_LOADS: u32 = 8;
pub const EXIT_BOX_COLS: usize = 64;
pub const EXIT_ROWS: usize = 4096;

/// Nanoseconds since an arbitrary start (`%globaltimer`) on the GPU; 0 on the CPU executor,
/// which runs no TMA.
#[inline(always)]
fn now_ns() -> u64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let t: u64;
        // SAFETY: a special-register read; no memory.
        unsafe { core::arch::asm!("mov.u64 {0}, %globaltimer;", out(reg64) t, options(nomem, nostack)) };
        t
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        0
    }
}

/// What a block that exits with TMA loads in flight does to the blocks that get its shared
/// memory next. Even blocks leave: thread 0 issues [`LEAVER_LOADS`] boxes of `leave` into the
/// tile (barrier expecting all their bytes) and every thread returns at once. Odd blocks check:
/// they fill the tile with `0xDEAD_0000 + i`, load their box of `check` through the same
/// barrier address, wait for it, wait `linger_ns` more, and write the tile to their row. A late
/// byte of a left block's copy shows as a `leave` value, a late `complete_tx` on the reused
/// barrier as a fill value (the phase completed before the box landed).
#[kernel(block(128))]
pub fn tma_exit_in_flight(
    leave: TensorMap<u32, 2>,
    check: TensorMap<u32, 2>,
    linger_ns: u32,
    mut out: DisjointRows<u32>,
) {
    let tile = shared_array!(align(1024) u32, TILE);
    let bars = mbarriers!(1).init_async(1);
    let b = thread::block_idx().x;
    let t = thread::thread_idx().x as usize;
    let rows = (TILE / EXIT_BOX_COLS) as u32;
    if b.is_multiple_of(2) {
        if t == 0 {
            bars.get(0).arrive_expect_tx(LEAVER_LOADS * leave.box_bytes());
            for k in 0..LEAVER_LOADS {
                leave.load(tile, [0, ((b / 2 * LEAVER_LOADS + k) * rows % EXIT_ROWS as u32) as i32], bars.get(0));
            }
        }
        return;
    }
    let mut i = t;
    while i < TILE {
        tile.set(i, 0xDEAD_0000 + i as u32);
        i += THREADS;
    }
    sync_threads();
    if t == 0 {
        fence_proxy_async();
        bars.get(0).arrive_expect_tx(check.box_bytes());
        check.load(tile, [0, (b / 2 * rows % EXIT_ROWS as u32) as i32], bars.get(0));
    }
    bars.get(0).wait_parity(0);
    let start = now_ns();
    while now_ns().wrapping_sub(start) < linger_ns as u64 {}
    for (col, y) in out.iter_mut() {
        *y = tile.get(col);
    }
}

/// Stages of [`tma_pipeline`] and its box: 64 x 64 u32 = 16 KiB per stage, 64 KiB in all, so
/// the tiles live in dynamic shared memory above the 48 KiB of static memory.
pub const PIPE_STAGES: usize = 4;
pub const PIPE_BOX: u32 = 64;
/// Consumer threads (4 warps) and the producer warp of [`tma_pipeline`].
pub const CONSUMERS: usize = 128;
pub const PIPE_THREADS: usize = CONSUMERS + 32;
/// Dynamic shared memory [`tma_pipeline`] needs: the stages plus the alignment padding.
pub const PIPE_SHARED: u32 = (PIPE_STAGES as u32) * PIPE_BOX * PIPE_BOX * 4 + 1024 - 16;

/// A warp-specialised TMA pipeline: warp 4 produces (its elected lane loads `tiles` boxes of
/// 64 rows each, block `b` starting at row `64 * tiles * b`, into a ring of `PIPE_STAGES`
/// stages), warps 0..4 consume (each thread sums elements `t, t + 128, ..` of every box).
/// `full[s]` completes when stage `s`'s box has landed (the producer's `arrive_expect_tx` and
/// the copy's bytes), `empty[s]` when all 128 consumers have read it; round `k` of stage `s`
/// waits for phase `k / PIPE_STAGES` of each.
#[kernel(block(160))]
pub fn tma_pipeline(map: TensorMap<u32, 2>, tiles: u32, mut out: DisjointSlice<u32>) {
    let smem = dynamic_shared_aligned::<u32, 1024>();
    let stage = |s: usize| smem.split_at(s * (PIPE_BOX * PIPE_BOX) as usize).1;
    let full = mbarriers!(PIPE_STAGES).init_async(1);
    let empty = mbarriers!(PIPE_STAGES).init_async(CONSUMERS as u32);
    let t = thread::thread_idx().x as usize;
    let base = (thread::block_idx().x * tiles * PIPE_BOX) as i32;
    let mut sum = 0u32;
    if t >= CONSUMERS {
        if elect_sync() {
            for k in 0..tiles as usize {
                let s = k % PIPE_STAGES;
                if k >= PIPE_STAGES {
                    empty.get(s).wait_parity((k / PIPE_STAGES - 1) as u32 % 2);
                }
                full.get(s).arrive_expect_tx(map.box_bytes());
                map.load(stage(s), [0, base + (k as u32 * PIPE_BOX) as i32], full.get(s));
            }
        }
    } else {
        for k in 0..tiles as usize {
            let s = k % PIPE_STAGES;
            full.get(s).wait_parity((k / PIPE_STAGES) as u32 % 2);
            let tile = stage(s);
            let mut i = t;
            while i < (PIPE_BOX * PIPE_BOX) as usize {
                sum = sum.wrapping_add(tile.get(i));
                i += CONSUMERS;
            }
            empty.get(s).arrive();
        }
    }
    if let Some(o) = out.get_mut(thread::index()) {
        *o = sum;
    }
}

/// Where `dynamic_shared_aligned` starts (its address modulo 1024) and how many u32 it holds,
/// with a static array before the dynamic window.
#[kernel(block(32))]
pub fn aligned_dynamic(mut out: DisjointPerBlock<[u32; 2]>) {
    let before = shared_array!(u32, 3);
    let t = thread::thread_idx().x as usize;
    if t < 3 {
        before.set(t, 1);
    }
    let d = dynamic_shared_aligned::<u32, 1024>();
    if let Some(o) = out.get_mut() {
        *o = [(d.as_ptr() as usize % 1024) as u32, d.len() as u32];
    }
}
