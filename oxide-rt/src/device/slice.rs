//! Output slices written by many threads at once.

use super::atomic::AtomicU64;
use super::thread::ThreadIndex;
use core::marker::PhantomData;
use core::ptr::NonNull;

/// A kernel's output buffer. Each thread may write only the element at its own
/// [`ThreadIndex`], which is unique across the launch, so handing out `&mut T` cannot alias
/// between threads. (`&mut [T]` shared by all threads would be aliasing UB; it is not offered.)
pub struct DisjointSlice<'a, T> {
    // NonNull: the optimiser then knows `&mut *ptr.add(i)` is never null and drops the
    // `Option` niche check from every access.
    ptr: NonNull<T>,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> DisjointSlice<'a, T> {
    /// The raw base pointer, for kernels whose threads own other sets of elements than their
    /// `ThreadIndex` (a row per warp, a tile per block). Writing through it is `unsafe`: the
    /// kernel must make every element written by at most one thread, without a barrier or
    /// atomic between a write and another thread's read of it, exactly as in CUDA.
    #[inline(always)]
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr.as_ptr()
    }

    /// The element owned by thread `i`, or `None` past the end.
    #[inline(always)]
    #[track_caller]
    pub fn get_mut(&mut self, i: ThreadIndex) -> Option<&mut T> {
        let i = own(i);
        if i < self.len {
            // SAFETY: in bounds (checked above); no other thread holds index `i` (ThreadIndex is unique per launch) and `&mut self` stops this thread from taking it twice.
            Some(unsafe { &mut *self.ptr.as_ptr().add(i) })
        } else {
            None
        }
    }
}

/// The value of `i`, which must be the calling thread's own index. On the GPU no safe code can
/// move a `ThreadIndex` to another thread (it is no `KernelArg` and no `SharedElem`, so it fits
/// in no buffer, and the device has no thread-locals). In the host build a kernel could pass one
/// through a thread-local to the next simulated thread of its block (they share an OS thread),
/// so the CPU executor checks it.
#[inline(always)]
#[track_caller]
fn own(i: ThreadIndex) -> usize {
    #[cfg(not(target_arch = "nvptx64"))]
    if i.get() != super::backend::global_linear_index() {
        foreign_index(i.get());
    }
    i.get()
}

#[cfg(not(target_arch = "nvptx64"))]
#[cold]
#[inline(never)]
#[track_caller]
fn foreign_index(i: usize) -> ! {
    panic!("ThreadIndex {i} used by another thread than its own; an output element belongs to the thread whose `thread::index()` it is")
}

/// A kernel's output buffer owned in fixed chunks of `N` elements: thread `i` owns elements
/// `i*N .. (i+1)*N`. `N` is part of the argument's type, so every thread of a launch uses the
/// same chunking and chunks of distinct [`ThreadIndex`]es never overlap (a chunk size chosen at
/// each call would let two threads pick overlapping ranges). For a thread computing several
/// outputs, e.g. a 4-wide vector or a row of a small tile.
pub struct DisjointChunks<'a, T, const N: usize> {
    ptr: NonNull<T>,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T, const N: usize> DisjointChunks<'a, T, N> {
    /// The full chunk of thread `i`, or `None` when it does not fit entirely (see
    /// [`chunk_mut`](Self::chunk_mut) for a short last chunk).
    #[inline(always)]
    #[track_caller]
    pub fn get_mut(&mut self, i: ThreadIndex) -> Option<&mut [T; N]> {
        let start = own(i).checked_mul(N)?;
        if N > 0 && start.checked_add(N)? <= self.len {
            // Distinct ThreadIndexes give disjoint chunks (N is the same for every thread) and
            // `&mut self` stops this thread from taking its chunk twice.
            // SAFETY: `start..start+N` is in bounds (checked above) and owned by this thread only.
            Some(unsafe { &mut *(self.ptr.as_ptr().add(start) as *mut [T; N]) })
        } else {
            None
        }
    }

    /// The chunk of thread `i`, shorter than `N` for the last one when `len` is not a multiple
    /// of `N`; `None` past the end.
    #[inline(always)]
    #[track_caller]
    pub fn chunk_mut(&mut self, i: ThreadIndex) -> Option<&mut [T]> {
        let start = own(i).checked_mul(N)?;
        if start < self.len {
            let n = N.min(self.len - start);
            // SAFETY: as in `get_mut`, for `start..start+n` within bounds.
            Some(unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr().add(start), n) })
        } else {
            None
        }
    }
}

