//! Shared memory: per-block storage visible to all threads of a block.
//!
//! * [`shared_array!`](crate::shared_array) declares a fixed-size array in the kernel, like
//!   CUDA's `__shared__ float tile[256];`, and returns a [`SharedSlice`] (or a [`Shared2d`]).
//! * [`dynamic_shared`] views the launch's dynamic shared memory
//!   (`LaunchConfig::shared_mem_bytes`), like CUDA's `extern __shared__ float buf[];`.
//!
//! # The rules (the same as CUDA's)
//! The handles are `Copy` and every thread of the block holds one, so the type system cannot
//! stop two threads from touching one element at once. Accesses are plain loads and stores
//! (`ld.shared`/`st.shared`) through raw pointers; [`get`](SharedSlice::get) and
//! [`set`](SharedSlice::set) check bounds (and panic past the end, like slice indexing). What
//! the program must do itself, exactly as in CUDA:
//! 1. Separate a write by one thread and an access to the same element by another thread with
//!    a barrier ([`sync_threads`](super::sync::sync_threads)) or use atomics; without one it is
//!    a data race and the value read is unspecified.
//! 2. Write an element before reading it: shared memory starts with garbage in every block.
//!    (A read of an element no thread wrote yet gives some value of the type, never undefined
//!    behaviour: the statics are declared zeroed, so the compiler may fold a read of an array
//!    that is never written to zero, never to an undefined value; the IR stage then drops the
//!    initialiser, as `.shared` memory cannot have one.)
//!
//! Element types are limited to [`SharedElem`] types: every kernel argument type (numbers,
//! arrays of them, your `#[repr(C)]` structs with `#[derive(KernelArg)]`), for which every bit
//! pattern is a valid value, so a garbage or torn read yields a wrong number, never an invalid
//! value. Dynamic shared memory ([`dynamic_shared`]) also refuses, when the kernel is compiled,
//! structs with padding bytes: all its views share one window, and padding stored through one
//! type would be read, uninitialised, through another.

use super::backend;
use crate::KernelArg;
use core::marker::PhantomData;

/// What an access through the API does to the element (for the CPU executor's race check).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(target_arch = "nvptx64", allow(dead_code))]
pub(crate) enum Access {
    Read,
    Write,
    AtomicRead,
    /// An atomic store or read-modify-write.
    AtomicWrite,
}

