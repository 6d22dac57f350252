//! Output slices written by many threads at once.

use super::thread::ThreadIndex;
use core::marker::PhantomData;

/// A kernel's output buffer. Each thread may write only the element at its own
/// [`ThreadIndex`], which is unique across the launch, so handing out `&mut T` cannot alias
/// between threads. (`&mut [T]` shared by all threads would be aliasing UB; it is not offered.)
pub struct DisjointSlice<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> DisjointSlice<'a, T> {
    /// # Safety
    /// 1. `ptr..ptr+len` is a live allocation of initialised `T`s for `'a`.
    /// 2. Every other view of that memory during `'a` is another `DisjointSlice` of the same
    ///    launch, each owned by a different thread (so their `ThreadIndex`es differ).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut T, len: usize) -> Self {
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

    /// The element owned by thread `i`, or `None` past the end.
    #[inline(always)]
    pub fn get_mut(&mut self, i: ThreadIndex) -> Option<&mut T> {
        let i = i.get();
        if i < self.len {
            // SAFETY: in bounds (checked above); no other thread holds index `i` (ThreadIndex is
            // unique per launch) and `&mut self` stops this thread from taking it twice.
            Some(unsafe { &mut *self.ptr.add(i) })
        } else {
            None
        }
    }
}
