//! Atomics with CUDA's scopes, on global or shared memory.
//!
//! ```ignore
//! use oxide_rt::device::atomic::{AtomicInt, AtomicU32, Scope};
//! let old = counter.atomic_add(1, Scope::Device);      // CUDA atomicAdd
//! hist.atomic_max(v, Scope::Block);                      // CUDA atomicMax_block
//! ```
//!
//! The operations are relaxed (like CUDA's `atomicXxx`); order other memory with the
//! [fences](super::sync) or a barrier. [`Scope`] says which threads the operation must be atomic
//! with: the block (`atom.cta`, cheapest, enough for shared memory), the device (`atom.gpu`,
//! CUDA's default) or the whole system including the host and peer GPUs (`atom.sys`). On the CPU
//! executor every scope is a plain `core` atomic.
//!
//! `core::sync::atomic` types work on the GPU too: their methods compile to system-scope PTX
//! atomics (`atom.relaxed.sys`, or `atom.acq_rel.sys` etc. for stronger orderings). These
//! traits add the scoped CUDA operations, `min`/`max`, and float add ([`AtomicF32`],
//! [`AtomicF64`], which `core` lacks).
//!
//! Shared memory: [`SharedSlice::atomic`](super::shared::SharedSlice::atomic)`(i)` views an
//! element as its atomic twin, e.g. for a per-block histogram.

use core::cell::UnsafeCell;
pub use core::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};

/// Which threads an atomic operation is atomic with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Threads of the same block (CUDA `atomicXxx_block`, PTX `.cta`).
    Block,
    /// Threads of the same device (CUDA `atomicXxx`, PTX `.gpu`).
    Device,
    /// All threads of the system: host and peer devices (CUDA `atomicXxx_system`, PTX `.sys`).
    System,
}

/// Scoped CUDA atomics on integer atomics. Each returns the value before the operation.
pub trait AtomicInt: sealed::Sealed {
    /// The plain integer this atomic holds (`u32` for `AtomicU32`).
    type Value: Copy;
    /// `*self += v` (wrapping). CUDA `atomicAdd`.
    fn atomic_add(&self, v: Self::Value, scope: Scope) -> Self::Value;
    /// `*self -= v` (wrapping). CUDA `atomicSub`.
    fn atomic_sub(&self, v: Self::Value, scope: Scope) -> Self::Value;
    /// `*self = min(*self, v)`. CUDA `atomicMin`.
    fn atomic_min(&self, v: Self::Value, scope: Scope) -> Self::Value;
    /// `*self = max(*self, v)`. CUDA `atomicMax`.
    fn atomic_max(&self, v: Self::Value, scope: Scope) -> Self::Value;
    /// `*self = v`. CUDA `atomicExch`.
    fn atomic_exch(&self, v: Self::Value, scope: Scope) -> Self::Value;
    /// `if *self == compare { *self = new }`. CUDA `atomicCAS`: the old value is returned, so
    /// the swap happened exactly when it equals `compare`.
    fn atomic_cas(&self, compare: Self::Value, new: Self::Value, scope: Scope) -> Self::Value;
    /// `*self &= v`. CUDA `atomicAnd`.
    fn atomic_and(&self, v: Self::Value, scope: Scope) -> Self::Value;
    /// `*self |= v`. CUDA `atomicOr`.
    fn atomic_or(&self, v: Self::Value, scope: Scope) -> Self::Value;
    /// `*self ^= v`. CUDA `atomicXor`.
    fn atomic_xor(&self, v: Self::Value, scope: Scope) -> Self::Value;
}

/// Scoped float add. Returns the value before the addition.
pub trait AtomicFloat: sealed::Sealed {
    /// The plain float this atomic holds (`f32` for `AtomicF32`).
    type Value: Copy;
    /// `*self += v`. CUDA `atomicAdd(float*)`.
    fn atomic_add(&self, v: Self::Value, scope: Scope) -> Self::Value;
}

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// An `f32` that threads may update atomically; the same layout as `f32`.
#[repr(transparent)]
pub struct AtomicF32(UnsafeCell<f32>);

/// An `f64` that threads may update atomically; the same layout as `f64`.
#[repr(transparent)]
pub struct AtomicF64(UnsafeCell<f64>);