/// A type that may live in shared memory: a `Copy` [`KernelArg`] (see the [module
/// rules](self)). Derive `KernelArg` for your own `#[repr(C)]` element types; there is nothing
/// to implement by hand.
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes must be a valid `Self` (what `KernelArg`
/// promises already).
pub unsafe trait SharedElem: Copy {
    /// Whether every byte of a value belongs to a field (no padding bytes).
    #[doc(hidden)]
    const PADDING_FREE: bool;
}

// SAFETY: a `KernelArg` is plain data with no invalid values (its own safety contract, checked
// field by field by the derive), so any bytes shared memory holds read back as a valid value.
unsafe impl<T: KernelArg + Copy> SharedElem for T {
    const PADDING_FREE: bool = T::PADDING_FREE;
}

/// The views of dynamic shared memory are one window whatever their types: a struct stored
/// through one leaves its padding bytes uninitialised, which another type would then read.
const PADDED_DYNAMIC: &str = "dynamic shared memory of a type with padding bytes: every view of the window sees the \
     same bytes, and padding read through another type is uninitialised; add explicit padding fields (e.g. \
     `_pad: [u8; 3]`) so every byte of the struct is a field";

const PADDED_CAST: &str = "SharedSlice::cast between types with padding bytes: padding stored through one type is \
     uninitialised when read through the other; add explicit padding fields so every byte is a field";

#[cold]
#[inline(never)]
#[track_caller]
fn misaligned_cast(align: usize) -> ! {
    panic!("SharedSlice::cast: the view does not start {align}-byte aligned, as the new element type needs")
}

/// Whether the CPU executor checks the running block's shared-memory accesses (never on the
/// GPU).
#[inline(always)]
pub(crate) fn block_checked() -> bool {
    #[cfg(not(target_arch = "nvptx64"))]
    return backend::shared_block().1;
    #[cfg(target_arch = "nvptx64")]
    false
}

/// Tells the CPU executor's checks about an access of `bytes` bytes at `at` when `checked`
/// (nothing on the GPU).
#[inline(always)]
#[track_caller]
pub(crate) fn track_access(checked: bool, at: *const u8, bytes: usize, access: Access) {
    #[cfg(not(target_arch = "nvptx64"))]
    if checked {
        backend::shared_access(at, bytes, access, core::panic::Location::caller());
    }
    #[cfg(target_arch = "nvptx64")]
    let _ = (checked, at, bytes, access);
}

/// A view of `len` elements of shared memory. `Copy`: hand it to helpers freely.
///
/// A view is only good inside the block that made it. On the GPU it cannot leave the kernel in
/// safe code (it is neither `Send` nor `Sync`, and the device has no thread-locals); in the host
/// build a kernel could stash one in a thread-local or a leaked box, so on the CPU executor every
/// checked access also checks that it runs in the block the view came from (and panics, instead
/// of touching freed memory, when not).
pub struct SharedSlice<T> {
    ptr: *mut T,
    len: usize,
    /// The CPU executor's id of the block whose memory this is.
    #[cfg(not(target_arch = "nvptx64"))]
    block: u64,
    _t: PhantomData<T>,
}

impl<T> Clone for SharedSlice<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SharedSlice<T> {}

impl<T: SharedElem> SharedSlice<T> {
    /// # Safety
    /// `ptr..ptr+len` is shared (or, on the CPU executor, the running block's) memory, aligned
    /// for `T`, that lives for the whole kernel and is only accessed under the module rules.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut T, len: usize) -> Self {
        #[cfg(not(target_arch = "nvptx64"))]
        let block = backend::shared_block_id();
        SharedSlice {
            ptr,
            len,
            #[cfg(not(target_arch = "nvptx64"))]
            block,
            _t: PhantomData,
        }
    }

    /// A view of `ptr..ptr+len` within this one (same block).
    #[inline(always)]
    fn part(self, ptr: *mut T, len: usize) -> Self {
        SharedSlice { ptr, len, ..self }
    }

    /// Panics (CPU executor) when the view is used outside the block that made it; nothing on
    /// the GPU, where it cannot happen. Returns whether the executor checks this block's
    /// accesses for races (one look at the running block answers both).
    #[inline(always)]
    #[track_caller]
    fn check_live(self) -> bool {
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let (block, checked) = backend::shared_block();
            if block != self.block {
                stale_view();
            }
            checked
        }
        #[cfg(target_arch = "nvptx64")]
        false
    }

    /// Whether the CPU executor checks the running block's accesses for races (for the
    /// accessors that skip [`check_live`](Self::check_live)).
    #[inline(always)]
    fn checked() -> bool {
        block_checked()
    }

    /// Tells the CPU executor's race check about an access of element `i` when `checked`
    /// (nothing on the GPU).
    #[inline(always)]
    #[track_caller]
    fn track(self, checked: bool, i: usize, access: Access) {
        track_access(checked, self.ptr.wrapping_add(i) as *const u8, core::mem::size_of::<T>(), access);
    }

    /// The address of elements `i..i + n` for an operation that accesses them as a whole
    /// (`ldmatrix`, `cp.async`), and whether the CPU executor checks races in this block (the
    /// caller reports the access). Panics when the range is out of bounds or, on the CPU
    /// executor, the view is used outside its block.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn range_ptr(self, i: usize, n: usize) -> (*mut T, bool) {
        let checked = self.check_live();
        if i > self.len || self.len - i < n {
            out_of_bounds(i.saturating_add(n).saturating_sub(1), self.len);
        }
        // SAFETY: `i + n <= len` (checked above), so the pointer stays within the view.
        (unsafe { self.ptr.add(i) }, checked)
    }

    /// Elements in the array.
    #[inline(always)]
    pub fn len(self) -> usize {
        self.len
    }

    /// Whether the array has no elements.
    #[inline(always)]
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// The element at `i`. Panics when `i >= len` (like `slice[i]`).
    #[inline(always)]
    #[track_caller]
    pub fn get(self, i: usize) -> T {
        let checked = self.check_live();
        if i >= self.len {
            out_of_bounds(i, self.len);
        }
        self.track(checked, i, Access::Read);
        // SAFETY: in bounds; a plain load, racing accesses being the program's responsibility (module rules), and any bit pattern being a valid `T` (`SharedElem`).
        unsafe { self.ptr.add(i).read() }
    }

    /// Stores `v` at `i`. Panics when `i >= len`.
    #[inline(always)]
    #[track_caller]
    pub fn set(self, i: usize, v: T) {
        let checked = self.check_live();
        if i >= self.len {
            out_of_bounds(i, self.len);
        }
        self.track(checked, i, Access::Write);
        // SAFETY: in bounds; a plain store (module rules).
        unsafe { self.ptr.add(i).write(v) }
    }

    /// The element at `i`, or `None` past the end.
    #[inline(always)]
    #[track_caller]
    pub fn try_get(self, i: usize) -> Option<T> {
        let checked = self.check_live();
        if i >= self.len {
            return None;
        }
        self.track(checked, i, Access::Read);
        // SAFETY: in bounds (checked above).
        Some(unsafe { self.ptr.add(i).read() })
    }

    /// The element at `i` without a bounds check.
    ///
    /// # Safety
    /// `i < self.len()`, and the view is used in the block that made it.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn get_unchecked(self, i: usize) -> T {
        self.track(Self::checked(), i, Access::Read);
        // SAFETY: the caller keeps `i` in bounds.
        unsafe { self.ptr.add(i).read() }
    }

    /// Stores `v` at `i` without a bounds check.
    ///
    /// # Safety
    /// `i < self.len()`, and the view is used in the block that made it.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn set_unchecked(self, i: usize, v: T) {
        self.track(Self::checked(), i, Access::Write);
        // SAFETY: the caller keeps `i` in bounds.
        unsafe { self.ptr.add(i).write(v) }
    }

    /// The first element's address (for atomics on shared memory, or raw access).
    #[inline(always)]
    pub fn as_ptr(self) -> *mut T {
        self.ptr
    }

    /// Element `i` used atomically (`u32` as an `AtomicU32`, `f32` as an `AtomicF32`, …), e.g.
    /// for a per-block histogram: `bins.atomic(b).atomic_add(1, Scope::Block)`. Panics when
    /// `i >= len`. Mixing atomic and plain accesses to one element needs a barrier between them.
    ///
    /// It returns a [`SharedAtomic`] handle rather than a `&AtomicU32`: a reference could be
    /// kept past the launch (a `'static` one stored in a `static`), and on the CPU executor the
    /// block's memory is freed when the block ends.
    #[inline(always)]
    #[track_caller]
    pub fn atomic(self, i: usize) -> SharedAtomic<T>
    where
        T: super::atomic::HasAtomic,
    {
        self.check_live();
        if i >= self.len {
            out_of_bounds(i, self.len);
        }
        // SAFETY: in bounds (checked above).
        SharedAtomic { slot: self.part(unsafe { self.ptr.add(i) }, 1) }
    }

    /// The same memory as `U`s, as many whole ones as fit: e.g. an `f32` tile that 4-byte
    /// `cp_async` copies fill, read back as 16-byte `[f32; 4]` vectors (one `ld.shared.v4`).
    /// Both types must be free of padding bytes (a compile error otherwise: padding stored
    /// through one type would be read as data through the other); panics when the view's start
    /// is not aligned for `U`.
    #[inline(always)]
    #[track_caller]
    pub fn cast<U: SharedElem>(self) -> SharedSlice<U> {
        const {
            assert!(T::PADDING_FREE && U::PADDING_FREE, "{}", PADDED_CAST);
        };
        if (self.ptr as usize) % core::mem::align_of::<U>() != 0 {
            misaligned_cast(core::mem::align_of::<U>());
        }
        let len = match core::mem::size_of::<U>() {
            0 => 0,
            n => self.len * core::mem::size_of::<T>() / n,
        };
        SharedSlice {
            ptr: self.ptr as *mut U,
            len,
            #[cfg(not(target_arch = "nvptx64"))]
            block: self.block,
            _t: PhantomData,
        }
    }

    /// The two halves `[0, mid)` and `[mid, len)`; `mid` is clamped to `len`.
    #[inline(always)]
    pub fn split_at(self, mid: usize) -> (SharedSlice<T>, SharedSlice<T>) {
        let mid = mid.min(self.len);
        // SAFETY: `mid <= len`, so the second half starts within (or just past) this view.
        let second = unsafe { self.ptr.add(mid) };
        (self.part(self.ptr, mid), self.part(second, self.len - mid))
    }
}

