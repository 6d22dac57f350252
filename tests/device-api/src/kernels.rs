//! Small kernels that each exercise one part of `oxide_rt::device`. Compiled for the host (CPU
//! launchers) and for nvptx64 (PTX) by build.rs.
use oxide_rt::device::atomic::{AtomicF32, AtomicF64, AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};
use oxide_rt::device::*;

pub const TILE: usize = 256;

// ---------------------------------------------------------------------------------------------
// Outputs owned per warp, per block, per row

/// `out[w]` = the sum of warp `w`'s inputs, written by its lane 0 (blocks of whole warps: the
/// full-mask reduction needs all 32 lanes).
#[kernel]
pub fn warp_sums(x: &[u32], mut out: DisjointPerWarp<u32>) {
    let v = x.get(thread::index().get()).copied().unwrap_or(0);
    let sum = warp::reduce_add_u32(v);
    if let Some(o) = out.get_mut() {
        *o = sum;
    }
}

/// `out[b]` = the largest input of block `b`, written by its thread 0.
#[kernel]
pub fn block_max(x: &[u32], mut out: DisjointPerBlock<u32>) {
    let best = shared_array!(u32, 1);
    let t = thread::thread_rank();
    if t == 0 {
        best.set(0, 0);
    }
    sync_threads();
    best.atomic(0).atomic_max(x.get(thread::index().get()).copied().unwrap_or(0), Scope::Block);
    sync_threads();
    if let Some(o) = out.get_mut() {
        *o = best.get(0);
    }
}

/// Row `r` of `out` = row `r` of `x` divided by the row's sum (one block per row, any width).
#[kernel]
pub fn normalize_rows(x: &[f32], mut out: DisjointRows<f32>) {
    let partial = shared_array!(f32, 1024);
    let (t, cols, row) = (thread::thread_rank() as usize, out.cols(), out.row());
    let mut sum = 0.0;
    let mut c = t;
    while c < cols {
        sum += x.get(row * cols + c).copied().unwrap_or(0.0);
        c += thread::block_dim().x as usize;
    }
    partial.set(t, sum);
    sync_threads();
    let mut total = 0.0;
    for i in 0..thread::block_dim().x as usize {
        total += partial.get(i);
    }
    for (c, y) in out.iter_mut() {
        *y = x.get(row * cols + c).copied().unwrap_or(0.0) / total;
    }
}

/// One compare-exchange step of a bitonic sort: pair `(i, i ^ j)` (the `j` the host passed with
/// `data`) ends ascending when `i & k == 0`, descending otherwise.
#[kernel(dims = 1)]
pub fn bitonic_step(k: u32, mut data: DisjointXorPairs<u32>) {
    let i = thread::index().get();
    if let Some((a, b)) = data.pair_mut() {
        let ascending = i & k as usize == 0;
        if (*a > *b) == ascending {
            core::mem::swap(a, b);
        }
    }
}

/// One stage of an unnormalised Walsh–Hadamard transform: `(a, b) -> (a + b, a - b)` on the
/// butterfly pairs at the distance the host passed with `data`.
#[kernel(dims = 1)]
pub fn hadamard_stage(mut data: DisjointButterflies<i32>) {
    if let Some((a, b)) = data.pair_mut() {
        let (x, y) = (*a, *b);
        *a = x.wrapping_add(y);
        *b = x.wrapping_sub(y);
    }
}

/// `out[i] = [x + y, z * w, x - y, i]` of quad `i`: elements of 16 bytes, which the GPU reads and
/// writes with one 16-byte access each (the launchers keep such buffers 16-byte aligned).
#[kernel(dims = 1)]
pub fn quad_mix(quads: &[[f32; 4]], mut out: DisjointSlice<[f32; 4]>) {
    let i = thread::index();
    if let (Some(&[x, y, z, w]), Some(o)) = (quads.get(i.get()), out.get_mut(i)) {
        *o = [x + y, z * w, x - y, i.get() as f32];
    }
}

/// `tile_owners`' tiling: 8 x 12 tiles, rows and columns dealt out in pairs.
pub const TILE_H: usize = 8;
pub const TILE_W: usize = 12;
pub const TILE_G: usize = 2;

/// Tile ownership: every thread adds its code (`block << 16 | rank`, plus one) to each element
/// of its `DisjointTiles` tile, so an element two threads owned would hold the sum of two codes.
#[kernel]
pub fn tile_owners(mut out: DisjointTiles<u32, TILE_H, TILE_W, TILE_G>) {
    let (b, t) = (thread::block_idx(), thread::thread_idx());
    let (gd, bd) = (thread::grid_dim(), thread::block_dim());
    let block = b.x + gd.x * (b.y + gd.y * b.z);
    let code = (block << 16 | (t.x + bd.x * (t.y + bd.y * t.z))) + 1;
    for i in 0..TILE_H {
        for j in 0..TILE_W {
            if let Some(v) = out.get_mut(i, j) {
                *v += code;
            }
        }
    }
}