// SAFETY: every access to the cell is atomic (the methods below), as for core's atomics.
unsafe impl Sync for AtomicF32 {}
// SAFETY: as above.
unsafe impl Sync for AtomicF64 {}

macro_rules! atomic_float {
    ($name:ident, $t:ty, $bits:ty, $abits:ty) => {
        impl $name {
            /// An atomic holding `v`.
            pub const fn new(v: $t) -> Self {
                $name(UnsafeCell::new(v))
            }

            /// Views `ptr` (global or shared memory) as an atomic.
            ///
            /// # Safety
            /// As [`AtomicU32::from_ptr`]: `ptr` is aligned, valid for `'a`, and only accessed
            /// atomically while the returned reference is in use.
            pub unsafe fn from_ptr<'a>(ptr: *mut $t) -> &'a $name {
                // SAFETY: same layout (repr(transparent)); validity is the caller's promise.
                unsafe { &*(ptr as *const $name) }
            }

            fn bits(&self) -> &$abits {
                // SAFETY: same size and alignment; all accesses to the cell are atomic.
                unsafe { <$abits>::from_ptr(self.0.get() as *mut $bits) }
            }

            /// The value (an atomic read of its bits).
            pub fn load(&self, order: Ordering) -> $t {
                <$t>::from_bits(self.bits().load(order))
            }

            /// Replaces the value (an atomic write of its bits).
            pub fn store(&self, v: $t, order: Ordering) {
                self.bits().store(v.to_bits(), order)
            }

            /// The value, from the atomic owned by value (no other thread can reach it).
            pub fn into_inner(self) -> $t {
                self.0.into_inner()
            }
        }

        impl sealed::Sealed for $name {}
    };
}
atomic_float!(AtomicF32, f32, u32, AtomicU32);
atomic_float!(AtomicF64, f64, u64, AtomicU64);

/// Plain types with an atomic twin of the same layout (`u32` ↔ [`AtomicU32`], `f32` ↔
/// [`AtomicF32`], …), for [`SharedSlice::atomic`](super::shared::SharedSlice::atomic).
pub trait HasAtomic: super::shared::SharedElem {
    /// The atomic twin (`AtomicU32` for `u32`).
    type Atomic;
    /// `a.load(order)`.
    fn load(a: &Self::Atomic, order: Ordering) -> Self;
    /// `a.store(v, order)`.
    fn store(a: &Self::Atomic, v: Self, order: Ordering);
}

macro_rules! has_atomic {
    ($($t:ty => $a:ty),*) => {$(
        impl HasAtomic for $t {
            type Atomic = $a;
            #[inline(always)]
            fn load(a: &$a, order: Ordering) -> $t {
                a.load(order)
            }
            #[inline(always)]
            fn store(a: &$a, v: $t, order: Ordering) {
                a.store(v, order)
            }
        }
        const _: () = assert!(core::mem::size_of::<$t>() == core::mem::size_of::<$a>()
            && core::mem::align_of::<$t>() == core::mem::align_of::<$a>());
    )*};
}
has_atomic!(u32 => AtomicU32, i32 => AtomicI32, u64 => AtomicU64, i64 => AtomicI64, f32 => AtomicF32, f64 => AtomicF64);

// Kernel arguments: a `&[AtomicU32]` / `&[AtomicF32]` input is, on the host, a buffer of the
// plain type (`CudaSlice<u32>`, `CudaSlice<f32>`): every atomic has its plain type's layout.
// Atomics are deliberately not `KernelArg`: that trait promises no interior mutability, which
// is what lets `&[T]` inputs be `noalias` and read-only (a struct holding an atomic could be
// written through a "read-only" input).

// ---------------------------------------------------------------------------------------------
// GPU: PTX `atom` with a scope, on generic addresses (global or shared).

#[cfg(target_arch = "nvptx64")]
mod imp {
    use super::*;
    use core::arch::asm;

