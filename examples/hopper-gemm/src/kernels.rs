//! Compiled twice: for the host (typed launchers; the CPU executor refuses TMA and wgmma with an
//! Err) and for nvptx64 sm_90a (PTX).
use oxide_rt::device::wgmma::*;
use oxide_rt::device::*;

/// Consumer warpgroups per block, each computing 64 rows of C. Two: a third would need 512
/// threads, which leave 128 registers per thread at launch — ptxas allocates for that limit
/// (`setmaxnreg` moves registers at run time only), too few for 128 accumulators.
pub const CONSUMERS: usize = 2;
/// Rows of C per block.
pub const BM: usize = 64 * CONSUMERS;
/// Columns of C per block: one m64n256k16 accumulator per consumer warpgroup.
pub const BN: usize = 256;
/// Bytes of each row of a k-tile: one 128-byte swizzle row (the TMA box's inner extent), 64
/// 16-bit or 128 FP8 elements — four wgmmas, each 32 bytes deep.
pub const BK_BYTES: usize = 128;

/// Depth of one k-tile, in elements of `T`.
pub const fn bk<T>() -> usize {
    BK_BYTES / core::mem::size_of::<T>()
}
/// k-tiles in shared memory (48 KiB each, whatever the element): TMA fills up to `STAGES` ahead
/// of the multiply.
pub const STAGES: usize = 4;
/// Warpgroup 0 produces (one thread issues the TMA loads), the others consume.
pub const FIRST_CONSUMER: usize = 1;
/// Threads per block: the producer and the consumer warpgroups.
pub const THREADS: u32 = 128 * (1 + CONSUMERS as u32);
/// Rows of A per TMA box: the block's whole k-tile of A (one box filling every consumer's
/// tile; two 64-row boxes measured 0.80-0.85 of its speed on the H200).
pub const A_BOX_ROWS: usize = BM;
/// Rows of A a consumer warpgroup multiplies (its wgmma tile).
const A_PART_ROWS: usize = 64;

/// Dynamic shared memory per block (193 KiB): the stages plus room to align them to 1024 bytes.
pub const SHARED_BYTES: usize = STAGES * (CONSUMERS * A_PART_ROWS + BN) * BK_BYTES + 1024;

/// A consumer's part of A's k-tile (64 rows x `BK`); the consumers' parts lie one after the
/// other, so one TMA box of `BM` rows fills them all (the 128-byte swizzle repeats every 8 rows).
type LayoutA<T, const BK: usize> = KMajor<T, Swizzle128B, A_PART_ROWS, BK>;
/// B's k-tile: 256 rows of `bt` (columns of C) x `BK`.
type LayoutB<T, const BK: usize> = KMajor<T, Swizzle128B, BN, BK>;

/// An element type the GEMM runs on: bf16, f16, FP8 E4M3.
pub trait Elem: WgmmaElem {}
impl Elem for Bf16 {}
impl Elem for F16 {}
impl Elem for E4M3 {}

