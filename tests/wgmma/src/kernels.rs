//! One kernel per `wgmma.mma_async` shape and element type; `mode` picks the swizzle
//! (0 none, 1 32B, 2 64B, 3 128B). One warpgroup computes `C = A[64..128] * B^T`: A is 128 x K
//! and B is N x K (both K-major, row-major on the host; K = 64 16-bit or 128 FP8 elements, 128
//! bytes a row), written into shared memory in the layout `KMajor` describes, then multiplied
//! in four steps (k16, or k32 on FP8) — the first overwriting an accumulator full of garbage
//! (`accumulate = false`), the rest accumulating. Thread `t` writes
//! its `N / 2` accumulator elements in order; the host places them with `WgAcc::coord`.
use oxide_rt::device::wgmma::*;
use oxide_rt::device::*;

/// Rows of the A tile (the product uses the second 64, so descriptors start at row 64).
pub const A_ROWS: usize = 128;
/// The depth of the product on 16-bit elements: four k16 steps.
pub const K: usize = 64;
/// The depth on FP8: four k32 steps (the same 128 bytes a row).
pub const K_FP8: usize = 128;
/// Dynamic shared memory: A and the largest B, plus the room to align them to 1024 bytes.
pub const SHARED_BYTES: usize = (A_ROWS + 256) * K * 2 + 1024;

#[inline(always)]
fn product<T: WgmmaElem, S: WgShape, SW: Swizzle, const N: usize, const K: usize>(a: &[T], b: &[T]) -> WgAcc<S> {
    let smem = aligned(dynamic_shared::<T>(), 1024);
    let (sa, sb) = smem.split_at(A_ROWS * K);
    let t = thread::thread_rank() as usize;
    for i in (t..A_ROWS * K).step_by(128) {
        sa.set(KMajor::<T, SW, A_ROWS, K>::index(i / K, i % K), a[i]);
    }
    for i in (t..N * K).step_by(128) {
        sb.set(KMajor::<T, SW, N, K>::index(i / K, i % K), b[i]);
    }
    fence_proxy_async();
    sync_threads();
    let mut acc = WgAcc::<S>::zero();
    for i in 0..WgAcc::<S>::LEN {
        acc.set(i, 1.0e30);
    }
    let mut run = acc.start();
    for kk in 0..K / T::WG_K {
        let da = KMajor::<T, SW, A_ROWS, K>::desc(sa, 64, kk * T::WG_K);
        let db = KMajor::<T, SW, N, K>::desc(sb, 0, kk * T::WG_K);
        run.mma_async(da, db, kk > 0);
    }
    run.finish()
}

macro_rules! kernels {
    ($($name:ident: $t:ty, $shape:ty, $n:literal, $k:expr;)*) => {$(
        #[doc = concat!("64 x ", stringify!($n), " x ", stringify!($k), " on ", stringify!($t), " in swizzle mode `mode`.")]
        #[kernel(block(128))]
        // The n256 bodies (four swizzles of a 64 x 256 product) are too large for the inliner.
        #[inline(always)]
        pub fn $name(mode: u32, a: &[$t], b: &[$t], mut out: DisjointChunks<f32, { $n / 2 }>) {
            let acc = match mode {
                0 => product::<$t, $shape, NoSwizzle, $n, { $k }>(a, b),
                1 => product::<$t, $shape, Swizzle32B, $n, { $k }>(a, b),
                2 => product::<$t, $shape, Swizzle64B, $n, { $k }>(a, b),
                _ => product::<$t, $shape, Swizzle128B, $n, { $k }>(a, b),
            };
            if let Some(o) = out.get_mut(thread::index()) {
                for (i, v) in o.iter_mut().enumerate() {
                    *v = acc.get(i);
                }
            }
        }
    )*};
}
kernels! {
    wgmma_bf16_n64: Bf16, M64N64K16, 64, K;
    wgmma_bf16_n128: Bf16, M64N128K16, 128, K;
    wgmma_bf16_n256: Bf16, M64N256K16, 256, K;
    wgmma_f16_n64: F16, M64N64K16, 64, K;
    wgmma_f16_n128: F16, M64N128K16, 128, K;
    wgmma_f16_n256: F16, M64N256K16, 256, K;
    wgmma_e4m3_n64: E4M3, M64N64K32, 64, K_FP8;
    wgmma_e4m3_n128: E4M3, M64N128K32, 128, K_FP8;
    wgmma_e4m3_n256: E4M3, M64N256K32, 256, K_FP8;
    wgmma_e5m2_n64: E5M2, M64N64K32, 64, K_FP8;
    wgmma_e5m2_n128: E5M2, M64N128K32, 128, K_FP8;
    wgmma_e5m2_n256: E5M2, M64N256K32, 256, K_FP8;
}

