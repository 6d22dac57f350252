//! Compiled twice: for the host (typed launchers, CPU executor) and for nvptx64 (PTX).
use oxide_rt::device::tensor::*;
use oxide_rt::device::*;

/// Rows of C per block.
pub const BM: usize = 128;
/// Columns of C per block.
pub const BN: usize = 128;
/// Depth of one k-tile.
pub const BK: usize = 32;
/// Rows and columns of C per warp: the 8 warps of a block form a 2 x 4 grid.
pub const WM: usize = 64;
pub const WN: usize = 32;
/// Threads per block.
pub const THREADS: u32 = 256;
/// k-tiles in flight: the one being multiplied and `STAGES - 1` being copied.
pub const STAGES: usize = 4;
/// A row of an A tile in shared memory: BK elements plus 8 of padding (80 bytes), so the 8
/// rows one `ldmatrix` phase reads start in 8 different 16-byte bank groups.
const A_LD: usize = BK + 8;
/// A row of a B tile: BN elements plus 8 (272 bytes), for the same reason.
const B_LD: usize = BN + 8;
const A_STAGE: usize = BM * A_LD;
const B_STAGE: usize = BK * B_LD;
/// Dynamic shared memory per block (74 KiB).
pub const SHARED_BYTES: usize = STAGES * (A_STAGE + B_STAGE) * 2;

/// `C = A * B`: row-major bf16 `A: m x k`, `B: k x n`, `C: m x n`, accumulated in f32 on the
/// tensor cores, `k` and `n` multiples of 8 (16-byte rows for the copies; the host checks).
///
/// A block of 8 warps computes a 128 x 128 tile of C; warp `(wm, wn)` a 64 x 32 sub-tile (see
/// [`warp_product`]). C is a `DisjointMmaTiles`: each lane writes exactly its accumulators'
/// elements, rounded to bf16.
#[allow(clippy::needless_range_loop)] // the accumulator grid reads clearer indexed
#[kernel(block(THREADS), launch_bounds(256, 2))]
pub fn bf16_gemm(a: Matrix<Bf16>, b: Matrix<Bf16>, mut c: DisjointMmaTiles<Bf16, BM, BN, WM, WN>) {
    // Uniform over the launch: no thread reaches a barrier.
    if !shapes_fit(a, b, (c.rows(), c.cols())) {
        return;
    }
    let acc = warp_product(a, b, c.origin());
    for mi in 0..WM / 16 {
        for ni in 0..WN / 8 {
            for i in 0..4 {
                if let Some(o) = c.get_mut(mi, ni, i) {
                    *o = Bf16::from_f32(acc[mi][ni].elems[i]);
                }
            }
        }
    }
}

/// `C = gelu(A * B + bias)`, the bias broadcast along the rows (`bias[j]` added to column `j`)
/// and GELU the exact one, `x/2 (1 + erf(x / sqrt 2))`: the same product as [`bf16_gemm`], with
/// the epilogue applied to the f32 accumulators before the one rounding to bf16, so the
/// activation costs no extra pass over C in global memory.
#[allow(clippy::needless_range_loop)]
#[kernel(block(THREADS), launch_bounds(256, 2))]
pub fn bf16_gemm_bias_gelu(
    a: Matrix<Bf16>,
    b: Matrix<Bf16>,
    bias: &[f32],
    mut c: DisjointMmaTiles<Bf16, BM, BN, WM, WN>,
) {
    if !shapes_fit(a, b, (c.rows(), c.cols())) || bias.len() != c.cols() {
        return;
    }
    let acc = warp_product(a, b, c.origin());
    for mi in 0..WM / 16 {
        for ni in 0..WN / 8 {
            for i in 0..4 {
                if let Some((_, col)) = c.position(mi, ni, i) {
                    let y = gelu(acc[mi][ni].elems[i] + bias[col]);
                    if let Some(o) = c.get_mut(mi, ni, i) {
                        *o = Bf16::from_f32(y);
                    }
                }
            }
        }
    }
}