/// A kernel's output buffer owned `N` elements per thread, interleaved within each block: the
/// block with linear index `b` and `B` threads owns elements `b*N*B .. (b+1)*N*B`, and its
/// thread with linear index `t` owns `t, t + B, .., t + (N-1)*B` of those. A warp's `k`-th
/// elements are consecutive, so each access is coalesced (unlike [`DisjointChunks`], whose
/// chunks are consecutive per thread); several elements per thread keep more loads in flight
/// (saxpy on the H200: 1.03 of the copy ceiling with 4 per thread, 0.82 with 1). `N` is part
/// of the type and the thread's position comes from the hardware, so the sets never overlap.
pub struct DisjointStrided<'a, T, const N: usize> {
    ptr: NonNull<T>,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T, const N: usize> DisjointStrided<'a, T, N> {
    /// The buffer index of this thread's `k`-th element (`k < N`), in bounds or not; `None`
    /// for `k >= N` or an index beyond `usize`.
    #[inline(always)]
    pub fn index(&self, k: usize) -> Option<usize> {
        if k >= N {
            return None;
        }
        let (block, in_block, per_block) = super::thread::linear_position();
        block.checked_mul(N)?.checked_add(k)?.checked_mul(per_block)?.checked_add(in_block)
    }

    /// This thread's `k`-th element, or `None` past the end (or for `k >= N`).
    #[inline(always)]
    pub fn get(&self, k: usize) -> Option<&T> {
        let i = self.index(k).filter(|&i| i < self.len)?;
        // SAFETY: in bounds (checked above) and owned by this thread only (see the type's docs); `&self` excludes a `&mut` to it meanwhile.
        Some(unsafe { &*self.ptr.as_ptr().add(i) })
    }

    /// This thread's `k`-th element, or `None` past the end (or for `k >= N`).
    #[inline(always)]
    pub fn get_mut(&mut self, k: usize) -> Option<&mut T> {
        let i = self.index(k).filter(|&i| i < self.len)?;
        // SAFETY: in bounds (checked above) and owned by this thread only (see the type's docs); `&mut self` stops this thread from taking it twice.
        Some(unsafe { &mut *self.ptr.as_ptr().add(i) })
    }
}

/// A row-major 2-D output of `cols` columns: the thread at global position `(x, y)`
/// ([`thread::index_2d`](super::thread::index_2d)) owns element `y * cols + x`.
///
/// Why no two threads meet: `cols` is a kernel argument the host built
/// (`oxide_rt::Slice2d::new(&mut buf, cols)`), so it is the same in every thread; a thread owns
/// an element only when `x < cols` and the launch has one thread along z, and then distinct
/// `(x, y)` give distinct `y * cols + x`. (A width each thread passes itself could differ
/// between threads and map two of them to one element; that is why it is not a parameter of
/// [`get_mut`](Self::get_mut).)
pub struct DisjointSlice2d<'a, T> {
    ptr: NonNull<T>,
    len: usize,
    /// At most `u32::MAX` (the launchers refuse more).
    cols: u32,
    /// `len / cols`, from the launcher (no division in every thread): `y < rows && x < cols`
    /// puts `y * cols + x` below `rows * cols <= len`, so the index needs no overflow or length
    /// check.
    rows: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> DisjointSlice2d<'a, T> {
    /// Columns per row, as the host passed them.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols as usize
    }

    /// Whole rows in the buffer (`len / cols`; 0 when `cols` is 0).
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The buffer index `y * cols + x` of this thread's element, or `None` when the thread owns
    /// none: `x >= cols`, `y >= rows` (past the whole rows), or a launch with more than one
    /// thread along z.
    #[inline(always)]
    pub fn index(&self) -> Option<usize> {
        let (x, y) = super::thread::index_2d();
        if x >= self.cols() || y >= self.rows || super::thread::grid_dim().z != 1 || super::thread::block_dim().z != 1 {
            return None;
        }
        // Below `rows * cols <= len`: no overflow, in bounds.
        Some(y * self.cols() + x)
    }

    /// This thread's element (see [`index`](Self::index) for when there is none).
    #[inline(always)]
    pub fn get_mut(&mut self) -> Option<&mut T> {
        let i = self.index()?;
        // SAFETY: `i < len` (checked by `index`) and owned by this thread only (see the type's docs); `&mut self` stops this thread from taking it twice.
        Some(unsafe { &mut *self.ptr.as_ptr().add(i) })
    }
}