/// A `rows × cols` row-major view of shared memory (from `shared_array!(T, ROWS, COLS)`).
pub struct Shared2d<T> {
    flat: SharedSlice<T>,
    cols: usize,
}

impl<T> Clone for Shared2d<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Shared2d<T> {}

impl<T: SharedElem> Shared2d<T> {
    #[doc(hidden)]
    #[inline(always)]
    pub fn from_flat(flat: SharedSlice<T>, cols: usize) -> Self {
        Shared2d { flat, cols: cols.max(1) }
    }

    /// Whole rows of `cols()` elements.
    #[inline(always)]
    pub fn rows(self) -> usize {
        self.flat.len / self.cols
    }

    /// Elements per row.
    #[inline(always)]
    pub fn cols(self) -> usize {
        self.cols
    }

    /// The element at (`row`, `col`). Panics when either is out of range.
    #[inline(always)]
    #[track_caller]
    pub fn get(self, row: usize, col: usize) -> T {
        if col >= self.cols {
            out_of_bounds(col, self.cols);
        }
        self.flat.get(row * self.cols + col)
    }

    /// Stores `v` at (`row`, `col`). Panics when either is out of range.
    #[inline(always)]
    #[track_caller]
    pub fn set(self, row: usize, col: usize, v: T) {
        if col >= self.cols {
            out_of_bounds(col, self.cols);
        }
        self.flat.set(row * self.cols + col, v)
    }

