//! Thread, block and grid indices.

use super::backend;
use crate::dim::Dim3;

/// This thread's index within its block.
#[inline(always)]
pub fn thread_idx() -> Dim3 {
    backend::thread_idx()
}

/// This block's index within the grid.
#[inline(always)]
pub fn block_idx() -> Dim3 {
    backend::block_idx()
}

/// Threads per block, per dimension.
#[inline(always)]
pub fn block_dim() -> Dim3 {
    backend::block_dim()
}

/// Blocks per grid, per dimension.
#[inline(always)]
pub fn grid_dim() -> Dim3 {
    backend::grid_dim()
}

/// A thread's position in the whole launch, linearised over all three dimensions of both the
/// block and the grid, so no two threads of one launch ever hold the same value whatever the
/// geometry. Only the device API creates it; [`DisjointSlice`](super::DisjointSlice) relies on
/// that uniqueness to hand out `&mut` without data races.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ThreadIndex(usize);

impl ThreadIndex {
    #[inline(always)]
    pub fn get(self) -> usize {
        self.0
    }
}

/// The unique linear index of this thread in the launch (see [`ThreadIndex`]).
///
/// For a 1D launch this is `block_idx.x * block_dim.x + thread_idx.x`.
#[inline(always)]
pub fn index() -> ThreadIndex {
    let (t, b, bd, gd) = (thread_idx(), block_idx(), block_dim(), grid_dim());
    let in_block = t.x as usize + bd.x as usize * (t.y as usize + bd.y as usize * t.z as usize);
    let block = b.x as usize + gd.x as usize * (b.y as usize + gd.y as usize * b.z as usize);
    let per_block = bd.x as usize * bd.y as usize * bd.z as usize;
    ThreadIndex(block * per_block + in_block)
}

/// Alias of [`index`] for the common 1D case.
#[inline(always)]
pub fn index_1d() -> ThreadIndex {
    index()
}

/// Total number of threads in the launch (grid volume times block volume).
#[inline(always)]
pub fn num_threads() -> usize {
    (grid_dim().volume() * block_dim().volume()) as usize
}