/// A row-major 3-D output of `cols × rows` planes: the thread at global position `(x, y, z)`
/// ([`thread::index_3d`](super::thread::index_3d)) owns element `(z * rows + y) * cols + x`.
///
/// Why no two threads meet: `cols` and `rows` are kernel arguments the host built
/// (`oxide_rt::Slice3d::new(&mut buf, cols, rows)`), the same in every thread; a thread owns an
/// element only when `x < cols` and `y < rows`, and then distinct `(x, y, z)` give distinct
/// indices.
pub struct DisjointSlice3d<'a, T> {
    ptr: NonNull<T>,
    len: usize,
    /// Each at most `u32::MAX` (the launchers refuse more).
    cols: u32,
    rows: u32,
    /// `len / (cols * rows)`, from the launcher (no division in every thread): `z < planes`,
    /// `y < rows` and `x < cols` put `(z * rows + y) * cols + x` below `planes * rows * cols
    /// <= len`, so the index needs no overflow or length check.
    planes: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> DisjointSlice3d<'a, T> {
    /// Columns per row, as the host passed them.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols as usize
    }

    /// Rows per plane, as the host passed them.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows as usize
    }

    /// Whole planes in the buffer (`len / (cols * rows)`; 0 when either is 0).
    #[inline(always)]
    pub fn planes(&self) -> usize {
        self.planes
    }

    /// The buffer index `(z * rows + y) * cols + x` of this thread's element, or `None` when
    /// the thread owns none: `x >= cols`, `y >= rows` or `z >= planes` (past the whole planes).
    #[inline(always)]
    pub fn index(&self) -> Option<usize> {
        let (x, y, z) = super::thread::index_3d();
        if x >= self.cols() || y >= self.rows() || z >= self.planes {
            return None;
        }
        // Below `planes * rows * cols <= len`: no overflow, in bounds.
        Some((z * self.rows() + y) * self.cols() + x)
    }

    /// This thread's element (see [`index`](Self::index) for when there is none).
    #[inline(always)]
    pub fn get_mut(&mut self) -> Option<&mut T> {
        let i = self.index()?;
        // SAFETY: `i < len` (checked by `index`) and owned by this thread only (see the type's docs); `&mut self` stops this thread from taking it twice.
        Some(unsafe { &mut *self.ptr.as_ptr().add(i) })
    }
}

/// One output element per warp: the `w`-th warp of the launch owns element `w`, and its lane 0
/// holds it (CUDA: `if (lane == 0) y[warp] = sum;` after a warp reduction).
///
/// Why no two threads meet: warps are the block's threads in runs of 32 by linear rank, so the
/// launch's warp index (block index × warps per block + warp in the block) is distinct for
/// distinct warps, and exactly one thread of each warp (rank ≡ 0 mod 32) is given the element.
pub struct DisjointPerWarp<'a, T> {
    ptr: NonNull<T>,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> DisjointPerWarp<'a, T> {
    /// This warp's index in the launch (its element), the same for all its lanes (saturating
    /// at `usize::MAX`, which is past the end of any buffer, for grids beyond `usize` warps).
    #[inline(always)]
    pub fn index(&self) -> usize {
        let (block, in_block, per_block) = super::thread::linear_position();
        block.saturating_mul(per_block.div_ceil(32)).saturating_add(in_block / 32)
    }

    /// The warp's element, on lane 0 only (`None` on the other lanes and past the end).
    #[inline(always)]
    pub fn get_mut(&mut self) -> Option<&mut T> {
        let (_, in_block, _) = super::thread::linear_position();
        let i = self.index();
        if in_block % 32 != 0 || i >= self.len {
            return None;
        }
        // SAFETY: in bounds (checked above) and held by this warp's lane 0 only (see the type's docs); `&mut self` stops this thread from taking it twice.
        Some(unsafe { &mut *self.ptr.as_ptr().add(i) })
    }
}

/// One output element per block: block `b` (linear over the grid) owns element `b`, and its
/// thread 0 holds it (CUDA: `if (threadIdx.x == 0) y[blockIdx.x] = total;`).
///
/// Why no two threads meet: block indices are distinct, and only the thread of linear rank 0
/// in each block is given the element.
pub struct DisjointPerBlock<'a, T> {
    ptr: NonNull<T>,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> DisjointPerBlock<'a, T> {
    /// This block's index in the grid (its element), the same for all its threads.
    #[inline(always)]
    pub fn index(&self) -> usize {
        super::thread::linear_position().0
    }

    /// The block's element, on its thread 0 only (`None` elsewhere and past the end).
    #[inline(always)]
    pub fn get_mut(&mut self) -> Option<&mut T> {
        let (block, in_block, _) = super::thread::linear_position();
        if in_block != 0 || block >= self.len {
            return None;
        }
        // SAFETY: in bounds (checked above) and held by this block's thread 0 only (see the type's docs); `&mut self` stops this thread from taking it twice.
        Some(unsafe { &mut *self.ptr.as_ptr().add(block) })
    }
}