/// Whether the descriptors of a ring of tiles (checked once) equal those built tile by tile
/// (each checked), for every tile, k-slice and swizzle mode, by column (`desc::<K0>`) and by
/// step (`step_desc::<J>`), on bf16 and on FP8 (32-deep steps): thread 0 writes 1 when they do.
/// Runs on the CPU executor too (descriptors are plain arithmetic).
#[kernel(block(32))]
pub fn ring_descriptors(mut out: DisjointSlice<u32>) {
    fn same<SW: Swizzle>(view: SharedSlice<Bf16>) -> bool {
        type L<SW> = KMajor<Bf16, SW, 64, 64>;
        let ring = L::<SW>::ring::<3>(view);
        let mut ok = true;
        for i in 0..6 {
            let tile = ring.tile(i);
            let pairs = [
                (ring.desc::<0>(i), L::<SW>::desc(tile, 0, 0)),
                (ring.desc::<16>(i), L::<SW>::desc(tile, 0, 16)),
                (ring.desc::<32>(i), L::<SW>::desc(tile, 0, 32)),
                (ring.desc::<48>(i), L::<SW>::desc(tile, 0, 48)),
                (ring.step_desc::<1>(i), L::<SW>::desc(tile, 0, 16)),
                (ring.step_desc::<3>(i), L::<SW>::desc(tile, 0, 48)),
            ];
            for (r, d) in pairs {
                ok &= r.bits() == d.bits() && r.rows() == d.rows() && r.rows() == 64;
            }
        }
        ok
    }
    fn same_fp8<SW: Swizzle>(view: SharedSlice<E4M3>) -> bool {
        type L<SW> = KMajor<E4M3, SW, 64, 128>;
        let ring = L::<SW>::ring::<3>(view);
        let mut ok = true;
        for i in 0..6 {
            let tile = ring.tile(i);
            let pairs = [
                (ring.step_desc::<0>(i), L::<SW>::desc(tile, 0, 0)),
                (ring.step_desc::<1>(i), L::<SW>::desc(tile, 0, 32)),
                (ring.step_desc::<2>(i), L::<SW>::desc(tile, 0, 64)),
                (ring.step_desc::<3>(i), L::<SW>::desc(tile, 0, 96)),
                (ring.desc::<64>(i), L::<SW>::desc(tile, 0, 64)),
            ];
            for (r, d) in pairs {
                ok &= r.bits() == d.bits() && r.rows() == d.rows() && r.rows() == 64;
            }
        }
        ok
    }
    let view = aligned(dynamic_shared::<Bf16>(), 1024);
    let ok =
        same::<NoSwizzle>(view) && same::<Swizzle32B>(view) && same::<Swizzle64B>(view) && same::<Swizzle128B>(view);
    let view = aligned(dynamic_shared::<E4M3>(), 1024);
    let ok = ok
        && same_fp8::<NoSwizzle>(view)
        && same_fp8::<Swizzle32B>(view)
        && same_fp8::<Swizzle64B>(view)
        && same_fp8::<Swizzle128B>(view);
    if let Some(o) = out.get_mut(thread::index()) {
        *o = ok as u32;
    }
}

/// A descriptor the layout cannot give: `case` 0 a k-slice past the tile, 1 a row not a
/// multiple of 8, 2 a misaligned tile, 3 a view shorter than the tile, 4 an FP8 slice at a k
/// that is not a multiple of 32. Each panics, which the
/// launcher returns as `Err`.
#[kernel(block(32))]
pub fn bad_descriptor(case: u32, mut out: DisjointSlice<u32>) {
    type L = KMajor<Bf16, Swizzle128B, 64, 64>;
    let view = aligned(dynamic_shared::<Bf16>(), 1024);
    let bits = match case {
        0 => L::desc(view, 0, 64).bits(),
        1 => L::desc(view, 4, 0).bits(),
        2 => L::desc(view.split_at(8).1, 0, 0).bits(),
        3 => L::desc(view.split_at(64).0, 0, 0).bits(),
        // FP8 slices are 32 deep: one at k 16 is not a slice.
        _ => KMajor::<E4M3, Swizzle128B, 64, 128>::desc(aligned(dynamic_shared::<E4M3>(), 1024), 0, 16).bits(),
    };
    if let Some(o) = out.get_mut(thread::index()) {
        *o = bits as u32;
    }
}

