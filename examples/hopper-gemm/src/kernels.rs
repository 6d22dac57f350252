//! Compiled twice: for the host (typed launchers; the CPU executor refuses wgmma with an Err)
//! and for nvptx64 sm_90a (PTX).
use oxide_rt::device::tensor::*;
use oxide_rt::device::wgmma::*;
use oxide_rt::device::*;

/// Rows of C per block: two consumer warpgroups of 64 rows.
pub const BM: usize = 128;
/// Columns of C per block: one m64n256k16 accumulator per warpgroup.
pub const BN: usize = 256;
/// Depth of one k-tile: one 128-byte swizzle row of 16-bit elements.
pub const BK: usize = 64;
const _: () = assert!(BK == 64, "the k-tile loop issues four k16 wgmmas");
/// The first warpgroup that computes (and owns) a part of C: all of them here.
pub const FIRST_CONSUMER: usize = 0;
/// Threads per block: two warpgroups.
pub const THREADS: u32 = 256;
/// k-tiles in shared memory: the one being multiplied and `STAGES - 1` being copied.
pub const STAGES: usize = 4;
const A_TILE: usize = BM * BK;
const B_TILE: usize = BN * BK;
/// Dynamic shared memory per block (193 KiB): the stages plus room to align them to 1024 bytes.
pub const SHARED_BYTES: usize = STAGES * (A_TILE + B_TILE) * 2 + 1024;

/// A's k-tile as two 64-row halves, one per consumer warpgroup (the same bytes as one 128-row
/// tile: a swizzled row is 128 bytes either way).
type LayoutA<T> = KMajor<T, Swizzle128B, 64, BK>;
type LayoutB<T> = KMajor<T, Swizzle128B, BN, BK>;

/// A 16-bit element type the GEMM runs on.
pub trait Elem: WgmmaElem {
    fn from_f32(v: f32) -> Self;
}
impl Elem for Bf16 {
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        Bf16::from_f32(v)
    }
}
impl Elem for F16 {
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        F16::from_f32(v)
    }
}

/// `C = A * B` with A `m x k` and `bt` = B transposed (`n x k`), both row-major, so that both
/// operands are K-major as wgmma reads them; `k` a multiple of 8 (16-byte rows for the copies).
#[inline(always)]
fn gemm<T: Elem>(a: Matrix<T>, bt: Matrix<T>, c: &mut DisjointWgmmaTiles<T, BM, BN, FIRST_CONSUMER>) {
    let (m, n, k) = (a.rows(), bt.rows(), a.cols());
    let smem = aligned(dynamic_shared::<T>(), 1024);
    // Uniform over the launch: no thread reaches a barrier.
    if bt.cols() != k
        || c.rows() != m
        || c.cols() != n
        || !k.is_multiple_of(8)
        || smem.len() < STAGES * (A_TILE + B_TILE)
    {
        return;
    }
    let (sa, sb) = smem.split_at(STAGES * A_TILE);
    let ring_a = LayoutA::<T>::ring::<{ 2 * STAGES }>(sa);
    let ring_b = LayoutB::<T>::ring::<STAGES>(sb);
    let t = thread::thread_rank() as usize;
    let (row0, col0) = c.origin();
    let k_tiles = k.div_ceil(BK);

    // 16-byte chunks: A has BM * 8 per k-tile, B BN * 8; thread t copies every 256th, each to
    // where the swizzled layout puts it (the swizzle permutes whole chunks).
    let load = |stage: usize, kt: usize| {
        let k0 = kt * BK;
        for chunk in (t..BM * 8).step_by(THREADS as usize) {
            let (r, c8) = (chunk / 8, chunk % 8 * 8);
            let src = a.row(row0 + r).unwrap_or(&[]);
            let tile = ring_a.tile(2 * stage + r / 64);
            cp_async::<T, 8>(tile, LayoutA::<T>::index(r % 64, c8), src, k0 + c8);
        }
        for chunk in (t..BN * 8).step_by(THREADS as usize) {
            let (r, c8) = (chunk / 8, chunk % 8 * 8);
            let src = bt.row(col0 + r).unwrap_or(&[]);
            cp_async::<T, 8>(ring_b.tile(stage), LayoutB::<T>::index(r, c8), src, k0 + c8);
        }
    };

    let wg = t / 128 % 2;
    let mut acc = WgAcc::<M64N256K16>::zero();
    for s in 0..STAGES - 1 {
        if s < k_tiles {
            load(s, s);
        }
        cp_async_commit(); // one group per stage, empty or not, so the wait counts stay right
    }
    for kt in 0..k_tiles {
        // k-tile kt has landed (this thread's copies; after the barrier everyone's, and visible
        // to the tensor cores' async proxy); both warpgroups' wgmmas of kt - 1 are done (each
        // waited for them at the end of kt - 1), so its stage can be refilled.
        cp_async_wait::<{ STAGES as u32 - 2 }>();
        fence_proxy_async();
        sync_threads();
        let next = kt + STAGES - 1;
        if next < k_tiles {
            load(next % STAGES, next);
        }
        cp_async_commit();

        // Nothing but wgmmas between the fence and the commit: ptxas keeps them one
        // asynchronous group (a branch in between, e.g. a bounds check, serialises them).
        let (ta, tb) = (2 * (kt % STAGES) + wg, kt % STAGES);
        fence();
        mma_async(&mut acc, ring_a.desc::<0>(ta), ring_b.desc::<0>(tb), true);
        mma_async(&mut acc, ring_a.desc::<16>(ta), ring_b.desc::<16>(tb), true);
        mma_async(&mut acc, ring_a.desc::<32>(ta), ring_b.desc::<32>(tb), true);
        mma_async(&mut acc, ring_a.desc::<48>(ta), ring_b.desc::<48>(tb), true);
        commit_group();
        wait_group::<0, _>(&mut acc);
    }
    cp_async_wait::<0>();

    for i in (0..BN / 2).step_by(2) {
        let (x, y) = (T::from_f32(acc.get(i)), T::from_f32(acc.get(i + 1)));
        if let Some(p) = c.pair_mut(i) {
            *p = [x, y];
        } else {
            if let Some(o) = c.get_mut(i) {
                *o = x;
            }
            if let Some(o) = c.get_mut(i + 1) {
                *o = y;
            }
        }
    }
}

/// `C = A * B` in bf16 (f32 accumulation): A `m x k`, `bt` = B transposed `n x k`, C `m x n`,
/// all row-major; `k` a multiple of 8. A block of two warpgroups computes a 128 x 256 tile of
/// C, each warpgroup 64 x 256 with one `wgmma.m64n256k16` accumulator; 128 x 64 and 256 x 64
/// k-tiles stream through a 4-stage ring of 128-byte-swizzled shared memory, copied with
/// `cp_async` three tiles ahead of the multiply.
#[kernel(block(THREADS), launch_bounds(256, 1))]
pub fn hopper_gemm_bf16(a: Matrix<Bf16>, bt: Matrix<Bf16>, mut c: DisjointWgmmaTiles<Bf16, BM, BN, FIRST_CONSUMER>) {
    gemm(a, bt, &mut c);
}

/// [`hopper_gemm_bf16`] on f16.
#[kernel(block(THREADS), launch_bounds(256, 1))]
pub fn hopper_gemm_f16(a: Matrix<F16>, bt: Matrix<F16>, mut c: DisjointWgmmaTiles<F16, BM, BN, FIRST_CONSUMER>) {
    gemm(a, bt, &mut c);
}