/// A row per block of a row-major matrix with `cols` columns: block `b` (linear over the grid)
/// owns row `b`, and its `B` threads share the row interleaved — thread `t` owns columns
/// `t, t + B, t + 2B, …` — so a warp's stores are consecutive (coalesced). For block-per-row
/// kernels (layer norm, softmax, per-row scaling) whose row length is known only at run time.
/// The host passes `oxide_rt::Slice2d::new(&mut buf, cols)`.
///
/// Why no two threads meet: `cols` comes from the host (the same in every thread); rows of
/// distinct blocks are disjoint because every column is below `cols`; within a block, distinct
/// threads own distinct residues modulo `B`.
pub struct DisjointRows<'a, T> {
    ptr: NonNull<T>,
    len: usize,
    /// At most `u32::MAX` (the launchers refuse more).
    cols: u32,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> DisjointRows<'a, T> {
    /// Columns per row, as the host passed them.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols as usize
    }

    /// This block's row (the same for all its threads).
    #[inline(always)]
    pub fn row(&self) -> usize {
        super::thread::linear_position().0
    }

    /// The column of this thread's `k`-th element of the row, or `None` past the row's end
    /// (or past the buffer's end).
    #[inline(always)]
    pub fn column(&self, k: usize) -> Option<usize> {
        let (block, in_block, per_block) = super::thread::linear_position();
        let c = k.checked_mul(per_block)?.checked_add(in_block).filter(|&c| c < self.cols())?;
        block.checked_mul(self.cols())?.checked_add(c).filter(|&i| i < self.len)?;
        Some(c)
    }

    /// This thread's `k`-th element of the block's row: column `t + k * B` (see
    /// [`column`](Self::column) for when there is none).
    #[inline(always)]
    pub fn get_mut(&mut self, k: usize) -> Option<&mut T> {
        let c = self.column(k)?;
        let i = self.row() * self.cols() + c;
        // SAFETY: `i < len` and owned by this thread only (checked by `column`, see the type's docs); `&mut self` stops this thread from taking it twice.
        Some(unsafe { &mut *self.ptr.as_ptr().add(i) })
    }

    /// This thread's elements of the row with their columns, in order:
    /// `for (c, y) in rows.iter_mut() { *y = f(x[rows.row() * cols + c]); }`.
    #[inline(always)]
    pub fn iter_mut(&mut self) -> RowIterMut<'_, T> {
        let (block, in_block, per_block) = super::thread::linear_position();
        // Columns past the end of the buffer are cut off: the row stops at `len`.
        let base = block.saturating_mul(self.cols());
        let end = self.cols().min(self.len.saturating_sub(base));
        RowIterMut { ptr: self.ptr, base, next: in_block, step: per_block.max(1), end, _borrow: PhantomData }
    }
}

/// This thread's elements of its block's row, from [`DisjointRows::iter_mut`].
pub struct RowIterMut<'r, T> {
    ptr: NonNull<T>,
    base: usize,
    next: usize,
    step: usize,
    end: usize,
    _borrow: PhantomData<&'r mut [T]>,
}

impl<'r, T> Iterator for RowIterMut<'r, T> {
    type Item = (usize, &'r mut T);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let c = self.next;
        if c >= self.end {
            return None;
        }
        // `c < end <= u32::MAX` and `step` is at most the launch's thread count (`< 2^63`): a
        // plain add cannot wrap, and unlike a saturating one LLVM sees the loop's induction
        // variable in it, so the row loop is counted, unrolled and its bounds checks hoisted.
        self.next = c + self.step;
        // SAFETY: `base + c < len` (`end` is cut at the buffer's end); the columns this iterator yields are distinct (strictly increasing) and owned by this thread only (see `DisjointRows`), and the iterator holds the row's `&mut` borrow.
        Some((c, unsafe { &mut *self.ptr.as_ptr().add(self.base + c) }))
    }
}