/// Compaction: every `x[i]` divisible by `d` is pushed to `out` (in claim order).
#[kernel]
pub fn keep_multiples(x: &[u32], d: u32, mut out: DisjointAppend<u32>) {
    if let Some(&v) = x.get(thread::index().get()) {
        if d != 0 && v % d == 0 {
            out.push(v);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Indices

/// `out[i] = global x + 1000 * global y` for a 2D launch, written at the row-major index (the
/// width comes with `out` from the host).
#[kernel]
pub fn indices_2d(mut out: DisjointSlice2d<u32>) {
    let (x, y) = thread::index_2d();
    if let Some(o) = out.get_mut() {
        *o = x as u32 + 1000 * y as u32;
    }
}

/// `out[i] = x + 100 * y + 10000 * z` for a 3D launch, written at the row-major index.
#[kernel]
pub fn indices_3d(mut out: DisjointSlice3d<u32>) {
    let (x, y, z) = thread::index_3d();
    if let Some(o) = out.get_mut() {
        *o = x as u32 + 100 * y as u32 + 10000 * z as u32;
    }
}

/// Per thread: lane id, warp id and linear rank in the block, packed `lane | warp << 8 | rank << 16`.
#[kernel]
pub fn lane_warp(mut out: DisjointSlice<u32>) {
    let i = thread::index();
    let v = thread::lane_id() | thread::warp_id() << 8 | thread::thread_rank() << 16;
    if let Some(o) = out.get_mut(i) {
        *o = v;
    }
}

// ---------------------------------------------------------------------------------------------
// Barriers

/// Barrier safety: the `if` feeds a `match` after the barrier, the shape MIR jump threading
/// turns into two copies of the barrier (one per branch); threads taking either copy must still
/// meet (`barrier.sync`, not the `.aligned` `bar.sync`).
/// Each thread returns its mirror's value (doubled when `mode` is odd).
#[kernel]
pub fn barrier_after_branch(mode: u32, x: &[u32], mut out: DisjointSlice<u32>) {
    let tile = shared_array!(u32, TILE);
    let t = thread::thread_idx().x as usize;
    let i = thread::index();
    let kind = if mode & 1 == 1 { 1u8 } else { 2u8 };
    tile.set(t, x.get(i.get()).copied().unwrap_or(0));
    sync_threads();
    let mirror = tile.get(thread::block_dim().x as usize - 1 - t);
    let v = match kind {
        1 => mirror * 2,
        _ => mirror,
    };
    if let Some(o) = out.get_mut(i) {
        *o = v;
    }
}

/// `sync_threads_count/and/or` over `pred = x[i] != 0`, packed `count | and << 16 | or << 17`.
#[kernel]
pub fn barrier_reductions(x: &[u32], mut out: DisjointSlice<u32>) {
    let i = thread::index();
    let pred = x.get(i.get()).is_some_and(|&v| v != 0);
    let count = sync_threads_count(pred);
    let all = sync_threads_and(pred);
    let any = sync_threads_or(pred);
    if let Some(o) = out.get_mut(i) {
        *o = count | (all as u32) << 16 | (any as u32) << 17;
    }
}

/// Fences of all three scopes and a warp barrier (their PTX is checked; the result is trivial).
#[kernel]
pub fn fences(mut out: DisjointSlice<u32>) {
    let i = thread::index();
    sync::fence_block();
    sync::fence_device();
    sync::fence_system();
    sync_warp(FULL_MASK);
    if let Some(o) = out.get_mut(i) {
        *o = 1;
    }
}

// ---------------------------------------------------------------------------------------------
// Shared memory

/// Reverses each block's 256 elements through a static shared array.
#[kernel]
pub fn shared_reverse(x: &[f32], mut out: DisjointSlice<f32>) {
    let tile = shared_array!(f32, TILE);
    let t = thread::thread_idx().x as usize;
    let i = thread::index();
    tile.set(t, x.get(i.get()).copied().unwrap_or(0.0));
    sync_threads();
    let v = tile.get(TILE - 1 - t);
    if let Some(o) = out.get_mut(i) {
        *o = v;
    }
}

/// Transposes a 16×16 block through a 2D shared tile (one block of 16×16 threads).
#[kernel]
pub fn shared_transpose(x: &[u32], mut out: DisjointSlice2d<u32>) {
    let tile = shared_array!(u32, 16, 16);
    let t = thread::thread_idx();
    let (r, c) = (t.y as usize, t.x as usize);
    tile.set(r, c, x.get(r * 16 + c).copied().unwrap_or(0));
    sync_threads();
    let v = tile.get(c, r);
    if let Some(o) = out.get_mut() {
        *o = v;
    }
}

/// Block sums through dynamic shared memory; thread 0 of each block writes the sum and every
/// other thread writes the number of `u32`s the dynamic window holds.
#[kernel]
pub fn dynamic_shared_sum(x: &[u32], mut out: DisjointSlice<u32>) {
    let buf = dynamic_shared::<u32>();
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index();
    if t < buf.len() {
        buf.set(t, x.get(i.get()).copied().unwrap_or(0));
    }
    sync_threads();
    let mut stride = n / 2;
    while stride > 0 {
        if t < stride && t + stride < buf.len() {
            buf.set(t, buf.get(t) + buf.get(t + stride));
        }
        sync_threads();
        stride /= 2;
    }
    let v = if t == 0 { buf.get(0) } else { buf.len() as u32 };
    if let Some(o) = out.get_mut(i) {
        *o = v;
    }
}

// ---------------------------------------------------------------------------------------------
// Atomics

/// Every integer atomic at every scope, on shared memory, reduced per block and written by
/// thread 0 as 16 values per block (see `check::atomics_block`). Threads use `x[i]` as operand.
#[kernel]
pub fn atomics_shared(x: &[u32], mut out: DisjointSlice<u64>) {
    let u = shared_array!(u32, 8);
    let s = shared_array!(i32, 2);
    let w = shared_array!(u64, 3);
    let l = shared_array!(i64, 2);
    let t = thread::thread_idx().x;
    if t == 0 {
        for (k, v) in [0, u32::MAX, 0, 0xffff_ffff, 0, 0, 0, 0].into_iter().enumerate() {
            u.set(k, v);
        }
        s.set(0, i32::MAX);
        s.set(1, i32::MIN);
        w.set(0, 0);
        w.set(1, u64::MAX);
        w.set(2, 0);
        l.set(0, 0);
        l.set(1, 0);
    }
    sync_threads();
    let v = x.get(thread::index().get()).copied().unwrap_or(0);
    u.atomic(0).atomic_add(v, Scope::Block);
    u.atomic(1).atomic_min(v, Scope::Device);
    u.atomic(2).atomic_max(v, Scope::System);
    u.atomic(3).atomic_and(!(1 << (t % 32)), Scope::Block);
    u.atomic(4).atomic_or(1 << (t % 32), Scope::Device);
    u.atomic(5).atomic_xor(v, Scope::System);
    // A lock-free increment through compare-and-swap.
    let mut old = u.atomic(6).atomic_cas(0, 0, Scope::Block);
    loop {
        let seen = u.atomic(6).atomic_cas(old, old + 1, Scope::Block);
        if seen == old {
            break;
        }
        old = seen;
    }
    // Exchange: the last writer's value stays; every thread sees a distinct previous value.
    u.atomic(7).atomic_exch(t + 1, Scope::Device);
    s.atomic(0).atomic_min(v as i32 - 500, Scope::Block);
    s.atomic(1).atomic_max(v as i32 - 500, Scope::Device);
    w.atomic(0).atomic_add(v as u64 * 1_000_000_000, Scope::Device);
    w.atomic(1).atomic_sub(v as u64, Scope::System);
    w.atomic(2).atomic_max(v as u64 * 1_000_000_000, Scope::Block);
    l.atomic(0).atomic_sub(v as i64, Scope::Device);
    l.atomic(1).atomic_min(-(v as i64) * 1_000_000_000, Scope::Block);
    sync_threads();
    let b = thread::block_idx().x as usize;
    let vals: [u64; 16] = [
        u.get(0) as u64,
        u.get(1) as u64,
        u.get(2) as u64,
        u.get(3) as u64,
        u.get(4) as u64,
        u.get(5) as u64,
        u.get(6) as u64,
        (u.get(7) != 0) as u64,
        s.get(0) as i64 as u64,
        s.get(1) as i64 as u64,
        w.get(0),
        w.get(1),
        w.get(2),
        l.get(0) as u64,
        l.get(1) as u64,
        0,
    ];
    // Threads 0..16 of the block each write one of the block's 16 values.
    let i = thread::index();
    if (t as usize) < 16 {
        let _ = b;
        if let Some(o) = out.get_mut(i) {
            *o = vals[t as usize];
        }
    } else if let Some(o) = out.get_mut(i) {
        *o = 0;
    }
}

/// Global float atomics: every thread adds `x[i]` into `sum32[0]`/`sum64[0]` at device scope
/// and 1 into `sum32[1]` at system scope.
#[kernel]
pub fn atomics_float(x: &[f32], sum32: &[AtomicF32], sum64: &[AtomicF64]) {
    let i = thread::index().get();
    if let Some(&v) = x.get(i) {
        sum32[0].atomic_add(v, Scope::Device);
        sum32[1].atomic_add(1.0, Scope::System);
        sum64[0].atomic_add(v as f64, Scope::Device);
    }
}

/// core's atomics on shared memory: `fetch_add` (Relaxed) and `fetch_max` (SeqCst) per block;
/// thread 0 writes `count | max << 32`.
#[kernel]
pub fn core_atomics(x: &[u32], mut out: DisjointSlice<u64>) {
    let c = shared_array!(u32, 2);
    let t = thread::thread_idx().x;
    if t == 0 {
        c.set(0, 0);
        c.set(1, 0);
    }
    sync_threads();
    let v = x.get(thread::index().get()).copied().unwrap_or(0);
    c.atomic(0).with(|a: &AtomicU32| a.fetch_add(1, Ordering::Relaxed));
    c.atomic(1).with(|a| a.fetch_max(v, Ordering::SeqCst));
    sync_threads();
    let r = c.get(0) as u64 | (c.get(1) as u64) << 32;
    if let Some(o) = out.get_mut(thread::index()) {
        *o = if t == 0 { r } else { 0 };
    }
}

/// Only loads from an input of atomics (e.g. flags other kernels set). With the `noalias` that
/// plain inputs get, llc-22 crashed on this kernel; inputs of atomics get none.
#[kernel]
pub fn atomic_loads(flags: &[AtomicU32], again: &[AtomicU32], mut out: DisjointSlice<u32>) {
    let i = thread::index();
    let a = flags.get(i.get()).map_or(0, |f| f.load(Ordering::Relaxed));
    let b = again.get(i.get()).map_or(0, |f| f.load(Ordering::Relaxed));
    if let Some(o) = out.get_mut(i) {
        *o = a + 2 * b;
    }
}

#[cfg(not(target_arch = "nvptx64"))]
std::thread_local! {
    /// Where `stash_shared` keeps a shared-memory view past its launch (host build only).
    pub static STASH: core::cell::Cell<Option<SharedSlice<u32>>> = const { core::cell::Cell::new(None) };
}

#[cfg(not(target_arch = "nvptx64"))]
std::thread_local! {
    /// Where `pass_index` hands a thread's `ThreadIndex` to the next thread (host build only).
    pub static PASSED: core::cell::Cell<Option<ThreadIndex>> = const { core::cell::Cell::new(None) };
}

/// Safe host-build code passing a `ThreadIndex` to another thread: the threads of a block share
/// an OS thread on the CPU executor, so thread 1 finds thread 0's index in a thread-local and
/// writes with it. The output refuses it (a panic) instead of letting two threads own one
/// element.
#[kernel]
pub fn pass_index(mut out: DisjointSlice<u32>) {
    #[allow(unused_mut)]
    let mut i = thread::index();
    #[cfg(not(target_arch = "nvptx64"))]
    {
        if i.get() == 0 {
            PASSED.with(|p| p.set(Some(i)));
        } else if let Some(other) = PASSED.with(|p| p.get()) {
            i = other;
        }
    }
    if let Some(o) = out.get_mut(i) {
        *o += 1;
    }
}

/// Safe code keeping a shared-memory view beyond its block: possible in the host build (a
/// thread-local); the CPU executor must then refuse to use it (see the CPU test).
#[kernel]
pub fn stash_shared() {
    let tile = shared_array!(u32, 32);
    tile.set(thread::thread_idx().x as usize, 7);
    #[cfg(not(target_arch = "nvptx64"))]
    STASH.with(|s| s.set(Some(tile)));
}

// Keep the unused atomic types referenced (they are part of the documented import line).
#[allow(dead_code)]
fn _types(_: &AtomicI32, _: &AtomicI64, _: &AtomicU64) {}

// ---------------------------------------------------------------------------------------------
// Warps

/// Per thread, 8 results (`out[8*i + k]` through 8 output slices would need 8 arguments; we
/// pack into u64s instead): see `check::warp_ops` for the layout.
#[kernel]
pub fn warp_ops(mut out: DisjointSlice<[u64; 8]>) {
    let lane = thread::lane_id();
    let v = lane * 10 + 1;
    let bcast = warp::shfl_sync(FULL_MASK, v, 3, 32);
    let up = warp::shfl_up_sync(FULL_MASK, v, 1, 32);
    let down = warp::shfl_down_sync(FULL_MASK, v, 2, 16);
    let xor = warp::shfl_xor_sync(FULL_MASK, v, 1, 32);
    let f = warp::shfl_sync(FULL_MASK, lane as f64 + 0.5, 31 - lane, 32);
    let big = warp::shfl_xor_sync(FULL_MASK, (lane as i64 - 16) << 40, 5, 32);
    let fsum = warp::reduce_add_f32(lane as f32);
    let all = warp::all_sync(FULL_MASK, lane < 32);
    let any = warp::any_sync(FULL_MASK, lane == 7);
    let none = warp::any_sync(FULL_MASK, lane > 40);
    let ballot = warp::ballot_sync(FULL_MASK, lane.is_multiple_of(3));
    let active = warp::active_mask();
    let flags = all as u64 | (any as u64) << 1 | (none as u64) << 2;
    let r = [
        bcast as u64 | (up as u64) << 32,
        down as u64 | (xor as u64) << 32,
        f.to_bits(),
        big as u64,
        fsum.to_bits() as u64 | (warp::reduce_add_u32(lane) as u64) << 32,
        flags,
        ballot as u64 | (active as u64) << 32,
        // Divergent: only even lanes vote, with their own mask.
        if lane & 1 == 0 { warp::ballot_sync(0x5555_5555, lane & 3 == 0) as u64 } else { 0 },
    ];
    if let Some(o) = out.get_mut(thread::index()) {
        *o = r;
    }
}

/// Bit intrinsics on `x[i]`: `[popc, clz, brev, ffs]` of the u32 and of `x[i] << 20` as u64.
#[kernel]
pub fn bit_ops(x: &[u32], mut out: DisjointSlice<[u32; 8]>) {
    let i = thread::index();
    let v = x.get(i.get()).copied().unwrap_or(0);
    let w = (v as u64) << 20;
    let r = [
        warp::popc(v),
        warp::clz(v),
        warp::brev(v),
        warp::ffs(v),
        warp::popc(w),
        warp::clz(w),
        (warp::brev(w) >> 32) as u32,
        warp::ffs(w),
    ];
    if let Some(o) = out.get_mut(i) {
        *o = r;
    }
}

// ---------------------------------------------------------------------------------------------
// Printing, panics, launch bounds, dependencies

/// Prints one line from thread 0 of each block.
#[kernel]
pub fn hello(tag: u32, mut out: DisjointSlice<u32>) {
    let i = thread::index();
    if thread::thread_idx().x == 0 {
        dprintln!("hello from block {} (tag {tag}), pi ~ {:.3}", thread::block_idx().x, core::f32::consts::PI);
    }
    if let Some(o) = out.get_mut(i) {
        *o = tag;
    }
}

/// Reads `x[i + offset]`: panics with a bounds check past the end of `x`.
#[kernel]
pub fn out_of_bounds(offset: u32, x: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread::index();
    let v = x[i.get() + offset as usize];
    if let Some(o) = out.get_mut(i) {
        *o = v;
    }
}

/// `out[i] = x[idx[4i]] + … + x[idx[4i + 3]]`: a gather whose bounds checks wait for the index
/// reads (release builds move the reads above those checks, `ir/checked_chains.rs`); an index
/// past `x` is a kernel panic at this line either way.
#[kernel]
pub fn gather4(idx: &[u32], x: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread::index();
    if let Some(o) = out.get_mut(i) {
        let mut s = 0.0;
        for &j in &idx[4 * i.get()..4 * i.get() + 4] {
            s += x[j as usize];
        }
        *o = s;
    }
}

/// 3x3 convolution with zero padding, each tap read under the user's own test: release builds
/// test the taps' bounds checks once, before the taps (`ir/early_checks.rs`); a tap past
/// `input` is still a kernel panic at this line.
#[kernel]
pub fn taps3x3(input: &[f32], w: [f32; 9], mut out: DisjointSlice2d<f32>) {
    let (x, y) = thread::index_2d();
    let (cols, rows) = (out.cols(), out.rows());
    if let Some(o) = out.get_mut() {
        let mut acc = 0.0f32;
        for dy in 0..3 {
            for dx in 0..3 {
                let (xx, yy) = (x + dx, y + dy);
                if xx >= 1 && yy >= 1 && xx - 1 < cols && yy - 1 < rows {
                    acc += w[dy * 3 + dx] * input[(yy - 1) * cols + (xx - 1)];
                }
            }
        }
        *o = acc;
    }
}

/// Gray from interleaved RGB, one thread per pixel: its three reads are a run of checks on one
/// slice that release builds test by their ends (`ir/early_checks.rs`); a pixel past `rgb` is
/// still a kernel panic at the first read past it, each read on a line of its own.
#[kernel]
pub fn gray_of_rgb(rgb: &[u8], mut gray: DisjointSlice<u8>) {
    let i = thread::index();
    if let Some(g) = gray.get_mut(i) {
        let p = 3 * i.get();
        let r = rgb[p] as u32;
        let gr = rgb[p + 1] as u32;
        let b = rgb[p + 2] as u32;
        *g = ((77 * r + 150 * gr + 29 * b + 128) >> 8) as u8;
    }
}

/// Shuffles with `mask`, less the calling lane when `leave_out_self` is set: a kernel panic
/// (PTX leaves a `.sync` warp operation whose mask omits the executing lane undefined).
#[kernel]
pub fn shuffle_mask(mask: u32, leave_out_self: u32, mut out: DisjointSlice<u32>) {
    let i = thread::index();
    let me = 1u32 << thread::lane_id();
    let mask = if leave_out_self != 0 { mask & !me } else { mask | me };
    let v = warp::shfl_xor_sync(mask, i.get() as u32, 1, 32);
    if let Some(o) = out.get_mut(i) {
        *o = v;
    }
}

/// Thread `culprit` of each 64-thread block panics (out of bounds) before a barrier that the
/// others wait at; each other thread then writes its right neighbour's value.
#[kernel]
pub fn panic_before_barrier(culprit: u32, x: &[u32], mut out: DisjointSlice<u32>) {
    let t = thread::thread_idx().x as usize;
    let tile = shared_array!(u32, 64);
    let v = if t == culprit as usize { x[x.len()] } else { x.get(thread::index().get()).copied().unwrap_or(0) };
    tile.set(t % 64, v);
    sync_threads();
    let right = tile.get((t + 1) % 64);
    if let Some(o) = out.get_mut(thread::index()) {
        *o = right;
    }
}

/// `unwrap` on `None` when `x[i] == 0`, with a formatted `expect`-style message otherwise.
#[kernel]
pub fn unwrap_none(x: &[u32], mut out: DisjointSlice<u32>) {
    let i = thread::index();
    let v = x.get(i.get()).copied().unwrap_or(1);
    let q = 100u32.checked_div(v);
    if let Some(o) = out.get_mut(i) {
        *o = q.unwrap();
    }
}

/// Launch bounds reach the PTX as `.maxntid 256, 1, 1` and `.minnctapersm 2`.
#[kernel(launch_bounds(256, 2))]
pub fn bounded(mut out: DisjointSlice<u32>) {
    let i = thread::index();
    if let Some(o) = out.get_mut(i) {
        *o = i.get() as u32;
    }
}

/// Calls into the `shared-logic` crate (a no_std dependency compiled for the device too).
#[kernel]
pub fn collatz(x: &[u64], mut out: DisjointSlice<u32>) {
    let i = thread::index();
    if let (Some(&n), Some(o)) = (x.get(i.get()), out.get_mut(i)) {
        *o = shared_logic::collatz_steps(n);
    }
}

/// Elements of `big_static_shared`'s static array: 32 KiB of `f32`.
pub const BIG_TILE: usize = 8192;

/// 32 KiB of static shared memory: each thread writes `BIG_TILE / blockDim` slots, then reads
/// them back reversed. With 200 KiB of dynamic shared memory on top, a block needs more than
/// sm_90's 227 KiB and the launch is refused.
#[kernel]
pub fn big_static_shared(x: &[f32], mut out: DisjointSlice<f32>) {
    let tile = shared_array!(f32, BIG_TILE);
    let t = thread::thread_idx().x as usize;
    let bd = thread::block_dim().x as usize;
    let i = thread::index();
    let v = x.get(i.get()).copied().unwrap_or(0.0);
    let mut k = t;
    while k < BIG_TILE {
        tile.set(k, v + k as f32);
        k += bd;
    }
    sync_threads();
    let r = tile.get(BIG_TILE - 1 - t);
    if let Some(o) = out.get_mut(i) {
        *o = r;
    }
}

/// Elements of `big_local`'s per-thread array: 4 MiB of `u32`, far beyond the 512 KiB of
/// local memory a GPU thread can have.
pub const BIG_LOCAL: usize = 1 << 20;

/// A 4 MiB local array per thread: every launch is refused before it reaches the driver.
#[kernel]
pub fn big_local(n: u32, mut out: DisjointSlice<u32>) {
    let mut a = [0u32; BIG_LOCAL];
    let m = (n as usize).min(BIG_LOCAL);
    for (k, slot) in a.iter_mut().enumerate().take(m) {
        *slot = k as u32 ^ n;
    }
    let i = thread::index();
    let v = a[(i.get() * 7 + n as usize) % BIG_LOCAL];
    if let Some(o) = out.get_mut(i) {
        *o = v;
    }
}

/// `rounds` dependent LCG steps per thread from `x[i]`: busy work for a second stream.
#[kernel]
pub fn busy(rounds: u32, x: &[u32], mut out: DisjointSlice<u32>) {
    let i = thread::index();
    let mut v = x.get(i.get()).copied().unwrap_or(1);
    let mut r = 0;
    while r < rounds {
        v = v.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        r += 1;
    }
    if let Some(o) = out.get_mut(i) {
        *o = v;
    }
}

// ---------------------------------------------------------------------------------------------
// Conversions

/// Every saturating float → integer `as` cast of `x[i]` (f32) and `y[i]` (f64), as `u64` bits:
/// `[i32, u32, i64, u64]` of `x`, then of `y` (oxide-build lowers these to single `cvt.rzi`s).
#[kernel]
pub fn float_casts(x: &[f32], y: &[f64], mut out: DisjointSlice<[u64; 8]>) {
    let i = thread::index();
    if let (Some(&a), Some(&b), Some(o)) = (x.get(i.get()), y.get(i.get()), out.get_mut(i)) {
        *o = [
            a as i32 as u64,
            a as u32 as u64,
            a as i64 as u64,
            a as u64,
            b as i32 as u64,
            b as u32 as u64,
            b as i64 as u64,
            b as u64,
        ];
    }
}

// ---------------------------------------------------------------------------------------------
// Matrix arguments

/// `out(x, y) = input(y, x) + input(y, 0) + row y's sum`, on a 2-D launch over `out`'s columns
/// (y) and rows (x): `get`, indexing and `row` on a read-only matrix, `get` on atomics.
#[kernel]
pub fn matrix_flip(input: Matrix<u32>, out: Matrix<AtomicU32>) {
    let (y, x) = thread::index_2d();
    let (Some(&v), Some(row)) = (input.get(y, x), input.row(y)) else { return };
    if let Some(cell) = out.get(x, y) {
        cell.store(v + input[(y, 0)] + row.iter().sum::<u32>(), Ordering::Relaxed);
    }
}

/// `chunk_or` at every `(row, col)` of a grid one row and two columns larger than `input`, so
/// chunks run past a row's end and below the last row: thread `i` takes `(i / (cols + 2),
/// i % (cols + 2))` and stores its 16-, 8- and 12-byte chunks (vector, vector, element by
/// element where the matrix is aligned) with three different fills.
#[kernel]
pub fn matrix_chunks(input: Matrix<u32>, mut out: DisjointSlice<[u32; 9]>) {
    let i = thread::index();
    let span = input.cols() + 2;
    let (row, col) = (i.get() / span, i.get() % span);
    if let Some(o) = out.get_mut(i) {
        let a = input.chunk_or::<4>(row, col, u32::MAX);
        let b = input.chunk_or::<2>(row, col, 7);
        let c = input.chunk_or::<3>(row, col, 9);
        *o = [a[0], a[1], a[2], a[3], b[0], b[1], c[0], c[1], c[2]];
    }
}

// ---------------------------------------------------------------------------------------------
// Golden set: the device API over edge-case inputs, compared GPU against CPU (`golden`). One
// kernel per value type with an operation selector `op` (each launch runs one operation) keeps
// the module, and the debug build's ptxas time, small. `golden::F32_OPS` etc. name the
// operations in the order of these `match`es.

/// The generic math operations of the golden set, numbered as `golden::FLOAT_OPS`: the 36
/// functions of [`math::Float`] (`sin_cos` as two), then the arithmetic operators.
#[inline(always)]
fn golden_math<F: math::Float>(op: u32, a: F, b: F, c: F, n: i32) -> F {
    match op {
        0 => math::sqrt(a),
        1 => math::rsqrt(a),
        2 => math::cbrt(a),
        3 => math::exp(a),
        4 => math::exp2(a),
        5 => math::exp10(a),
        6 => math::expm1(a),
        7 => math::log(a),
        8 => math::log2(a),
        9 => math::log10(a),
        10 => math::log1p(a),
        11 => math::sin(a),
        12 => math::cos(a),
        13 => math::tan(a),
        14 => math::asin(a),
        15 => math::acos(a),
        16 => math::atan(a),
        17 => math::sinh(a),
        18 => math::cosh(a),
        19 => math::tanh(a),
        20 => math::erf(a),
        21 => math::erfc(a),
        22 => math::floor(a),
        23 => math::ceil(a),
        24 => math::round(a),
        25 => math::trunc(a),
        26 => math::abs(a),
        27 => math::pow(a, b),
        28 => math::atan2(a, b),
        29 => math::hypot(a, b),
        30 => math::min(a, b),
        31 => math::max(a, b),
        32 => math::copysign(a, b),
        33 => math::fma(a, b, c),
        34 => math::powi(a, n),
        35 => math::sin_cos(a).0,
        36 => math::sin_cos(a).1,
        37 => a + b,
        38 => a - b,
        39 => a * b,
        40 => a / b,
        _ => -a,
    }
}

/// The number of operations of `golden_math`; `golden_f32`'s fast intrinsics follow them.
pub const GOLDEN_MATH_OPS: u32 = 42;

/// `math::fast`'s intrinsics, numbered as `golden::FAST_OPS`.
#[inline(always)]
fn golden_fast(op: u32, a: f32, b: f32) -> f32 {
    use oxide_rt::device::math::fast;
    match op {
        0 => fast::exp2(a),
        1 => fast::log2(a),
        2 => fast::sin(a),
        3 => fast::cos(a),
        4 => fast::rsqrt(a),
        5 => fast::rcp(a),
        6 => fast::tanh(a),
        7 => fast::exp(a),
        8 => fast::log(a),
        9 => fast::tan(a),
        10 => fast::div(a, b),
        _ => fast::pow(a, b),
    }
}

/// `out[i]` = operation `op` of `(a[i], b[i], c[i], n[i])`: `golden_math`'s below
/// `GOLDEN_MATH_OPS`, then `golden_fast`'s.
#[kernel]
pub fn golden_f32(op: u32, a: &[f32], b: &[f32], c: &[f32], n: &[i32], mut out: DisjointSlice<f32>) {
    let i = thread::index();
    let k = i.get();
    if let (Some(&x), Some(&y), Some(&z), Some(&p), Some(o)) = (a.get(k), b.get(k), c.get(k), n.get(k), out.get_mut(i))
    {
        *o = if op < GOLDEN_MATH_OPS { golden_math(op, x, y, z, p) } else { golden_fast(op - GOLDEN_MATH_OPS, x, y) };
    }
}

/// As `golden_f32` in double precision (no fast intrinsics).
#[kernel]
pub fn golden_f64(op: u32, a: &[f64], b: &[f64], c: &[f64], n: &[i32], mut out: DisjointSlice<f64>) {
    let i = thread::index();
    let k = i.get();
    if let (Some(&x), Some(&y), Some(&z), Some(&p), Some(o)) = (a.get(k), b.get(k), c.get(k), n.get(k), out.get_mut(i))
    {
        *o = golden_math(op, x, y, z, p);
    }
}

/// Conversion `op` (numbered as `golden::CONV_OPS`) of `x[i]` (f32), `y[i]` (f64) or `n[i]`
/// (an integer), as the bits of the result zero-extended to `u64` (signed results sign-extended).
#[kernel]
pub fn golden_conv(op: u32, x: &[f32], y: &[f64], n: &[u64], mut out: DisjointSlice<u64>) {
    let i = thread::index();
    let k = i.get();
    if let (Some(&a), Some(&d), Some(&m), Some(o)) = (x.get(k), y.get(k), n.get(k), out.get_mut(i)) {
        *o = match op {
            0 => a as i8 as u64,
            1 => a as u8 as u64,
            2 => a as i16 as u64,
            3 => a as u16 as u64,
            4 => a as i32 as u64,
            5 => a as u32 as u64,
            6 => a as i64 as u64,
            7 => a as u64,
            8 => d as i8 as u64,
            9 => d as u8 as u64,
            10 => d as i16 as u64,
            11 => d as u16 as u64,
            12 => d as i32 as u64,
            13 => d as u32 as u64,
            14 => d as i64 as u64,
            15 => d as u64,
            16 => (a as f64).to_bits(),
            17 => (d as f32).to_bits() as u64,
            18 => (m as i32 as f32).to_bits() as u64,
            19 => (m as u32 as f32).to_bits() as u64,
            20 => (m as i64 as f32).to_bits() as u64,
            21 => (m as f32).to_bits() as u64,
            22 => (m as i32 as f64).to_bits(),
            23 => (m as u32 as f64).to_bits(),
            24 => (m as i64 as f64).to_bits(),
            _ => (m as f64).to_bits(),
        };
    }
}

/// Per-warp shuffle parameters of `golden_warp` (source lane, delta or lane mask): warp `w`
/// uses width `1 << (w % 6)` and parameter `GOLDEN_SHFL_PARAMS[(w / 6) % 8]`.
pub const GOLDEN_SHFL_PARAMS: [u32; 8] = [0, 1, 2, 3, 5, 17, 31, 40];

/// The lanes of warp `w` that take part in `golden_warp`'s partial-mask votes (never empty).
#[inline(always)]
pub fn golden_vote_mask(w: u32) -> u32 {
    (w.wrapping_mul(0x9e37_79b9) ^ (w << 7)) | 1 << (w % 32)
}

/// `golden_warp`'s predicate for lane value `v` in warp `w`: none, some or all lanes hold it,
/// depending on `w % 5`.
#[inline(always)]
pub fn golden_pred(v: u64, w: u32) -> bool {
    ((v as u32) >> 2) < (w % 5) * 0x1000_0000
}

#[inline(always)]
fn golden_shfl<T: warp::Shuffle>(mode: u32, v: T, param: u32, width: u32) -> T {
    match mode {
        0 => warp::shfl_sync(FULL_MASK, v, param, width),
        1 => warp::shfl_up_sync(FULL_MASK, v, param, width),
        2 => warp::shfl_down_sync(FULL_MASK, v, param, width),
        _ => warp::shfl_xor_sync(FULL_MASK, v, param, width),
    }
}

/// Warp operation `op` (numbered as `golden::WARP_OPS`) on `x[i]`, in whole warps.
#[kernel]
pub fn golden_warp(op: u32, x: &[u64], mut out: DisjointSlice<u64>) {
    let i = thread::index();
    let v = x.get(i.get()).copied().unwrap_or(0);
    let w = (i.get() / 32) as u32;
    let (width, param) = (1u32 << (w % 6), GOLDEN_SHFL_PARAMS[((w / 6) % 8) as usize]);
    let lane = thread::lane_id();
    let pred = golden_pred(v, w);
    let r = match op {
        0..=3 => golden_shfl(op, v as u32, param, width) as u64,
        4..=7 => golden_shfl(op - 4, v, param, width),
        8..=11 => golden_shfl(op - 8, f32::from_bits(v as u32), param, width).to_bits() as u64,
        12..=15 => golden_shfl(op - 12, f64::from_bits(v), param, width).to_bits(),
        16 => warp::ballot_sync(FULL_MASK, pred) as u64,
        17 => warp::all_sync(FULL_MASK, pred) as u64,
        18 => warp::any_sync(FULL_MASK, pred) as u64,
        19 => {
            // Only the lanes of the mask vote; the others write 0.
            let m = golden_vote_mask(w);
            if m >> lane & 1 == 1 {
                warp::ballot_sync(m, pred) as u64
                    | (warp::all_sync(m, pred) as u64) << 32
                    | (warp::any_sync(m, pred) as u64) << 33
            } else {
                0
            }
        }
        20 => warp::reduce_add_u32(v as u32) as u64,
        21 => warp::reduce_add_f32(f32::from_bits(v as u32)).to_bits() as u64,
        _ => warp::active_mask() as u64,
    };
    if let Some(o) = out.get_mut(i) {
        *o = r;
    }
}

/// Integer operation `op` (numbered as `golden::BIT_OPS`) on `x[i]`: CUDA's bit intrinsics for
/// the four integer types, then core's bit methods and shifts (shift amounts from the high half).
#[kernel]
pub fn golden_bits(op: u32, x: &[u64], mut out: DisjointSlice<u64>) {
    let i = thread::index();
    let v = x.get(i.get()).copied().unwrap_or(0);
    let (a, s) = (v as u32, (v >> 32) as u32);
    let r = match op {
        0 => warp::popc(a) as u64,
        1 => warp::clz(a) as u64,
        2 => warp::brev(a) as u64,
        3 => warp::ffs(a) as u64,
        4 => warp::popc(a as i32) as u64,
        5 => warp::clz(a as i32) as u64,
        6 => warp::brev(a as i32) as u32 as u64,
        7 => warp::ffs(a as i32) as u64,
        8 => warp::popc(v) as u64,
        9 => warp::clz(v) as u64,
        10 => warp::brev(v),
        11 => warp::ffs(v) as u64,
        12 => warp::popc(v as i64) as u64,
        13 => warp::clz(v as i64) as u64,
        14 => warp::brev(v as i64) as u64,
        15 => warp::ffs(v as i64) as u64,
        16 => a.trailing_zeros() as u64,
        17 => v.trailing_zeros() as u64,
        18 => a.rotate_left(s) as u64,
        19 => v.swap_bytes(),
        20 => a.wrapping_shl(s) as u64,
        21 => (a as i32).wrapping_shr(s) as u32 as u64,
        22 => v.wrapping_shr(s),
        _ => (a as u64 * s as u64) >> 32,
    };
    if let Some(o) = out.get_mut(i) {
        *o = r;
    }
}

/// Every atomic read-modify-write over `x[i]` (integers) and `f[i]`/`d[i]` (floats) into
/// global accumulators (see `golden::ATOMIC_OPS` for which slot holds what), plus block sums
/// through shared-memory atomics that thread 0 adds into `u32s[4]` and `f32s[1]`.
#[allow(clippy::too_many_arguments)] // one accumulator array per atomic type
#[kernel]
pub fn golden_atomics(
    x: &[u64],
    f: &[f32],
    d: &[f64],
    u32s: &[AtomicU32],
    i32s: &[AtomicI32],
    u64s: &[AtomicU64],
    i64s: &[AtomicI64],
    f32s: &[AtomicF32],
    f64s: &[AtomicF64],
) {
    let block_u = shared_array!(u32, 1);
    let block_f = shared_array!(f32, 1);
    let t = thread::thread_rank();
    if t == 0 {
        block_u.set(0, 0);
        block_f.set(0, 0.0);
    }
    sync_threads();
    let k = thread::index().get();
    let slots = (u32s.get(0..7), i32s.get(0..3), u64s.get(0..7), i64s.get(0..3), f32s.get(0..2), f64s.get(0..1));
    // No early return: every thread must reach the second barrier.
    if let ((Some(&v), Some(&fv), Some(&dv)), (Some(u), Some(s), Some(w), Some(l), Some(fa), Some(da))) =
        ((x.get(k), f.get(k), d.get(k)), slots)
    {
        let (a, b) = (v as u32, (v >> 32) as u32);
        u[0].atomic_add(a, Scope::Device);
        u[1].atomic_min(a, Scope::Device);
        u[2].atomic_max(a, Scope::System);
        u[3].atomic_and(a | b, Scope::Device);
        u[5].atomic_or(a & b, Scope::Device);
        u[6].atomic_xor(a, Scope::Device);
        s[0].atomic_add(a as i32, Scope::Device);
        s[1].atomic_min(a as i32, Scope::Device);
        s[2].atomic_max(a as i32, Scope::Block);
        w[0].atomic_add(v, Scope::Device);
        w[1].atomic_min(v, Scope::Device);
        w[2].atomic_max(v, Scope::Device);
        w[3].atomic_and(v | v.rotate_left(17), Scope::Device);
        w[4].atomic_or(v & v.rotate_left(17), Scope::System);
        w[5].atomic_xor(v, Scope::Device);
        w[6].atomic_sub(v, Scope::Device);
        l[0].atomic_add(v as i64, Scope::Device);
        l[1].atomic_min(v as i64, Scope::Device);
        l[2].atomic_max(v as i64, Scope::Device);
        fa[0].atomic_add(fv, Scope::Device);
        da[0].atomic_add(dv, Scope::Device);
        block_u.atomic(0).atomic_add(a, Scope::Block);
        block_f.atomic(0).atomic_add(fv, Scope::Block);
    }
    sync_threads();
    if let (0, Some(u), Some(fa)) = (t, u32s.get(4), f32s.get(1)) {
        u.atomic_add(block_u.get(0), Scope::Device);
        fa.atomic_add(block_f.get(0), Scope::Device);
    }
}
