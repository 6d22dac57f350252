//! Compiled twice: for the host (typed launchers, CPU executor) and for nvptx64 (PTX).
use oxide_rt::device::atomic::Ordering;
use oxide_rt::device::*;

/// Side of the square tile one block moves (64: 0.93 of the copy ceiling on the H200 against
/// 0.84 with 32; BENCHMARKS.md).
pub const TILE: usize = 64;
/// Rows of threads per block: each thread moves TILE / ROWS = 8 elements.
pub const ROWS: usize = 8;

/// `out (cols x rows) = transpose(input (rows x cols))`, both row-major `Matrix` arguments
/// (`oxide_rt::Matrix::new(&buf, rows, cols)`: the launchers check each buffer holds its shape).
///
/// A (64, 8) block (`block(..)`: the launchers refuse other shapes) reads a 64 x 64 tile with
/// coalesced row reads (8 rows per thread), parks it in shared memory, and writes it back
/// transposed, again as coalesced rows. The shared tile has 65 columns so the column-wise
/// reads of a warp hit 32 different banks. Edge tiles skip the elements `get` finds outside
/// the matrices; `out` is written through `AtomicF32` relaxed stores because a
/// `DisjointSlice` only lets a thread write the element at its own thread index.
#[kernel(dims = 2, block(TILE as u32, ROWS as u32))]
pub fn transpose(input: Matrix<f32>, out: Matrix<AtomicF32>) {
    let tile = shared_array!(f32, TILE, TILE + 1);
    let (tx, ty) = (thread::thread_idx().x as usize, thread::thread_idx().y as usize);
    let (bx, by) = (thread::block_idx().x as usize * TILE, thread::block_idx().y as usize * TILE);

    let c = bx + tx;
    let mut j = 0;
    while j < TILE {
        if let Some(&v) = input.get(by + ty + j, c) {
            tile.set(ty + j, tx, v);
        }
        j += ROWS;
    }
    sync_threads();

    let c = by + tx; // column of out = row of input
    let mut j = 0;
    while j < TILE {
        // Row of out = column of input.
        if let Some(cell) = out.get(bx + ty + j, c) {
            cell.store(tile.get(tx, ty + j), Ordering::Relaxed);
        }
        j += ROWS;
    }
}