/// Each thread writes the role `warpgroup_registers` gives it (one producer warpgroup):
/// `1000 + i` for producer `i`, `2000 + c` for consumer `c`. With `short_warp`, the upper half
/// of warp 0 returns first, so warpgroup 0 reaches it with a warp missing lanes and must panic
/// (all of it, before any `setmaxnreg`). `launch_bounds` gives ptxas the register count at
/// entry, without which it ignores `setmaxnreg` (as it does in builds whose panics format
/// messages, a call it cannot see across: the roles hold either way).
#[kernel(launch_bounds(384, 1))]
pub fn warpgroup_roles(short_warp: u32, mut out: DisjointSlice<u32>) {
    if short_warp != 0 && thread::thread_rank() < 32 && thread::lane_id() >= 16 {
        return;
    }
    let code = match warpgroup_registers::<1, 40, 232>() {
        Role::Producer(i) => 1000 + i,
        Role::Consumer(c) => 2000 + c,
    };
    if let Some(o) = out.get_mut(thread::index()) {
        *o = code;
    }
}

/// Tile-rows per group of [`persistent_tiles`]' order.
pub const PERSISTENT_GROUP: usize = 3;

/// Through `DisjointPersistentWgmmaTiles` (128 x 64 tiles, consumers from warpgroup 1), each
/// thread stores `1 +` its linear block index into every element it owns, tile after tile
/// (pairs where it can), and the number it stored into `counts`: every element holding its
/// owner's tag and the counts summing to the matrix's size show that the blocks' rounds
/// partition it, each element written once.
#[kernel(block(384))]
pub fn persistent_tiles(
    mut c: DisjointPersistentWgmmaTiles<u32, 128, 64, 1, PERSISTENT_GROUP>,
    mut counts: DisjointSlice<u32>,
) {
    let (b, g) = (thread::block_idx(), thread::grid_dim());
    let tag = 1 + (b.z * g.y + b.y) * g.x + b.x;
    let mut n = 0;
    while let Some(mut tile) = c.next_tile() {
        for i in (0..32).step_by(2) {
            if let Some(p) = tile.pair_mut(i) {
                *p = [tag; 2];
                n += 2;
                continue;
            }
            for j in [i, i + 1] {
                if let Some(o) = tile.get_mut(j) {
                    *o = tag;
                    n += 1;
                }
            }
        }
    }
    if let Some(o) = counts.get_mut(thread::index()) {
        *o = n;
    }
}

/// The value `persistent_store` gives element `i` of warpgroup thread `t` in round `round`: an
/// integer below 2048, exact in f16.
pub fn store_value(t: usize, i: usize, round: usize) -> f32 {
    ((t * 131 + i * 7 + round * 13) % 2048) as f32
}

/// Each consumer warpgroup fills an accumulator with [`store_value`]s and writes it with the
/// collective `WgmmaTile::store`, tile after tile; with `skew`, lane 0 of each warp takes one
/// tile more first, so its warp's lanes reach `store` on tiles of different rounds (a panic).
#[kernel(block(384))]
pub fn persistent_store(skew: u32, mut c: DisjointPersistentWgmmaTiles<F16, 128, 64, 1, PERSISTENT_GROUP>) {
    if skew != 0 && thread::lane_id() == 0 {
        let _ = c.next_tile();
    }
    let t = thread::thread_rank() as usize % 128;
    let mut round = 0;
    while let Some(tile) = c.next_tile() {
        let mut acc = WgAcc::<M64N64K16>::zero();
        for i in 0..WgAcc::<M64N64K16>::LEN {
            acc.set(i, store_value(t, i, round));
        }
        tile.store(&acc);
        round += 1;
    }
}