/// A tile per block of a row-major matrix with `cols` columns (the host passes
/// `oxide_rt::Slice2d::new(&mut buf, cols)`): the block at `(bx, by)` of a 2-D grid owns the
/// `TH x TW` tile whose top-left element is row `by * TH`, column `bx * TW`. Inside the tile,
/// rows and columns are dealt out to the block's 2-D threads in groups of `G` consecutive ones,
/// round-robin: the thread at `(tx, ty)` ([`thread_idx`](super::thread::thread_idx)) of a
/// `BX x BY` block owns tile row `r` when `(r / G) % BY == ty` and tile column `c` when
/// `(c / G) % BX == tx`, and every element at such a row and column. Its `(i, j)`-th element
/// is tile row `((i / G) * BY + ty) * G + i % G`, column `((j / G) * BX + tx) * G + j % G`.
///
/// With `DOWN = true` the block at `(bx, by)` owns the tile at row `bx * TH`, column `by * TW`
/// instead: the blocks the GPU starts one after another (consecutive `bx`) walk down the rows.
/// A transpose wants that, so that consecutive blocks read its *input* along rows (H200, 16384²
/// f32: 0.58 ms against 0.69 ms with `DOWN = false`; BENCHMARKS.md).
///
/// The CUDA tiles it replaces: a transpose writing `out[(y0 + ty + k * 8) * n + x0 + tx]` from
/// a 32 x 8 block is `DisjointTiles<T, 32, 32, 1, true>` with `get_mut(k, 0)`; a GEMM thread holding an
/// 8 x 8 register tile as two 4 x 4 quadrants 64 rows and 64 columns apart (stores of 4
/// consecutive floats) is `DisjointTiles<T, 128, 128, 4>` on a 16 x 16 block with
/// `get_mut(i, j)` for `i, j < 8`.
///
/// Why no two threads meet: `TH`, `TW` and `G` are in the type and `cols` comes from the host,
/// so all threads agree on the tiling. Tiles of distinct blocks are disjoint (a tile never
/// wraps past column `cols`); inside a tile the owner of `(r, c)` is a function of `(r, c)`, so
/// distinct threads own disjoint elements; and a launch with more than one block or thread
/// along z owns nothing.
pub struct DisjointTiles<'a, T, const TH: usize, const TW: usize, const G: usize = 1, const DOWN: bool = false> {
    ptr: NonNull<T>,
    len: usize,
    /// At most `u32::MAX` (the launchers refuse more).
    cols: u32,
    /// `len / cols`, from the launcher: `row < rows && col < cols` puts `row * cols + col` below
    /// `len` without a multiplication overflow check.
    rows: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T, const TH: usize, const TW: usize, const G: usize, const DOWN: bool> DisjointTiles<'a, T, TH, TW, G, DOWN> {
    /// Tile sizes up to 2^16 keep every tile coordinate far below `usize::MAX`, so only the final
    /// `row * cols + col` needs an overflow check.
    const SHAPE_OK: () = assert!(
        TH > 0 && TW > 0 && G > 0 && TH <= 1 << 16 && TW <= 1 << 16 && G <= 1 << 16,
        "DisjointTiles<T, TH, TW, G>: TH, TW and G must be between 1 and 65536"
    );

    /// Columns of the matrix, as the host passed them.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols as usize
    }

    /// Whole rows in the buffer (`len / cols`; 0 when `cols` is 0).
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Row and column of this block's tile's top-left element (`by * TH`, `bx * TW`; with
    /// `DOWN`, `bx * TH`, `by * TW`).
    #[inline(always)]
    pub fn origin(&self) -> (usize, usize) {
        let () = Self::SHAPE_OK;
        let b = super::thread::block_idx();
        let (along_rows, along_cols) = if DOWN { (b.x, b.y) } else { (b.y, b.x) };
        (along_rows as usize * TH, along_cols as usize * TW)
    }

    /// Matrix row and column of this thread's `(i, j)`-th element, or `None` when it has none:
    /// past the tile, past the matrix, or a launch with more than one block or thread along z.
    #[inline(always)]
    pub fn position(&self, i: usize, j: usize) -> Option<(usize, usize)> {
        let () = Self::SHAPE_OK;
        let (t, bd) = (super::thread::thread_idx(), super::thread::block_dim());
        if super::thread::grid_dim().z != 1 || bd.z != 1 {
            return None;
        }
        // `i / G * BY` stays below 2^48 for any `i` that can pass the `< TH` test: bound it first.
        let (tr, tc) = (Self::deal(i, t.y, bd.y, TH)?, Self::deal(j, t.x, bd.x, TW)?);
        let (row0, col0) = self.origin();
        let (row, col) = (row0 + tr, col0 + tc);
        (row < self.rows && col < self.cols()).then_some((row, col))
    }

    /// The `k`-th tile row (or column) of the thread at `p` of `n` along that axis, if below `size`.
    #[inline(always)]
    fn deal(k: usize, p: u32, n: u32, size: usize) -> Option<usize> {
        let group = k / G;
        if group >= size {
            return None; // so that `group * n` below cannot overflow
        }
        let r = (group * n as usize + p as usize) * G + k % G;
        (r < size).then_some(r)
    }

    /// This thread's `(i, j)`-th element (see [`position`](Self::position) for when there is
    /// none).
    #[inline(always)]
    pub fn get_mut(&mut self, i: usize, j: usize) -> Option<&mut T> {
        let (row, col) = self.position(i, j)?;
        // SAFETY: `row < rows = len / cols` and `col < cols` (checked by `position`), so `row * cols + col < len`; owned by this thread only (see the type's docs); `&mut self` stops this thread from taking it twice.
        Some(unsafe { &mut *self.ptr.as_ptr().add(row * self.cols() + col) })
    }
}

/// Elements paired with a partner at xor distance `d` (from the host: `oxide_rt::Pairs::new(&mut
/// buf, d)`): the thread with launch index `i` ([`thread::index`](super::thread::index)) owns
/// the pair `(i, i ^ d)` when `i < i ^ d` — the compare-exchange step of a bitonic sort, where
/// `d` is the step's `j`.
///
/// Why no two threads meet: `d` is the same in every thread, `x ↦ x ^ d` swaps the two members
/// of each pair, so the pairs partition the indices, and only the pair's smaller member's thread
/// owns it.
pub struct DisjointXorPairs<'a, T> {
    ptr: NonNull<T>,
    len: usize,
    /// At most `u32::MAX` (the launchers refuse more).
    distance: u32,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> DisjointXorPairs<'a, T> {
    /// The pair distance, as the host passed it.
    #[inline(always)]
    pub fn distance(&self) -> usize {
        self.distance as usize
    }

    /// `(i, i ^ d)` for this thread, or `None` when it owns no pair (`i > i ^ d`, `d == 0`, or
    /// the partner is past the end).
    #[inline(always)]
    pub fn indices(&self) -> Option<(usize, usize)> {
        let i = super::thread::index().get();
        let partner = i ^ self.distance();
        (i < partner && partner < self.len).then_some((i, partner))
    }

    /// This thread's pair `(element i, element i ^ d)`, lower index first.
    #[inline(always)]
    pub fn pair_mut(&mut self) -> Option<(&mut T, &mut T)> {
        let (lo, hi) = self.indices()?;
        // SAFETY: `lo < hi < len` (checked by `indices`), so two distinct in-bounds elements, owned by this thread only (see the type's docs); `&mut self` stops this thread from taking them twice.
        Some(unsafe { (&mut *self.ptr.as_ptr().add(lo), &mut *self.ptr.as_ptr().add(hi)) })
    }
}