    macro_rules! atom {
        ($op:literal, $ty:literal, $class:ident, $t:ty, $p:expr, $v:expr, $scope:expr) => {{
            let r: $t;
            let (p, v) = ($p, $v);
            // SAFETY: `p` comes from a live atomic reference (aligned, valid memory); the asm only performs the atomic read-modify-write on it.
            unsafe {
                match $scope {
                    Scope::Block => asm!(concat!("atom.relaxed.cta.", $op, ".", $ty, " {r}, [{p}], {v};"), r = out($class) r, p = in(reg64) p, v = in($class) v, options(nostack)),
                    Scope::Device => asm!(concat!("atom.relaxed.gpu.", $op, ".", $ty, " {r}, [{p}], {v};"), r = out($class) r, p = in(reg64) p, v = in($class) v, options(nostack)),
                    Scope::System => asm!(concat!("atom.relaxed.sys.", $op, ".", $ty, " {r}, [{p}], {v};"), r = out($class) r, p = in(reg64) p, v = in($class) v, options(nostack)),
                }
            }
            r
        }};
    }

    macro_rules! cas {
        ($ty:literal, $class:ident, $t:ty, $p:expr, $c:expr, $n:expr, $scope:expr) => {{
            let r: $t;
            let (p, c, n) = ($p, $c, $n);
            // SAFETY: as in `atom!`.
            unsafe {
                match $scope {
                    Scope::Block => asm!(concat!("atom.relaxed.cta.cas.", $ty, " {r}, [{p}], {c}, {n};"), r = out($class) r, p = in(reg64) p, c = in($class) c, n = in($class) n, options(nostack)),
                    Scope::Device => asm!(concat!("atom.relaxed.gpu.cas.", $ty, " {r}, [{p}], {c}, {n};"), r = out($class) r, p = in(reg64) p, c = in($class) c, n = in($class) n, options(nostack)),
                    Scope::System => asm!(concat!("atom.relaxed.sys.cas.", $ty, " {r}, [{p}], {c}, {n};"), r = out($class) r, p = in(reg64) p, c = in($class) c, n = in($class) n, options(nostack)),
                }
            }
            r
        }};
    }

    // Block and device scope go through core's atomics: LLVM then sees the address space
    // (shared memory becomes `atom.shared`, not a generic `atom`) and emits exactly what
    // nvcc emits for `atomicAdd` (gpu scope, which also covers block scope). System scope
    // needs the `.sys` qualifier LLVM cannot express, so it stays inline asm.
    const R: Ordering = Ordering::Relaxed;

    macro_rules! atomic_int {
        ($a:ty, $t:ty, $class:ident, $add:literal, $minmax:literal, $bits:literal) => {
            impl sealed::Sealed for $a {}
            impl AtomicInt for $a {
                type Value = $t;
                #[inline(always)]
                fn atomic_add(&self, v: $t, scope: Scope) -> $t {
                    match scope {
                        Scope::System => atom!("add", $add, $class, $t, self.as_ptr(), v, scope),
                        _ => self.fetch_add(v, R),
                    }
                }
                #[inline(always)]
                fn atomic_sub(&self, v: $t, scope: Scope) -> $t {
                    match scope {
                        Scope::System => atom!("add", $add, $class, $t, self.as_ptr(), v.wrapping_neg(), scope),
                        _ => self.fetch_sub(v, R),
                    }
                }
                #[inline(always)]
                fn atomic_min(&self, v: $t, scope: Scope) -> $t {
                    match scope {
                        Scope::System => atom!("min", $minmax, $class, $t, self.as_ptr(), v, scope),
                        _ => self.fetch_min(v, R),
                    }
                }
                #[inline(always)]
                fn atomic_max(&self, v: $t, scope: Scope) -> $t {
                    match scope {
                        Scope::System => atom!("max", $minmax, $class, $t, self.as_ptr(), v, scope),
                        _ => self.fetch_max(v, R),
                    }
                }
                #[inline(always)]
                fn atomic_exch(&self, v: $t, scope: Scope) -> $t {
                    match scope {
                        Scope::System => atom!("exch", $bits, $class, $t, self.as_ptr(), v, scope),
                        _ => self.swap(v, R),
                    }
                }
                #[inline(always)]
                fn atomic_cas(&self, compare: $t, new: $t, scope: Scope) -> $t {
                    match scope {
                        Scope::System => cas!($bits, $class, $t, self.as_ptr(), compare, new, scope),
                        _ => match self.compare_exchange(compare, new, R, R) {
                            Ok(old) | Err(old) => old,
                        },
                    }
                }
                #[inline(always)]
                fn atomic_and(&self, v: $t, scope: Scope) -> $t {
                    match scope {
                        Scope::System => atom!("and", $bits, $class, $t, self.as_ptr(), v, scope),
                        _ => self.fetch_and(v, R),
                    }
                }
                #[inline(always)]
                fn atomic_or(&self, v: $t, scope: Scope) -> $t {
                    match scope {
                        Scope::System => atom!("or", $bits, $class, $t, self.as_ptr(), v, scope),
                        _ => self.fetch_or(v, R),
                    }
                }
                #[inline(always)]
                fn atomic_xor(&self, v: $t, scope: Scope) -> $t {
                    match scope {
                        Scope::System => atom!("xor", $bits, $class, $t, self.as_ptr(), v, scope),
                        _ => self.fetch_xor(v, R),
                    }
                }
            }
        };
    }
    atomic_int!(AtomicU32, u32, reg32, "u32", "u32", "b32");
    atomic_int!(AtomicI32, i32, reg32, "u32", "s32", "b32");
    atomic_int!(AtomicU64, u64, reg64, "u64", "u64", "b64");
    atomic_int!(AtomicI64, i64, reg64, "u64", "s64", "b64");

