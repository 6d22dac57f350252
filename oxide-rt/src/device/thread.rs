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
/// geometry. [`index`] is its only constructor, so every `ThreadIndex` of a launch comes from
/// the same linearisation: a second scheme (say a row-major `y * width + x` with a width each
/// thread picks) would map two threads to one value. [`DisjointSlice`](super::DisjointSlice)
/// relies on that uniqueness to hand out `&mut` without data races; row-major 2-D and 3-D
/// outputs are [`DisjointSlice2d`](super::DisjointSlice2d) and
/// [`DisjointSlice3d`](super::DisjointSlice3d), whose widths come from the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ThreadIndex(usize);

impl ThreadIndex {
    /// The index as a number, e.g. to read an input: `x[i.get()]`.
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
    // The CPU executor keeps this index up to date as it steps from thread to thread (same
    // value as the formula below), so barrier-free kernels read one word per thread.
    #[cfg(not(target_arch = "nvptx64"))]
    {
        ThreadIndex(backend::global_linear_index())
    }
    #[cfg(target_arch = "nvptx64")]
    {
        let (block, in_block, per_block) = linear_position();
        // Saying that neither operation wraps lets the optimiser treat `i + k` as no-wrap after
        // `i < len` (one compare per offset, not two).
        // SAFETY: the index is below the launch's thread count, which the launchers keep at or under `MAX_LAUNCH_THREADS` (2^63).
        ThreadIndex(unsafe { block.unchecked_mul(per_block).unchecked_add(in_block) })
    }
}

/// (this block's linear index in the grid, this thread's linear index in the block, threads
/// per block), each linearised x-fastest over all three dimensions.
#[inline(always)]
pub(crate) fn linear_position() -> (usize, usize, usize) {
    let (t, b, bd, gd) = (thread_idx(), block_idx(), block_dim(), grid_dim());
    let in_block = t.x as usize + bd.x as usize * (t.y as usize + bd.y as usize * t.z as usize);
    // SAFETY: each step is at most the grid's block count, which the launchers keep at or under `MAX_LAUNCH_THREADS` (2^63), so none wraps.
    let block = unsafe {
        (b.x as usize).unchecked_add(
            (gd.x as usize).unchecked_mul((b.y as usize).unchecked_add((gd.y as usize).unchecked_mul(b.z as usize))),
        )
    };
    let per_block = bd.x as usize * bd.y as usize * bd.z as usize;
    (block, in_block, per_block)
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

/// Threads per warp on every NVIDIA GPU (CUDA's `warpSize`).
pub const WARP_SIZE: u32 = 32;

/// This thread's lane within its warp, `0..32` (PTX `%laneid`).
#[inline(always)]
pub fn lane_id() -> u32 {
    backend::lane_id()
}

/// This thread's warp within its block: the linear thread index in the block divided by 32.
#[inline(always)]
pub fn warp_id() -> u32 {
    backend::warp_id()
}

/// This thread's linear index within its block, `x` fastest (CUDA's
/// `threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)`).
#[inline(always)]
pub fn thread_rank() -> u32 {
    let (t, d) = (thread_idx(), block_dim());
    t.x + d.x * (t.y + d.y * t.z)
}

/// Global x index: `block_idx.x * block_dim.x + thread_idx.x`.
#[inline(always)]
pub fn global_x() -> usize {
    block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize
}

/// Global y index: `block_idx.y * block_dim.y + thread_idx.y`.
#[inline(always)]
pub fn global_y() -> usize {
    block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize
}

/// Global z index: `block_idx.z * block_dim.z + thread_idx.z`.
#[inline(always)]
pub fn global_z() -> usize {
    block_idx().z as usize * block_dim().z as usize + thread_idx().z as usize
}

/// The global `(x, y)` position of this thread (column, row for a 2D launch).
#[inline(always)]
pub fn index_2d() -> (usize, usize) {
    (global_x(), global_y())
}

/// The global `(x, y, z)` position of this thread.
#[inline(always)]
pub fn index_3d() -> (usize, usize, usize) {
    (global_x(), global_y(), global_z())
}
