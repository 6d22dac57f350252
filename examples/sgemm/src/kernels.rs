//! Compiled twice: for the host (typed launchers, CPU executor) and for nvptx64 (PTX).
use oxide_rt::device::*;
use oxide_rt::KernelArg;

/// Rows of C per block.
pub const BM: usize = 128;
/// Columns of C per block.
pub const BN: usize = 128;
/// Depth of one k-tile.
pub const BK: usize = 16;
/// Threads per block along x and y: 16 x 16, each computing 8 x 8 outputs.
pub const THREADS_X: u32 = 16;
pub const THREADS_Y: u32 = 16;
/// A k-row of the A tile, in `f32`s: BM plus 4 of padding, so that the transposed stores of
/// one warp (8 rows at 4 different k) hit at most 2 of a bank.
const AS_STRIDE: usize = BM + 4;
/// A k-row of the B tile, in `F4`s.
const BS_STRIDE: usize = BN / 4;

/// Four floats, 16-byte aligned, so a shared-memory access is one 128-bit `ld/st.shared.v4`.
#[repr(C, align(16))]
#[derive(Clone, Copy, KernelArg)]
pub struct F4(pub [f32; 4]);

/// `C = alpha * A * B + beta * C`, row-major `Matrix` arguments `A: m x k`, `B: k x n`,
/// `C: m x n`, any sizes (the launchers check each buffer holds its shape).
///
/// One block of 16 x 16 threads computes a 128 x 128 tile of C; the thread at `(tx, ty)` keeps
/// 8 x 8 accumulators in registers (rows `4*ty..+4` and `64+4*ty..+4`, columns likewise with
/// `tx`), fed per k-step by two 128-bit shared loads of A and two of B for 64 FMAs. The 128 x 16
/// A tile (stored transposed, k-major) and 16 x 128 B tile are double-buffered in shared memory
/// and the next tile is fetched into registers while the current one is consumed: one barrier
/// per k-tile.
///
/// Global reads are `chunk_or::<4>`: four consecutive floats of a row, one 128-bit load where
/// the matrix's rows allow it, zeros outside the matrix — so the edges (rows past `m`, columns
/// past `n`, the last partial k-tile) need no code of their own. C is a
/// `DisjointTiles<f32, 128, 128, 4>`: the block owns its tile, and the thread exactly its
/// accumulators' elements (rows and columns dealt out in groups of 4), which it reads (`beta`)
/// and writes in place. The host passes `Slice2d::new(&mut c, n)`.
/// `block(16, 16)`: the launchers refuse other shapes, so the tile arithmetic of `c` folds to
/// constants; `launch_bounds(256, 2)`: at most 128 registers per thread, so two blocks share an
/// SM.
// BLAS argument list; index loops over the register tile read clearer than iterator chains.
#[allow(clippy::needless_range_loop)]
#[kernel(block(THREADS_X, THREADS_Y), launch_bounds(256, 2), dims = 2)]
// 16 written-out k-steps make a body larger than LLVM's inliner takes; out of line, its
// arguments would pass through local memory (oxide-build warns of that and names this fix).
#[inline(always)]
pub fn sgemm(alpha: f32, a: Matrix<f32>, b: Matrix<f32>, beta: f32, mut c: DisjointTiles<f32, BM, BN, 4>) {
    let (m, n, k) = (a.rows(), b.cols(), a.cols());
    if m == 0 || n == 0 || b.rows() != k || c.rows() != m || c.cols() != n {
        return; // uniform across the launch: no thread reaches a barrier
    }
    let a_s = shared_array!(F4, 2 * BK * AS_STRIDE / 4);
    let a_f = a_s.cast::<f32>();
    let b_s = shared_array!(F4, 2 * BK * BS_STRIDE);

    let (tx, ty) = (thread::thread_idx().x as usize, thread::thread_idx().y as usize);
    let t = ty * THREADS_X as usize + tx;
    let (row0, col0) = c.origin();

    // Global -> shared mapping, two chunks of 4 floats from each matrix per thread. A: chunk
    // `t + 256 * r` is row `(t + 256 * r) / 4`, k `4 * (t % 4)..+4` (a warp reads 8 rows x 64
    // bytes). B: k-row `t / 32 + 8 * r`, columns `4 * (t % 32)..+4` (a warp reads 512
    // contiguous bytes).
    let (a_row, a_k) = (t / 4, 4 * (t % 4));
    let (b_k, b_q) = (t / 32, t % 32);
    let load = |kt: usize| -> [[f32; 4]; 4] {
        let kb = kt * BK;
        [
            a.chunk_or::<4>(row0 + a_row, kb + a_k, 0.0),
            a.chunk_or::<4>(row0 + a_row + 64, kb + a_k, 0.0),
            b.chunk_or::<4>(kb + b_k, col0 + 4 * b_q, 0.0),
            b.chunk_or::<4>(kb + b_k + 8, col0 + 4 * b_q, 0.0),
        ]
    };
    let store = |buf: usize, [a0, a1, b0, b1]: [[f32; 4]; 4]| {
        for j in 0..4 {
            let at = (buf * BK + a_k + j) * AS_STRIDE + a_row;
            a_f.set(at, a0[j]);
            a_f.set(at + 64, a1[j]);
        }
        b_s.set((buf * BK + b_k) * BS_STRIDE + b_q, F4(b0));
        b_s.set((buf * BK + b_k + 8) * BS_STRIDE + b_q, F4(b1));
    };

    // Compute mapping: the thread's accumulators are the elements `c` gives it (rows and
    // columns in groups of 4, 64 apart).
    let (tr, tc) = (ty, tx);

    let mut acc = [[0.0f32; 8]; 8];
    let tiles = k.div_ceil(BK);
    if tiles > 0 {
        store(0, load(0));
    }
    sync_threads();
    for kt in 0..tiles {
        let buf = kt & 1;
        let next = if kt + 1 < tiles { Some(load(kt + 1)) } else { None };
        // The 16 k-steps written out (LLVM keeps a loop here otherwise; nvcc's `#pragma unroll`
        // in the twin does the same), so shared addresses fold into immediate offsets.
        let mut step = |kk: usize| {
            let ab = (buf * BK + kk) * AS_STRIDE / 4;
            let bb = (buf * BK + kk) * BS_STRIDE;
            let (a0, a1, b0, b1) = (a_s.get(ab + tr), a_s.get(ab + 16 + tr), b_s.get(bb + tc), b_s.get(bb + 16 + tc));
            let av = [a0.0[0], a0.0[1], a0.0[2], a0.0[3], a1.0[0], a1.0[1], a1.0[2], a1.0[3]];
            let bv = [b0.0[0], b0.0[1], b0.0[2], b0.0[3], b1.0[0], b1.0[1], b1.0[2], b1.0[3]];
            for i in 0..8 {
                for j in 0..8 {
                    acc[i][j] += av[i] * bv[j];
                }
            }
        };
        step(0);
        step(1);
        step(2);
        step(3);
        step(4);
        step(5);
        step(6);
        step(7);
        step(8);
        step(9);
        step(10);
        step(11);
        step(12);
        step(13);
        step(14);
        step(15);
        if let Some(tile) = next {
            store(buf ^ 1, tile);
        }
        sync_threads();
    }

    // `c.get_mut(i, j)` is tile row `(i / 4) * 64 + 4 * ty + i % 4`, column likewise: the
    // element accumulated in `acc[i][j]`.
    for i in 0..8 {
        for j in 0..8 {
            if let Some(v) = c.get_mut(i, j) {
                *v = if beta == 0.0 { alpha * acc[i][j] } else { alpha * acc[i][j] + beta * *v };
            }
        }
    }
}