    /// # Safety
    /// `row < rows()` and `col < cols()`.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn get_unchecked(self, row: usize, col: usize) -> T {
        // SAFETY: the caller keeps both indices in range.
        unsafe { self.flat.get_unchecked(row * self.cols + col) }
    }

    /// # Safety
    /// `row < rows()` and `col < cols()`.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn set_unchecked(self, row: usize, col: usize, v: T) {
        // SAFETY: the caller keeps both indices in range.
        unsafe { self.flat.set_unchecked(row * self.cols + col, v) }
    }

    /// The whole array as one row-major slice.
    #[inline(always)]
    pub fn flat(self) -> SharedSlice<T> {
        self.flat
    }
}

/// One element of shared memory used atomically, from [`SharedSlice::atomic`]: the scoped
/// operations of [`AtomicInt`](super::atomic::AtomicInt) /
/// [`AtomicFloat`](super::atomic::AtomicFloat), `load`/`store`, and [`with`](Self::with) for
/// anything else the atomic type offers.
pub struct SharedAtomic<T> {
    slot: SharedSlice<T>,
}

impl<T> Clone for SharedAtomic<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SharedAtomic<T> {}

impl<T: super::atomic::HasAtomic> SharedAtomic<T> {
    /// Runs `f` on the element as its atomic type. The reference cannot leave `f` (its lifetime
    /// is `f`'s own), so it cannot outlive the block's memory.
    #[inline(always)]
    #[track_caller]
    pub fn with<R>(self, f: impl FnOnce(&T::Atomic) -> R) -> R {
        self.atomically(Access::AtomicWrite, f)
    }