/// Butterfly pairs at distance `h` (from the host: `oxide_rt::Pairs::new(&mut buf, h)`): the
/// thread with launch index `t` owns `(i0, i0 + h)` with `i0 = (t / h) * 2h + t % h` — one stage
/// of a radix-2 FFT or Walsh–Hadamard transform, launched with `len / 2` threads.
///
/// Why no two threads meet: `h` is the same in every thread; `t ↦ i0` is injective (`t / h`
/// and `t % h` are recovered from `i0`), and every `i0` has `i0 % 2h < h` while every `i0 + h`
/// has it `≥ h`, so no element is the low member of one pair and the high member of another.
pub struct DisjointButterflies<'a, T> {
    ptr: NonNull<T>,
    len: usize,
    /// At most `u32::MAX` (the launchers refuse more).
    half: u32,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> DisjointButterflies<'a, T> {
    /// The distance `h` between a pair's members, as the host passed it.
    #[inline(always)]
    pub fn half(&self) -> usize {
        self.half as usize
    }

    /// `(i0, i0 + h)` for this thread, or `None` when `h == 0` or the pair is past the end.
    #[inline(always)]
    pub fn indices(&self) -> Option<(usize, usize)> {
        let (t, h) = (super::thread::index().get(), self.half());
        // `i0 >= t`, so a thread at or past the end owns nothing; below it, `i0 <= 2t` cannot
        // wrap (`len <= isize::MAX`), and no overflow test is left but the last add's.
        if h == 0 || t >= self.len {
            return None;
        }
        let i0 = t.wrapping_add((t / h).wrapping_mul(h));
        let i1 = i0.checked_add(h).filter(|&i| i < self.len)?;
        Some((i0, i1))
    }

    /// This thread's pair `(element i0, element i0 + h)`.
    #[inline(always)]
    pub fn pair_mut(&mut self) -> Option<(&mut T, &mut T)> {
        let (lo, hi) = self.indices()?;
        // SAFETY: `lo < hi < len` (checked by `indices`, `h > 0`), two distinct in-bounds elements owned by this thread only (see the type's docs); `&mut self` stops this thread from taking them twice.
        Some(unsafe { (&mut *self.ptr.as_ptr().add(lo), &mut *self.ptr.as_ptr().add(hi)) })
    }
}

/// An output filled by claims, for compaction, work lists and outputs whose size is known only
/// when the kernel runs: each [`push`](Self::push) takes the next free element. The host passes
/// the buffer with a `u64` counter, `oxide_rt::Append::new(&mut buf, &mut count)`; every push
/// adds one to `count[0]`, and a push whose claim is at or past the end of the buffer is dropped
/// (`None`), so afterwards `min(count[0], len)` elements are written. On the GPU the claims of
/// the lanes of a warp that push together are one atomic add (CUDA's compiler does the same for
/// `atomicAdd(&count, 1)`). Their order is the order the claims happened in, which varies from
/// run to run.
///
/// Why no two threads meet: every claim is an atomic add on the launch's one counter, so no two
/// claims return the same value (fewer than 2^64 claims per launch cannot wrap it), and an element
/// is written only by the push whose claim named it.
pub struct DisjointAppend<'a, T> {
    ptr: NonNull<T>,
    len: usize,
    count: NonNull<AtomicU64>,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> DisjointAppend<'a, T> {
    /// Writes `value` to the next free element and returns its index, or `None` when the claim
    /// falls past the end of the buffer (the value is dropped; the counter still counts it).
    #[inline(always)]
    pub fn push(&mut self, value: T) -> Option<usize> {
        // SAFETY: `count` is the launch's counter (from_raw's contract 5), live for the launch and only ever accessed atomically.
        let claim = super::backend::append_claim(unsafe { self.count.as_ref() });
        let i = usize::try_from(claim).ok().filter(|&i| i < self.len)?;
        // SAFETY: `i < len`, and no other push of this launch claimed `i` (see the type's docs), so this is the only write to it.
        unsafe { self.ptr.as_ptr().add(i).write(value) };
        Some(i)
    }
}