/// GELU, `x/2 (1 + erf(x / sqrt 2))`, in f32.
#[inline(always)]
pub fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + Float::erf(x * core::f32::consts::FRAC_1_SQRT_2))
}

/// Whether `A`, `B`, a `rows x cols` C and the launch's dynamic shared memory fit the kernels:
/// the same answer in every thread, so a kernel that returns on `false` skips every barrier.
#[inline(always)]
fn shapes_fit(a: Matrix<Bf16>, b: Matrix<Bf16>, (rows, cols): (usize, usize)) -> bool {
    let k = a.cols();
    b.rows() == k
        && rows == a.rows()
        && cols == b.cols()
        && k.is_multiple_of(8)
        && cols.is_multiple_of(8)
        && dynamic_shared::<Bf16>().len() * 2 >= SHARED_BYTES
}

/// This warp's `WM x WN` part of the block's tile of `A * B` (the tile's top-left element at
/// `(row0, col0)`), as `(WM / 16) x (WN / 8)` f32 accumulators of `mma.sync.m16n8k16`: the main
/// loop both kernels share, which differ only in their epilogue. Call it only after
/// [`shapes_fit`] (it has barriers).
///
/// k-tiles of A (128 x 32) and B (32 x 128) stream through a 4-stage ring in dynamic shared
/// memory: `cp_async` copies (16 bytes each, zero-filled past the matrices' edges) run 3 tiles
/// ahead of the multiply; `cp_async_wait` plus one barrier per k-tile hand a stage from the
/// copies to the `ldmatrix` loads, and from the loads back to the copies.
#[allow(clippy::needless_range_loop)] // the accumulator grid reads clearer indexed
#[inline(always)]
fn warp_product(a: Matrix<Bf16>, b: Matrix<Bf16>, (row0, col0): (usize, usize)) -> Acc {
    let (sa, sb) = dynamic_shared::<Bf16>().split_at(STAGES * A_STAGE);
    let t = thread::thread_rank() as usize;
    let k_tiles = a.cols().div_ceil(BK);

    // Thread t copies 16-byte chunks t and t + 256 of each tile: A has 4 per row, B 16.
    let load = |stage: usize, kt: usize| {
        let k0 = kt * BK;
        for chunk in [t, t + THREADS as usize] {
            let (r, c8) = (chunk / 4, chunk % 4 * 8);
            cp_async_matrix::<Bf16, 8>(sa, stage * A_STAGE + r * A_LD + c8, a, row0 + r, k0 + c8);
            let (r, c8) = (chunk / 16, chunk % 16 * 8);
            cp_async_matrix::<Bf16, 8>(sb, stage * B_STAGE + r * B_LD + c8, b, k0 + r, col0 + c8);
        }
    };

    let warp = thread::warp_id() as usize;
    let (wm, wn) = (warp / (BN / WN), warp % (BN / WN));
    let mut acc: Acc = [[FragC::zero(); WN / 8]; WM / 16];

    for s in 0..STAGES - 1 {
        if s < k_tiles {
            load(s, s);
        }
        cp_async_commit(); // one group per stage, empty or not, so the wait counts stay right
    }
    for kt in 0..k_tiles {
        // k-tile kt has landed (this thread's copies), and after the barrier everyone's; every
        // warp is also done with the stage the next copies overwrite (read at kt - 1).
        cp_async_wait::<{ STAGES as u32 - 2 }>();
        sync_threads();
        let next = kt + STAGES - 1;
        if next < k_tiles {
            load(next % STAGES, next);
        }
        cp_async_commit();

        let stage = kt % STAGES;
        for kk in (0..BK).step_by(16) {
            // The warp's fragments of the k-step and its whole tile of products, after one test
            // that the warp is whole (see `mma_sync_tile`).
            mma_sync_tile(sa, A_LD, (stage * BM + wm * WM, kk), sb, B_LD, (stage * BK + kk, wn * WN), &mut acc);
        }
    }
    cp_async_wait::<0>();
    acc
}

/// A warp's accumulators: `(WM / 16) x (WN / 8)` tiles of 16 x 8.
type Acc = [[FragC<f32, M16N8K16>; WN / 8]; WM / 16];
