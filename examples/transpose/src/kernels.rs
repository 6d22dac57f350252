//! Compiled twice: for the host (typed launchers, CPU executor) and for nvptx64 (PTX).
use oxide_rt::device::*;

/// Side of the square tile one block moves (64: 0.93 of the copy ceiling on the H200 against
/// 0.84 with 32; BENCHMARKS.md).
pub const TILE: usize = 64;
/// Rows of threads per block: each thread moves TILE / ROWS = 8 elements.
pub const ROWS: usize = 8;

/// `out (cols x rows) = transpose(input (rows x cols))`: `input` a row-major `Matrix`
/// (`oxide_rt::Matrix::new(&buf, rows, cols)`), `out` a `DisjointTiles` of 64 x 64 tiles
/// (`oxide_rt::Slice2d::new(&mut buf, rows)`: `out` has `rows` columns). `DOWN = true`: block
/// `(bx, by)` owns tile row `bx`, so consecutive blocks read `input` along its rows.
///
/// A (64, 8) block (`block(..)`: the launchers refuse other shapes) owns one 64 x 64 tile of
/// `out`; it reads the matching tile of `input` with coalesced row reads (8 rows per thread),
/// parks it in shared memory, and writes its tile transposed, again as coalesced rows: thread
/// `(tx, ty)` owns tile rows `ty, ty + 8, …` at column `tx`. The shared tile has 65 columns so
/// the column-wise reads of a warp hit 32 different banks. Edge tiles skip the elements outside
/// the matrices (`get` and `get_mut` return `None` there).
#[kernel(dims = 2, block(TILE as u32, ROWS as u32))]
pub fn transpose(input: Matrix<f32>, mut out: DisjointTiles<f32, TILE, TILE, 1, true>) {
    let tile = shared_array!(f32, TILE, TILE + 1);
    let (tx, ty) = (thread::thread_idx().x as usize, thread::thread_idx().y as usize);
    // The block's tile of `out` at (row0, col0) is the transpose of `input`'s at (col0, row0).
    let (row0, col0) = out.origin();

    let mut j = 0;
    while j < TILE {
        if let Some(&v) = input.get(col0 + ty + j, row0 + tx) {
            tile.set(ty + j, tx, v);
        }
        j += ROWS;
    }
    sync_threads();

    for k in 0..TILE / ROWS {
        // Tile row ty + k * ROWS, column tx = input row col0 + tx, column row0 + ty + k * ROWS.
        if let Some(v) = out.get_mut(k, 0) {
            *v = tile.get(tx, ty + k * ROWS);
        }
    }
}
