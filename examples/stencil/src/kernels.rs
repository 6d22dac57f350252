//! 2D 5-point stencil through a shared-memory tile with a one-cell halo. Compiled twice: for the
//! host (typed launchers, CPU executor) and for nvptx64 (PTX).
use oxide_rt::device::thread::{block_idx, thread_idx};
use oxide_rt::device::*;

/// Block shape: 32 columns (one warp per tile row, coalesced) x 8 rows.
pub const BX: u32 = 32;
pub const BY: u32 = 8;
const TW: u32 = BX + 2;
const TH: u32 = BY + 2;

/// `out[y][x] = we*E + (ww*W + (ws*S + (wn*N + wc*C)))`, each step one fused multiply-add,
/// where C is `in[y][x]` and N/S/W/E its neighbours above/below/left/right; cells past the
/// border repeat the nearest border cell (clamp). Blocks are `BX x BY` threads (`block(..)`:
/// the launchers refuse any other shape); the grid covers `cols x rows`.
#[kernel(dims = 2, block(BX, BY))]
#[allow(clippy::too_many_arguments)] // five weights, as the CUDA twin takes them
pub fn stencil5(
    input: &[f32],
    rows: u32,
    cols: u32,
    wc: f32,
    wn: f32,
    ws: f32,
    ww: f32,
    we: f32,
    mut out: DisjointSlice2d<f32>,
) {
    let tile = shared_array!(f32, TH as usize, TW as usize);
    let t = thread_idx();
    let (x0, y0) = (block_idx().x * BX, block_idx().y * BY);

    // The (BY+2) x (BX+2) tile, halo included, loaded by the block's 256 threads in two rounds
    // of consecutive cells (row-contiguous, so each warp's loads coalesce).
    let mut k = t.y * BX + t.x;
    while k < TW * TH {
        let (ty, tx) = (k / TW, k % TW);
        let gy = (y0 + ty).saturating_sub(1).min(rows - 1);
        let gx = (x0 + tx).saturating_sub(1).min(cols - 1);
        // `get`: rows/cols that do not match the input read zeros instead of panicking, so
        // the kernel carries no panic path.
        let v = input.get(gy as usize * cols as usize + gx as usize).copied().unwrap_or(0.0);
        tile.flat().set(k as usize, v);
        k += BX * BY;
    }
    sync_threads();

    let (tx, ty) = (t.x as usize + 1, t.y as usize + 1);
    if let Some(o) = out.get_mut() {
        let (c, n, s, w, e) =
            (tile.get(ty, tx), tile.get(ty - 1, tx), tile.get(ty + 1, tx), tile.get(ty, tx - 1), tile.get(ty, tx + 1));
        *o = math::fma(we, e, math::fma(ww, w, math::fma(ws, s, math::fma(wn, n, wc * c))));
    }
}