    /// The element's value (an atomic load with `order`).
    #[inline(always)]
    #[track_caller]
    pub fn load(self, order: super::atomic::Ordering) -> T {
        self.atomically(Access::AtomicRead, |a| T::load(a, order))
    }

    /// Stores `v` (an atomic store with `order`).
    #[inline(always)]
    #[track_caller]
    pub fn store(self, v: T, order: super::atomic::Ordering) {
        self.atomically(Access::AtomicWrite, |a| T::store(a, v, order))
    }

    /// [`with`](Self::with), telling the race check what `f` does (`with` counts as a write).
    #[inline(always)]
    #[track_caller]
    fn atomically<R>(self, access: Access, f: impl FnOnce(&T::Atomic) -> R) -> R {
        let checked = self.slot.check_live();
        self.slot.track(checked, 0, access);
        // `T::Atomic` has `T`'s size and alignment (asserted where `HasAtomic` is implemented).
        // SAFETY: the slot is one in-bounds element of live shared memory (checked above), and the reference allows only atomic accesses.
        f(unsafe { &*(self.slot.ptr as *const T::Atomic) })
    }
}

#[cold]
#[inline(never)]
#[track_caller]
#[cfg(not(target_arch = "nvptx64"))]
fn stale_view() -> ! {
    panic!("a shared-memory view was used outside the block that created it (kept in a thread-local or a leaked box past its launch?); shared memory lives only as long as its block")
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_bounds(i: usize, len: usize) -> ! {
    panic!("shared memory index out of bounds: the len is {len} but the index is {i}")
}

/// The launch's dynamic shared memory as `T`s (CUDA `extern __shared__ T buf[];`): as many
/// whole `T`s as `LaunchConfig::shared_mem_bytes` holds, 16-byte aligned.
#[inline(always)]
pub fn dynamic_shared<T: SharedElem>() -> SharedSlice<T> {
    const {
        assert!(core::mem::align_of::<T>() <= 16, "dynamic shared memory is 16-byte aligned");
        assert!(T::PADDING_FREE, "{}", PADDED_DYNAMIC);
    };
    let (ptr, bytes) = backend::dynamic_shared();
    let len = match core::mem::size_of::<T>() {
        0 => 0,
        n => bytes / n,
    };
    // SAFETY: the backend returns the block's dynamic shared memory window, 16-byte aligned and `bytes` long, alive for the whole kernel.
    unsafe { SharedSlice::from_raw(ptr as *mut T, len) }
}

/// The launch's dynamic shared memory from its first `ALIGN`-byte aligned address on, as `T`s
/// (as many whole ones as fit after the padding): for TMA tiles, which must start 128 to 1024
/// bytes aligned, in dynamic shared memory (the only kind above 48 KiB). The window itself is
/// only 16-byte aligned (static shared arrays come first), so ask the launch for `ALIGN - 16`
/// bytes more than the tiles need. `ALIGN` is a power of two, at least 16.
#[inline(always)]
pub fn dynamic_shared_aligned<T: SharedElem, const ALIGN: usize>() -> SharedSlice<T> {
    const {
        assert!(ALIGN.is_power_of_two() && ALIGN >= 16, "ALIGN is a power of two of at least 16 bytes");
        assert!(core::mem::align_of::<T>() <= ALIGN, "ALIGN must suit T");
        assert!(T::PADDING_FREE, "{}", PADDED_DYNAMIC);
    };
    let (ptr, bytes) = backend::dynamic_shared();
    let pad = (ALIGN - (ptr as usize) % ALIGN) % ALIGN;
    let left = bytes.saturating_sub(pad);
    let len = match core::mem::size_of::<T>() {
        0 => 0,
        n => left / n,
    };
    let ptr = if left == 0 { ptr } else { ptr.wrapping_add(pad) };
    // SAFETY: `ptr + pad .. ptr + bytes` lies inside the block's dynamic window (`pad <= bytes` whenever `left > 0`; otherwise the view is empty), aligned to `ALIGN`, alive for the whole kernel.
    unsafe { SharedSlice::from_raw(ptr as *mut T, len) }
}

/// Size of the launch's dynamic shared memory in bytes.
#[inline(always)]
pub fn dynamic_shared_bytes() -> usize {
    backend::dynamic_shared().1
}

/// Host side of `shared_array!`: the executor's per-block storage for one declaration.
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
#[track_caller]
pub fn __static_shared<T: SharedElem>(key: *const u8, len: usize) -> SharedSlice<T> {
    // 16-byte aligned like the GPU's arrays (`Align16`), whatever `T` needs.
    let (size, align, declared) =
        (core::mem::size_of::<T>(), core::mem::align_of::<T>().max(16), core::panic::Location::caller());
    let ptr = backend::shared_static(key, size * len, align, declared);
    // SAFETY: the executor hands every thread of a block the same zeroed storage of this size and alignment for the declaration `key`, alive until the block ends.
    unsafe { SharedSlice::from_raw(ptr as *mut T, len) }
}

/// `__static_shared` with a larger alignment (`shared_array!(align(N) T, len)`).
#[doc(hidden)]
#[track_caller]
#[cfg(not(target_arch = "nvptx64"))]
pub fn __static_shared_aligned<T: SharedElem>(key: *const u8, len: usize, align: usize) -> SharedSlice<T> {
    let (size, align, declared) =
        (core::mem::size_of::<T>(), core::mem::align_of::<T>().max(align), core::panic::Location::caller());
    let ptr = backend::shared_static(key, size * len, align, declared);
    // SAFETY: as in `__static_shared`, with the larger alignment.
    unsafe { SharedSlice::from_raw(ptr as *mut T, len) }
}

macro_rules! align_types {
    ($($name:ident = $n:literal),*) => {$(
        #[doc = concat!("A `shared_array!(align(", stringify!($n), ") ..)` storage.")]
        #[doc(hidden)]
        #[repr(C, align($n))]
        pub struct $name<T>(pub T);
    )*};
}
align_types!(Align128 = 128, Align256 = 256, Align512 = 512, Align1024 = 1024);

/// The storage type of `shared_array!(align(N) ..)`: N is 16, 128, 256, 512 or 1024.
#[doc(hidden)]
#[macro_export]
macro_rules! __oxide_align_type {
    (16, $t:ty) => { $crate::device::shared::Align16<$t> };
    (128, $t:ty) => { $crate::device::shared::Align128<$t> };
    (256, $t:ty) => { $crate::device::shared::Align256<$t> };
    (512, $t:ty) => { $crate::device::shared::Align512<$t> };
    (1024, $t:ty) => { $crate::device::shared::Align1024<$t> };
    ($other:tt, $t:ty) => { ::core::compile_error!("shared_array!(align(N) ..): N must be 16, 128, 256, 512 or 1024") };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __oxide_align_value {
    (16, $v:expr) => {
        $crate::device::shared::Align16($v)
    };
    (128, $v:expr) => {
        $crate::device::shared::Align128($v)
    };
    (256, $v:expr) => {
        $crate::device::shared::Align256($v)
    };
    (512, $v:expr) => {
        $crate::device::shared::Align512($v)
    };
    (1024, $v:expr) => {
        $crate::device::shared::Align1024($v)
    };
    ($other:tt, $v:expr) => {
        ()
    };
}

/// A `shared_array!` storage: 16-byte aligned, so that vector accesses, `ldmatrix` rows and
/// 16-byte `cp_async` copies can start at its beginning.
#[doc(hidden)]
#[repr(C, align(16))]
pub struct Align16<T>(pub T);

/// Declares per-block shared memory in a kernel, like CUDA's `__shared__`:
/// `shared_array!(f32, 256)` gives a [`SharedSlice<f32>`] of 256 elements,
/// `shared_array!(f32, 16, 16)` a 16×16 [`Shared2d<f32>`]. The array starts 16-byte aligned;
/// `shared_array!(align(1024) Bf16, 64 * 64)` starts it 1024-byte aligned (16, 128, 256, 512 or
/// 1024), e.g. for a TMA tile with a 128-byte swizzle.
///
/// Each use of the macro is one array per block; calling it again (in a loop, or the same helper
/// from two places of one kernel) names the same memory, as in CUDA. See the
/// [rules](crate::device::shared).
#[macro_export]
macro_rules! shared_array {
    (align($a:tt) $t:ty, $n:expr) => {{
        const __OXIDE_LEN: usize = $n;
        #[cfg(target_arch = "nvptx64")]
        let __oxide_shared = {
            // The IR stage moves statics of this section to `.shared` (addrspace 3), keeping
            // their alignment.
            #[unsafe(link_section = "oxide.shared")]
            static mut __OXIDE_SHARED: $crate::__oxide_align_type!($a, ::core::mem::MaybeUninit<[$t; __OXIDE_LEN]>) =
                $crate::__oxide_align_value!($a, ::core::mem::MaybeUninit::zeroed());
            // SAFETY: as in the unaligned form: this block's array of `__OXIDE_LEN` elements.
            unsafe {
                $crate::device::shared::SharedSlice::<$t>::from_raw(
                    ::core::ptr::addr_of_mut!(__OXIDE_SHARED) as *mut $t,
                    __OXIDE_LEN,
                )
            }
        };
        #[cfg(not(target_arch = "nvptx64"))]
        let __oxide_shared = {
            static __OXIDE_KEY: ::core::sync::atomic::AtomicU8 = ::core::sync::atomic::AtomicU8::new(0);
            $crate::device::shared::__static_shared_aligned::<$t>(
                &__OXIDE_KEY as *const ::core::sync::atomic::AtomicU8 as *const u8,
                __OXIDE_LEN,
                $a,
            )
        };
        __oxide_shared
    }};
    ($t:ty, $rows:expr, $cols:expr) => {
        $crate::device::shared::Shared2d::<$t>::from_flat($crate::shared_array!($t, ($rows) * ($cols)), $cols)
    };
    ($t:ty, $n:expr) => {{
        const __OXIDE_LEN: usize = $n;
        #[cfg(target_arch = "nvptx64")]
        let __oxide_shared = {
            // The IR stage moves statics of this section to `.shared` (addrspace 3).
            #[unsafe(link_section = "oxide.shared")]
            static mut __OXIDE_SHARED: $crate::device::shared::Align16<::core::mem::MaybeUninit<[$t; __OXIDE_LEN]>> =
                $crate::device::shared::Align16(::core::mem::MaybeUninit::zeroed());
            // SAFETY: the address is this block's array of `__OXIDE_LEN` elements (declared zeroed: where rustc folds reads of a never-written array, they read zero, a valid value of every `SharedElem`).
            unsafe {
                $crate::device::shared::SharedSlice::<$t>::from_raw(
                    ::core::ptr::addr_of_mut!(__OXIDE_SHARED) as *mut $t,
                    __OXIDE_LEN,
                )
            }
        };
        #[cfg(not(target_arch = "nvptx64"))]
        let __oxide_shared = {
            // A distinct, non-constant static per declaration: its address keys the executor's
            // per-block storage.
            static __OXIDE_KEY: ::core::sync::atomic::AtomicU8 = ::core::sync::atomic::AtomicU8::new(0);
            $crate::device::shared::__static_shared::<$t>(
                &__OXIDE_KEY as *const ::core::sync::atomic::AtomicU8 as *const u8,
                __OXIDE_LEN,
            )
        };
        __oxide_shared
    }};
}
