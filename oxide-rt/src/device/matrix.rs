//! `Matrix<T>`: a row-major matrix argument whose shape comes from the host.

use core::marker::PhantomData;

/// A row-major `rows x cols` matrix, passed as `oxide_rt::Matrix::new(&buf, rows, cols)` (a
/// `CudaSlice<T>` for `launch_*`, a `[T]` for `cpu_*`). Read-only like `&[T]`, or with atomic
/// elements (`Matrix<AtomicF32>`, a `MatrixMut` of a `CudaSlice<f32>` on the host) for outputs that threads
/// update or store through atomics, like `&[AtomicF32]`.
///
/// Why: with a plain `&[T]`, `a[r * cols + c]` checks the flat index against the buffer's
/// length, a check the optimiser cannot prove from `r < rows` and `c < cols` (it is not
/// linear), so every such read keeps a branch to a panic — and a loop with such branches is a
/// loop whose loads cannot be batched. Here the launchers check once that the buffer holds
/// `rows * cols` elements, so [`get`](Self::get) needs only `r < rows && c < cols`, the very
/// comparisons a kernel makes for its edges anyway: the optimiser merges them and the read
/// carries no panic path.
pub struct Matrix<'a, T> {
    ptr: *const T,
    /// Both at most `u32::MAX` (the launchers refuse more), so `r * cols + c` fits in `usize`.
    rows: u32,
    cols: u32,
    _borrow: PhantomData<&'a [T]>,
}

impl<T> Clone for Matrix<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Matrix<'_, T> {}

impl<'a, T> Matrix<'a, T> {
    /// Rebuilds the argument from what the launcher passed: pointer, length, `[cols, rows]`.
    ///
    /// # Safety
    /// `ptr` must point to `len >= rows * cols` initialised `T`s that nobody writes while the
    /// matrix is alive (except through `T`'s own interior mutability: atomics), and `cols`, `rows` must fit in `u32` (the launchers check both).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *const T, len: usize, shape: [usize; 2]) -> Self {
        let [cols, rows] = shape;
        debug_assert!(cols <= u32::MAX as usize && rows <= u32::MAX as usize && rows * cols <= len);
        // Saying so lets `get`'s `Option<&T>` fold its null test away, and bounds indices by `len`.
        // SAFETY: the launchers never pass null (an empty buffer gets an aligned pad address), and `len` elements live there (the caller's contract).
        unsafe {
            core::hint::assert_unchecked(!ptr.is_null());
            super::assume_buffer::<T>(ptr, len);
        }
        Matrix { ptr, rows: rows as u32, cols: cols as u32, _borrow: PhantomData }
    }

    /// Rows, as the host passed them.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows as usize
    }

    /// Columns per row, as the host passed them.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols as usize
    }

    /// Element `(row, col)`, or `None` outside the matrix.
    #[inline(always)]
    pub fn get(&self, row: usize, col: usize) -> Option<&'a T> {
        if row < self.rows() && col < self.cols() {
            // SAFETY: row < rows and col < cols, so row * cols + col < rows * cols <= len (from_raw's contract); both fit in u32, so the product cannot overflow usize.
            Some(unsafe { &*self.ptr.add(row * self.cols() + col) })
        } else {
            None
        }
    }

    /// Row `row` as a slice, or `None` past the last row.
    #[inline(always)]
    pub fn row(&self, row: usize) -> Option<&'a [T]> {
        if row < self.rows() {
            // SAFETY: the row's cols elements end at (row + 1) * cols <= rows * cols <= len.
            Some(unsafe { core::slice::from_raw_parts(self.ptr.add(row * self.cols()), self.cols()) })
        } else {
            None
        }
    }

    /// Elements `(row, col)` to `(row, col + N - 1)`, each one outside the matrix replaced by
    /// `fill`: a tile's loads with its edges zero-filled, and no branch in the kernel's code.
    ///
    /// A chunk wholly inside is read as one `N`-element vector (`ld.global.nc.v4.b32` for four
    /// `f32`s: one instruction and one request where `N` scalar reads make `N` of each) when it
    /// is 8 or 16 bytes and the matrix's first element, its row length and `col` are aligned to
    /// that size. The test is on the matrix as a whole, so when `col` steps by multiples of `N`
    /// it is the same for every read and the optimiser makes it once; any other matrix (a row
    /// length not a multiple of `N`) is read element by element, with the same result.
    #[inline(always)]
    pub fn chunk_or<const N: usize>(&self, row: usize, col: usize, fill: T) -> [T; N]
    where
        T: Copy,
    {
        let (rows, cols) = (self.rows(), self.cols());
        if row >= rows || col > cols || cols - col < N {
            return core::array::from_fn(|j| {
                col.checked_add(j).and_then(|c| self.get(row, c)).copied().unwrap_or(fill)
            });
        }
        let size = core::mem::size_of::<T>();
        let bytes = N * size;
        let aligned = (self.ptr as usize | (cols * size) | (col * size)) % bytes.max(1) == 0;
        // SAFETY: row < rows and col + N <= cols (tested above), so the N elements from row * cols + col lie within rows * cols <= len (from_raw's contract); no overflow, as rows and cols fit in u32.
        let p = unsafe { self.ptr.add(row * cols + col) };
        let p = p.cast::<u8>();
        match bytes {
            // SAFETY: `p` is aligned to 16 (start, row length and column are), its 16 bytes are the chunk's N elements in the matrix (above), global memory on the GPU (only a launcher makes a `Matrix`) that nothing writes during the launch (`T: Copy` has no interior mutability); `[T; N]` is those 16 bytes, which hold valid `T`s.
            16 if aligned => unsafe { core::mem::transmute_copy(&super::backend::read_global_16(p)) },
            // SAFETY: as above, for 8 bytes aligned to 8.
            8 if aligned => unsafe { core::mem::transmute_copy(&super::backend::read_global_8(p)) },
            // SAFETY: the N elements from `p` are in the matrix (above), each aligned for T.
            _ => core::array::from_fn(|j| unsafe { *p.cast::<T>().add(j) }),
        }
    }

    /// The first element's address: never null, aligned for `T`, in global memory on the GPU
    /// (a `Matrix` only comes from a launcher's buffer).
    #[inline(always)]
    pub(crate) fn as_ptr(&self) -> *const T {
        self.ptr
    }

    /// All `rows * cols` elements, row after row.
    #[inline(always)]
    pub fn as_slice(&self) -> &'a [T] {
        // SAFETY: rows * cols <= len initialised elements (from_raw's contract); the pointer is non-null and aligned even for an empty matrix (the launchers never pass null).
        unsafe { core::slice::from_raw_parts(self.ptr, self.rows() * self.cols()) }
    }
}

impl<T> core::ops::Index<(usize, usize)> for Matrix<'_, T> {
    type Output = T;

    /// Element `(row, col)`; panics outside the matrix, like slice indexing.
    #[inline(always)]
    #[track_caller]
    fn index(&self, (row, col): (usize, usize)) -> &T {
        match self.get(row, col) {
            Some(v) => v,
            None => out_of_range(row, col, self.rows(), self.cols()),
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_range(row: usize, col: usize, rows: usize, cols: usize) -> ! {
    panic!("matrix index ({row}, {col}) out of range for a {rows} x {cols} matrix")
}
