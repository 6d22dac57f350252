//! Values a kernel takes by value: the [`KernelArg`] contract.
//!
//! The host pushes a by-value argument as raw bytes and the device reads them with its own idea
//! of the type's layout, so a type may cross only when both sides agree byte for byte. Scalars
//! and arrays of them are implemented here; `#[derive(KernelArg)]` implements it for
//! `#[repr(C)]` structs and proves at compile time that the host layout equals the nvptx64
//! layout (size, alignment, every field offset) recorded by oxide-build.

/// A type that can be passed to a kernel by value.
///
/// # Safety
/// Implementing it promises that
/// 1. the type is plain data: no references, raw pointers or host-owned resources (a device
///    pointer would be meaningless, a host one dangling);
/// 2. its size, alignment and field offsets are the same on the host and on nvptx64, so the
///    bytes the host pushes are the value the kernel reads;
/// 3. every value the host can hold is a valid value on the device (no `bool`/`char`/enum
///    niches whose validity the device would have to re-check);
/// 4. no interior mutability (no `UnsafeCell`, so no atomics or cells): a kernel's `&[T]`
///    input is marked `noalias` and read-only for the optimiser, which holds only if nothing
///    writes through it. Buffers that threads update are `&[AtomicU32]`-style inputs.
///
/// Do not implement it by hand: `#[derive(KernelArg)]` checks all three.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed to a kernel by value",
    label = "not a kernel argument",
    note = "kernel arguments are integers, floats, arrays of them and `#[repr(C)]` structs with `#[derive(KernelArg)]`",
    note = "hint: `#[derive(Clone, Copy, KernelArg)] #[repr(C)] struct ...` in the kernels module"
)]
#[cfg(not(target_arch = "nvptx64"))]
pub unsafe trait KernelArg: cudarc::driver::DeviceRepr {
    /// Whether every byte of a value belongs to a field (no padding); `#[derive(KernelArg)]`
    /// computes it. Dynamic shared memory refuses types with padding (see `dynamic_shared`).
    #[doc(hidden)]
    const PADDING_FREE: bool = true;
}

/// A type that can be passed to a kernel by value (device side of the same contract).
///
/// # Safety
/// See the host definition: plain data, the same layout on host and nvptx64, no invalid values.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed to a kernel by value",
    label = "not a kernel argument",
    note = "kernel arguments are integers, floats, arrays of them and `#[repr(C)]` structs with `#[derive(KernelArg)]`"
)]
#[cfg(target_arch = "nvptx64")]
pub unsafe trait KernelArg {
    /// As on the host.
    #[doc(hidden)]
    const PADDING_FREE: bool = true;
}

macro_rules! scalars {
    ($($t:ty),*) => {$(
        // SAFETY: a primitive number is plain data, every bit pattern is valid, and its size and alignment are fixed by the type (64-bit for usize/isize, see the assertion below).
        unsafe impl KernelArg for $t {}
    )*};
}
// Not `bool`/`char` (validity niches), not `u128`/`i128` (PTX has no 128-bit parameters and
// their alignment has changed between LLVM versions).
scalars!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64);

// nvptx64 has 64-bit pointers; cudarc (and therefore the host runtime) only targets 64-bit
// hosts. This makes the `usize`/`isize` claim above checked rather than assumed.
const _: () = assert!(
    core::mem::size_of::<usize>() == 8 && core::mem::align_of::<usize>() == 8,
    "oxide passes usize/isize kernel arguments as 64-bit values; the host must be a 64-bit target"
);

// SAFETY: an array of kernel arguments is laid out as N consecutive elements without padding on every target, so it inherits the element's guarantees.
unsafe impl<T: KernelArg, const N: usize> KernelArg for [T; N] {
    const PADDING_FREE: bool = T::PADDING_FREE;
}

/// Compile-time check used by generated code: names `T` in an error when it is no kernel argument.
#[doc(hidden)]
#[inline(always)]
pub const fn assert_kernel_arg<T: KernelArg>() {}

/// A by-value argument as the launch-wide tests of unchecked copies read it: integers as their
/// bits zero-extended (`(&IntProbe(&x)).int_value()` with [`IntValue`] and [`NotInt`] in scope
/// picks [`IntValue`] where `x` is an integer, [`NotInt`] for any other type, without a bound
/// that could fail to compile).
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
pub struct IntProbe<'a, T>(pub &'a T);

#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
pub trait IntValue {
    fn int_value(&self) -> Option<u64>;
}

#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
pub trait NotInt {
    fn int_value(&self) -> Option<u64> {
        None
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<T> NotInt for &IntProbe<'_, T> {}

#[cfg(not(target_arch = "nvptx64"))]
macro_rules! int_values {
    ($($t:ty => $u:ty),*) => {$(
        impl IntValue for IntProbe<'_, $t> {
            fn int_value(&self) -> Option<u64> {
                Some(*self.0 as $u as u64)
            }
        }
    )*};
}
#[cfg(not(target_arch = "nvptx64"))]
int_values!(u8 => u8, u16 => u16, u32 => u32, u64 => u64, usize => u64, i8 => u8, i16 => u16, i32 => u32, i64 => u64, isize => u64);

/// Pushes a by-value kernel argument. Generated launchers call this instead of cudarc's
/// `arg` so the only bound a user type can miss is `KernelArg` (one clear error).
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
pub fn push_value<'a, 'b: 'a, T: KernelArg>(args: &mut cudarc::driver::LaunchArgs<'a>, value: &'b T) {
    use cudarc::driver::PushKernelArg;
    args.arg(value);
}

// The scalars and nested arrays kernels commonly take are kernel arguments (checked at build).
const _: () = {
    assert_kernel_arg::<f32>();
    assert_kernel_arg::<u64>();
    assert_kernel_arg::<usize>();
    assert_kernel_arg::<[[i8; 2]; 4]>();
};

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::{IntProbe, IntValue as _, NotInt as _};

    // The borrow is what the launchers write for every type (it picks `NotInt` where no
    // `IntValue` applies); for the integers here it is the one clippy calls needless.
    #[allow(clippy::needless_borrow)]
    #[test]
    fn integers_read_as_their_zero_extended_bits_and_nothing_else_reads() {
        assert_eq!((&IntProbe(&7u32)).int_value(), Some(7));
        assert_eq!((&IntProbe(&-1i32)).int_value(), Some(u64::from(u32::MAX)));
        assert_eq!((&IntProbe(&-2i8)).int_value(), Some(254));
        assert_eq!((&IntProbe(&usize::MAX)).int_value(), Some(u64::MAX));
        assert_eq!((&IntProbe(&1.5f32)).int_value(), None);
        assert_eq!((&IntProbe(&[1u32, 2])).int_value(), None);
    }
}