impl<T> OutputSlice for DisjointAppend<'_, T> {
    type Elem = T;
    const NAME: &'static str = "DisjointAppend";
    #[inline(always)]
    unsafe fn from_raw(ptr: *mut T, len: usize, shape: [usize; 3]) -> Self {
        // SAFETY: non-null by contract 3 (`len` elements there by contract 1); the counter's address is non-null and 8-aligned by contract 5.
        let (ptr, count) = unsafe {
            assume_buffer::<T>(ptr, len);
            (NonNull::new_unchecked(ptr), NonNull::new_unchecked(shape[0] as *mut AtomicU64))
        };
        DisjointAppend { ptr, len, count, _borrow: PhantomData }
    }
}

/// Tells the optimiser what every slice of `T` obeys: at most `isize::MAX` bytes (Rust's rule for
/// any allocation, which the launchers' device buffers meet), so an index known to be below the
/// length is far from `usize::MAX` and small offsets of it cannot wrap. Without this, `i + k`
/// after `i < len` keeps a wrap test per `k` (`(i + k).checked_sub(r)`: two compares per tap).
///
/// # Safety
/// `len` is the length of a live slice of `T`.
#[inline(always)]
pub(crate) unsafe fn assume_slice_len<T>(len: usize) {
    if core::mem::size_of::<T>() != 0 {
        // SAFETY: a live slice of `len` `T`s spans `len * size_of::<T>() <= isize::MAX` bytes (caller).
        unsafe { core::hint::assert_unchecked(len <= isize::MAX as usize / core::mem::size_of::<T>()) }
    }
}

/// The alignment of every kernel buffer of `T`s on the GPU: the largest power of two dividing
/// `size_of::<T>()`, at most 16 (the widest load), never below `align_of::<T>()`. Device memory
/// comes in allocations aligned to 256 bytes and a view starts a whole number of elements in,
/// so a `[f32; 2]` buffer sits on 8 bytes and a `[f32; 4]` on 16, as CUDA's `float2`/`float4`
/// do; the launchers check it (`Err` otherwise). Knowing it, LLVM reads an element with one
/// vector load (`ld.global.v2.f32`) instead of one load per field.
pub const fn buffer_align<T>() -> usize {
    let size = core::mem::size_of::<T>();
    let align = core::mem::align_of::<T>();
    let low_bit = size & size.wrapping_neg();
    if low_bit > align && align < 16 {
        if low_bit < 16 {
            low_bit
        } else {
            16
        }
    } else {
        align
    }
}

/// [`assume_slice_len`], and on the GPU that `ptr` is aligned to [`buffer_align`].
///
/// # Safety
/// `ptr`/`len` are a kernel buffer as the launchers pass it (`OutputSlice::from_raw`'s contracts
/// 1 and 3).
#[inline(always)]
pub(crate) unsafe fn assume_buffer<T>(ptr: *const T, len: usize) {
    // SAFETY: `len` is a live slice's length (caller).
    unsafe { assume_slice_len::<T>(len) };
    // The CPU executor's buffers are plain host allocations, aligned to `align_of::<T>()` only.
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the launchers refuse a buffer off this alignment and substitute aligned addresses for empty ones (caller).
    unsafe {
        core::hint::assert_unchecked(ptr as usize % buffer_align::<T>() == 0)
    };
    #[cfg(not(target_arch = "nvptx64"))]
    let _ = ptr;
}

/// How generated code turns a kernel's output pointer and length back into its output type.
#[doc(hidden)]
pub trait OutputSlice {
    type Elem;
    /// The type's own name. `#[kernel]` picks an output's host checks and shape words by the
    /// name written in the signature, and asserts at compile time that it is this one (an
    /// imported alias such as `DisjointSlice2d as DisjointSlice3d` would get another type's
    /// shape).
    const NAME: &'static str;
    /// # Safety
    /// 1. `ptr..ptr+len` is a live allocation of initialised `T`s for the output's lifetime.
    /// 2. Every other view of that memory meanwhile is an output of the same type in the same
    ///    launch, held by another thread, so the type's ownership rule (one element per
    ///    `ThreadIndex`, one chunk per `ThreadIndex`, interleaved per block) keeps their
    ///    elements apart.
    /// 3. `ptr` is non-null and aligned (on the GPU to [`buffer_align`]), also when `len == 0` (the launchers substitute an
    ///    aligned dangling address for empty slices).
    /// 4. `shape` is the same in every thread of the launch (a kernel argument the host built:
    ///    `[cols, len / cols, 0]` for [`DisjointSlice2d`], [`DisjointRows`] and [`DisjointTiles`]
    ///    (the rows may exceed `u32::MAX`), `[cols, rows, len / (cols * rows)]` for
    ///    [`DisjointSlice3d`] (the planes may exceed `u32::MAX`), `[distance, 0, 0]` for
    ///    [`DisjointXorPairs`] and [`DisjointButterflies`], ignored by the others), each other
    ///    word at most `u32::MAX`, except:
    /// 5. for [`DisjointAppend`], `shape[0]` is the address of the launch's claim counter, a `u64`
    ///    that is live for the launch and only accessed atomically (by the launch's pushes).
    unsafe fn from_raw(ptr: *mut Self::Elem, len: usize, shape: [usize; 3]) -> Self;
}