/// `C = A * B` with A (`m x k`) and `bt` = B transposed (`n x k`) behind TMA maps of 128-byte
/// wide, 128-byte-swizzled boxes (`BK` elements; 128 rows of A, 256 rows of `bt`), so both
/// operands land K-major as wgmma reads them; C in `O` (the element type, or bf16 for FP8).
/// `k` is A's and `bt`'s column count.
///
/// Persistent: the launch has one block per SM and each block takes C's 128 x 256 tiles in
/// turn (`c.next_tile()`). Warp specialisation: one thread of warpgroup 0 streams k-tiles into
/// a `STAGES`-deep ring with TMA, each stage's `full` barrier counting the bytes in; the
/// consumer warpgroups wait for a stage, multiply it (four `wgmma.m64n256k16`, k32 on FP8, one group)
/// while the next stages load, and — once their group of the previous k-tile has finished —
/// release that stage on its `empty` barrier (one arrival per warp), which the producer waits
/// for before refilling it. The ring runs on across tiles, so the producer loads the next tile's
/// first k-tiles while the consumers store the last one. `warpgroup_registers` (`setmaxnreg`)
/// moves registers from the producer to the consumers, which hold 128 accumulators each.
#[inline(always)]
fn gemm<T: Elem, O: WgmmaOut, const BK: usize, const GROUP: usize>(
    a: TensorMap<T, 2>,
    bt: TensorMap<T, 2>,
    k: u32,
    c: &mut DisjointPersistentWgmmaTiles<O, BM, BN, FIRST_CONSUMER, GROUP>,
) {
    const NC: usize = CONSUMERS;
    const A_TILES: usize = CONSUMERS * STAGES;
    const { assert!(BK * core::mem::size_of::<T>() == BK_BYTES, "a k-tile's rows are 128 bytes") };
    let (a_tile, b_tile) = (A_PART_ROWS * BK, BN * BK);
    let smem = aligned(dynamic_shared::<T>(), 1024);
    // Uniform over the launch: no thread reaches a barrier.
    if smem.len() < STAGES * (NC * a_tile + b_tile) {
        return;
    }
    let (sa, sb) = smem.split_at(A_TILES * a_tile);
    let ring_a = LayoutA::<T, BK>::ring::<A_TILES>(sa);
    let ring_b = LayoutB::<T, BK>::ring::<STAGES>(sb);
    let full = mbarriers!(STAGES).init_async(1);
    let empty = mbarriers!(STAGES).init_async(4 * NC as u32);
    let t = thread::thread_rank() as usize;
    let k_tiles = (k as usize).div_ceil(BK);
    // k-tiles through the ring so far, over all of this block's tiles: `step % STAGES` is the
    // next one's stage, `step / STAGES` how often that stage was filled before.
    let mut step = 0usize;

    let Role::Consumer(consumer) = warpgroup_registers::<{ FIRST_CONSUMER as u32 }, 40, 232>() else {
        if t == 0 {
            let bytes = a.box_bytes() + bt.box_bytes();
            while let Some(tile) = c.next_tile() {
                let (row0, col0) = tile.origin();
                for kt in 0..k_tiles {
                    let (s, use_) = (step % STAGES, step / STAGES);
                    if use_ > 0 {
                        // Every consumer is done with this stage's previous k-tile.
                        empty.get(s).wait_parity((use_ - 1) as u32 % 2);
                    }
                    let bar = full.get(s);
                    bar.arrive_expect_tx(bytes);
                    let k0 = (kt * BK) as i32;
                    a.load(ring_a.tiles(NC * s, NC), [k0, row0 as i32], bar);
                    bt.load(ring_b.tile(s), [k0, col0 as i32], bar);
                    step += 1;
                }
            }
        }
        return;
    };

    let part = consumer as usize % NC;
    while let Some(tile) = c.next_tile() {
        let mut acc = WgAcc::<M64N256K16>::zero().start();
        for kt in 0..k_tiles {
            let s = step % STAGES;
            full.get(s).wait_parity((step / STAGES) as u32 % 2);
            // Nothing but wgmmas between the fence and the commit: ptxas keeps them one
            // asynchronous group (a branch in between, e.g. a bounds check, serialises them).
            let (ta, tb) = (NC * s + part, s);
            fence();
            acc.mma_async(ring_a.step_desc::<0>(ta), ring_b.step_desc::<0>(tb), kt > 0);
            acc.mma_async(ring_a.step_desc::<1>(ta), ring_b.step_desc::<1>(tb), true);
            acc.mma_async(ring_a.step_desc::<2>(ta), ring_b.step_desc::<2>(tb), true);
            acc.mma_async(ring_a.step_desc::<3>(ta), ring_b.step_desc::<3>(tb), true);
            // Keep this k-tile's group in flight; the previous one is done, so its stage is free.
            // (Waiting for this group and freeing its stage at once measured the same on the H200.)
            acc.commit_wait::<1>();
            if kt > 0 && thread::lane_id() == 0 {
                empty.get((step - 1) % STAGES).arrive();
            }
            step += 1;
        }
        let acc = acc.finish();
        // Every group is done: the tile's last stage is free for the next tile's loads.
        if k_tiles > 0 && thread::lane_id() == 0 {
            empty.get((step - 1) % STAGES).arrive();
        }

        // The quads trade pairs and store rows of 16 bytes (see `WgmmaTile::store`).
        tile.store(&acc);
    }
}

/// Tile-rows per group of the tile order (see `DisjointPersistentWgmmaTiles`): blocks working at
/// the same time share rows of A and columns of B in L2.
pub const GROUP: usize = 8;

/// `C = A * B` in bf16 (f32 accumulation): `a` maps A (`m x k`), `bt` maps B transposed
/// (`n x k`), both row-major with boxes of 64 columns x 128 rows (`a`) / 256 rows (`bt`) and
/// 128-byte swizzle (the host builds them); C is `m x n` row-major. Launch at most one block
/// per SM: each block of three warpgroups, a TMA producer and two wgmma consumers, computes
/// 128 x 256 tiles of C in turn (see `gemm`).
#[kernel(block(THREADS), launch_bounds(384, 1))]
pub fn hopper_gemm_bf16(
    a: TensorMap<Bf16, 2>,
    bt: TensorMap<Bf16, 2>,
    k: u32,
    mut c: DisjointPersistentWgmmaTiles<Bf16, BM, BN, FIRST_CONSUMER, GROUP>,
) {
    gemm::<_, _, 64, GROUP>(a, bt, k, &mut c);
}

/// [`hopper_gemm_bf16`] on f16.
#[kernel(block(THREADS), launch_bounds(384, 1))]
pub fn hopper_gemm_f16(
    a: TensorMap<F16, 2>,
    bt: TensorMap<F16, 2>,
    k: u32,
    mut c: DisjointPersistentWgmmaTiles<F16, BM, BN, FIRST_CONSUMER, GROUP>,
) {
    gemm::<_, _, 64, GROUP>(a, bt, k, &mut c);
}

/// [`hopper_gemm_bf16`] on FP8 E4M3 inputs (`wgmma` k32, 128 of them per 128-byte k-tile row),
/// f32 accumulation, C in bf16 — what an FP8 linear layer with unit scales computes.
#[kernel(block(THREADS), launch_bounds(384, 1))]
pub fn hopper_gemm_e4m3(
    a: TensorMap<E4M3, 2>,
    bt: TensorMap<E4M3, 2>,
    k: u32,
    mut c: DisjointPersistentWgmmaTiles<Bf16, BM, BN, FIRST_CONSUMER, GROUP>,
) {
    gemm::<_, _, 128, GROUP>(a, bt, k, &mut c);
}
