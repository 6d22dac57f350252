//! Output slices written by many threads at once.

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
    /// # Safety
    /// 1. `ptr..ptr+len` is a live allocation of initialised `T`s for `'a`.
    /// 2. Every other view of that memory during `'a` is another `DisjointSlice` of the same
    ///    launch, each owned by a different thread (so their `ThreadIndex`es differ).
    /// 3. `ptr` is non-null and aligned, also when `len == 0`.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut T, len: usize) -> Self {
        // SAFETY: non-null by contract 3 (the launchers substitute an aligned dangling
        // address for empty slices).
        let ptr = unsafe { NonNull::new_unchecked(ptr) };
        DisjointSlice { ptr, len, _borrow: PhantomData }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

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
    pub fn get_mut(&mut self, i: ThreadIndex) -> Option<&mut T> {
        let i = i.get();
        if i < self.len {
            // SAFETY: in bounds (checked above); no other thread holds index `i` (ThreadIndex is
            // unique per launch) and `&mut self` stops this thread from taking it twice.
            Some(unsafe { &mut *self.ptr.as_ptr().add(i) })
        } else {
            None
        }
    }
}