/// What every output type has: `len` and `is_empty`.
macro_rules! output_len {
    ($name:ident $(, const $n:ident: $nt:ty)*) => {
        impl<T $(, const $n: $nt)*> $name<'_, T $(, $n)*> {
            /// Elements in the whole buffer.
            #[inline(always)]
            pub fn len(&self) -> usize {
                self.len
            }

            /// Whether the buffer has no elements.
            #[inline(always)]
            pub fn is_empty(&self) -> bool {
                self.len == 0
            }
        }
    };
}

pub(super) use output_len;

/// What the output types share: construction from the launch's pointer and length (and shape
/// words that fit `u32`), `len`.
macro_rules! output_type {
    ($name:ident $(, const $n:ident: $nt:ty)* $(; $($field:ident = $shape:literal),*)?) => {
        output_len!($name $(, const $n: $nt)*);

        impl<T $(, const $n: $nt)*> OutputSlice for $name<'_, T $(, $n)*> {
            type Elem = T;
            const NAME: &'static str = stringify!($name);
            #[inline(always)]
            unsafe fn from_raw(ptr: *mut T, len: usize, _shape: [usize; 3]) -> Self {
                // SAFETY: non-null by contract 3; `len` elements live there by contract 1.
                let ptr = unsafe {
                    assume_buffer::<T>(ptr, len);
                    NonNull::new_unchecked(ptr)
                };
                // Shape words fit in u32: the launchers refuse larger ones (`check_shape`).
                $name { ptr, len, $($($field: _shape[$shape] as u32,)*)? _borrow: PhantomData }
            }
        }
    };
}
output_len!(DisjointTiles, const TH: usize, const TW: usize, const G: usize, const DOWN: bool);
output_len!(DisjointAppend);
output_type!(DisjointSlice);
output_type!(DisjointChunks, const N: usize);
output_type!(DisjointStrided, const N: usize);
output_len!(DisjointSlice2d);
output_len!(DisjointSlice3d);
output_type!(DisjointPerWarp);
output_type!(DisjointPerBlock);
output_type!(DisjointRows; cols = 0);
impl<T, const TH: usize, const TW: usize, const G: usize, const DOWN: bool> OutputSlice
    for DisjointTiles<'_, T, TH, TW, G, DOWN>
{
    type Elem = T;
    const NAME: &'static str = "DisjointTiles";
    #[inline(always)]
    unsafe fn from_raw(ptr: *mut T, len: usize, shape: [usize; 3]) -> Self {
        // SAFETY: non-null by contract 3; `len` elements live there by contract 1.
        let ptr = unsafe {
            assume_buffer::<T>(ptr, len);
            NonNull::new_unchecked(ptr)
        };
        // `cols` fits in u32 (`check_shape`); `rows` is `len / cols` (`with_rows`).
        DisjointTiles { ptr, len, cols: shape[0] as u32, rows: shape[1], _borrow: PhantomData }
    }
}
impl<T> OutputSlice for DisjointSlice2d<'_, T> {
    type Elem = T;
    const NAME: &'static str = "DisjointSlice2d";
    #[inline(always)]
    unsafe fn from_raw(ptr: *mut T, len: usize, shape: [usize; 3]) -> Self {
        // SAFETY: non-null by contract 3; `len` elements live there by contract 1.
        let ptr = unsafe {
            assume_buffer::<T>(ptr, len);
            NonNull::new_unchecked(ptr)
        };
        // `cols` fits in u32 (`check_shape`); `rows` is `len / cols` (`with_rows`).
        DisjointSlice2d { ptr, len, cols: shape[0] as u32, rows: shape[1], _borrow: PhantomData }
    }
}
output_type!(DisjointXorPairs; distance = 0);
output_type!(DisjointButterflies; half = 0);
impl<T> OutputSlice for DisjointSlice3d<'_, T> {
    type Elem = T;
    const NAME: &'static str = "DisjointSlice3d";
    #[inline(always)]
    unsafe fn from_raw(ptr: *mut T, len: usize, shape: [usize; 3]) -> Self {
        // SAFETY: non-null by contract 3; `len` elements live there by contract 1.
        let ptr = unsafe {
            assume_buffer::<T>(ptr, len);
            NonNull::new_unchecked(ptr)
        };
        // `cols` and `rows` fit in u32 (`check_shape`); `planes` is `len / (cols * rows)` (`with_planes`).
        DisjointSlice3d {
            ptr,
            len,
            cols: shape[0] as u32,
            rows: shape[1] as u32,
            planes: shape[2],
            _borrow: PhantomData,
        }
    }
}