    impl AtomicFloat for AtomicF32 {
        type Value = f32;
        #[inline(always)]
        fn atomic_add(&self, v: f32, scope: Scope) -> f32 {
            atom!("add", "f32", reg32, f32, self.0.get(), v, scope)
        }
    }

    impl AtomicFloat for AtomicF64 {
        type Value = f64;
        #[inline(always)]
        fn atomic_add(&self, v: f64, scope: Scope) -> f64 {
            atom!("add", "f64", reg64, f64, self.0.get(), v, scope)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Host (CPU executor): core atomics; every scope is the whole process.

#[cfg(not(target_arch = "nvptx64"))]
mod imp {
    use super::*;
    const R: Ordering = Ordering::Relaxed;

    macro_rules! atomic_int {
        ($a:ty, $t:ty) => {
            impl sealed::Sealed for $a {}
            impl AtomicInt for $a {
                type Value = $t;
                fn atomic_add(&self, v: $t, _: Scope) -> $t {
                    self.fetch_add(v, R)
                }
                fn atomic_sub(&self, v: $t, _: Scope) -> $t {
                    self.fetch_sub(v, R)
                }
                fn atomic_min(&self, v: $t, _: Scope) -> $t {
                    self.fetch_min(v, R)
                }
                fn atomic_max(&self, v: $t, _: Scope) -> $t {
                    self.fetch_max(v, R)
                }
                fn atomic_exch(&self, v: $t, _: Scope) -> $t {
                    self.swap(v, R)
                }
                fn atomic_cas(&self, compare: $t, new: $t, _: Scope) -> $t {
                    match self.compare_exchange(compare, new, R, R) {
                        Ok(old) | Err(old) => old,
                    }
                }
                fn atomic_and(&self, v: $t, _: Scope) -> $t {
                    self.fetch_and(v, R)
                }
                fn atomic_or(&self, v: $t, _: Scope) -> $t {
                    self.fetch_or(v, R)
                }
                fn atomic_xor(&self, v: $t, _: Scope) -> $t {
                    self.fetch_xor(v, R)
                }
            }
        };
    }
    atomic_int!(AtomicU32, u32);
    atomic_int!(AtomicI32, i32);
    atomic_int!(AtomicU64, u64);
    atomic_int!(AtomicI64, i64);

    macro_rules! float_add {
        ($a:ty, $t:ty) => {
            impl AtomicFloat for $a {
                type Value = $t;
                fn atomic_add(&self, v: $t, _: Scope) -> $t {
                    let bits = self.bits();
                    let mut old = bits.load(R);
                    loop {
                        let new = (<$t>::from_bits(old) + v).to_bits();
                        match bits.compare_exchange_weak(old, new, R, R) {
                            Ok(_) => return <$t>::from_bits(old),
                            Err(now) => old = now,
                        }
                    }
                }
            }
        };
    }
    float_add!(AtomicF32, f32);
    float_add!(AtomicF64, f64);
}

// Shared memory's atomic handle forwards the scoped operations to the element's atomic type.
impl<T> sealed::Sealed for super::shared::SharedAtomic<T> {}

impl<T> AtomicInt for super::shared::SharedAtomic<T>
where
    T: HasAtomic,
    T::Atomic: AtomicInt<Value = T>,
{
    type Value = T;
    #[inline(always)]
    fn atomic_add(&self, v: T, scope: Scope) -> T {
        self.with(|a| a.atomic_add(v, scope))
    }
    #[inline(always)]
    fn atomic_sub(&self, v: T, scope: Scope) -> T {
        self.with(|a| a.atomic_sub(v, scope))
    }
    #[inline(always)]
    fn atomic_min(&self, v: T, scope: Scope) -> T {
        self.with(|a| a.atomic_min(v, scope))
    }
    #[inline(always)]
    fn atomic_max(&self, v: T, scope: Scope) -> T {
        self.with(|a| a.atomic_max(v, scope))
    }
    #[inline(always)]
    fn atomic_exch(&self, v: T, scope: Scope) -> T {
        self.with(|a| a.atomic_exch(v, scope))
    }
    #[inline(always)]
    fn atomic_cas(&self, compare: T, new: T, scope: Scope) -> T {
        self.with(|a| a.atomic_cas(compare, new, scope))
    }
    #[inline(always)]
    fn atomic_and(&self, v: T, scope: Scope) -> T {
        self.with(|a| a.atomic_and(v, scope))
    }
    #[inline(always)]
    fn atomic_or(&self, v: T, scope: Scope) -> T {
        self.with(|a| a.atomic_or(v, scope))
    }
    #[inline(always)]
    fn atomic_xor(&self, v: T, scope: Scope) -> T {
        self.with(|a| a.atomic_xor(v, scope))
    }
}

impl<T> AtomicFloat for super::shared::SharedAtomic<T>
where
    T: HasAtomic,
    T::Atomic: AtomicFloat<Value = T>,
{
    type Value = T;
    #[inline(always)]
    fn atomic_add(&self, v: T, scope: Scope) -> T {
        self.with(|a| a.atomic_add(v, scope))
    }
}

/// The atomic element types a kernel's `&[..]` and `Matrix<..>` inputs may hold, each with the
/// plain type the host passes for it (`&mut CudaSlice<u32>` for `&[AtomicU32]`). `#[kernel]` picks
/// the host type by the name written in the signature and asserts at compile time that the
/// element is this trait's type of that name (an alias such as `AtomicU64 as AtomicU32` would
/// otherwise read 8-byte elements from a buffer of 4-byte ones).
#[doc(hidden)]
pub trait AtomicElem: elem_sealed::Sealed {
    /// The type's own name.
    const NAME: &'static str;
    /// The plain type of the same size and layout.
    type Plain;
}

mod elem_sealed {
    pub trait Sealed {}
}

macro_rules! atomic_elem {
    ($($a:ident => $plain:ty),* $(,)?) => {$(
        impl elem_sealed::Sealed for $a {}
        impl AtomicElem for $a {
            const NAME: &'static str = stringify!($a);
            type Plain = $plain;
        }
        const _: () = assert!(core::mem::size_of::<$a>() == core::mem::size_of::<$plain>());
    )*};
}

mod atomic_elems {
    use super::{elem_sealed, AtomicElem, AtomicF32, AtomicF64};
    use core::sync::atomic::{
        AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicIsize, AtomicU16, AtomicU32, AtomicU64, AtomicU8, AtomicUsize,
    };
    atomic_elem!(
        AtomicU8 => u8, AtomicI8 => i8, AtomicU16 => u16, AtomicI16 => i16, AtomicU32 => u32, AtomicI32 => i32,
        AtomicU64 => u64, AtomicI64 => i64, AtomicUsize => usize, AtomicIsize => isize, AtomicF32 => f32,
        AtomicF64 => f64,
    );
}
