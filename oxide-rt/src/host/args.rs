//! What typed launchers accept for slice arguments, and the checks every such argument passes
//! before its address reaches a kernel.
//!
//! A launcher hands a kernel a pointer and a length, and the kernel trusts both: an element past
//! the real allocation would be another buffer's. cudarc's `DevicePtr`/`DeviceSlice` are safe
//! traits that any type may implement with any pointer and length, so the launchers take only
//! [`DeviceInput`] / [`DeviceOutput`] types: sealed, implemented for cudarc's own `CudaSlice`,
//! `CudaView` and `CudaViewMut` alone, whose lengths cudarc keeps within their allocation. Each
//! buffer is also checked to belong to the launch's context and to be aligned for its element.

use super::Error;
use cudarc::driver::{sys, CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut};
use cudarc::driver::{DeviceSlice, SyncOnDrop};
use std::sync::Arc;

pub(crate) mod sealed {
    pub trait Sealed {}
}

impl<T> sealed::Sealed for CudaSlice<T> {}
impl<T> sealed::Sealed for CudaView<'_, T> {}
impl<T> sealed::Sealed for CudaViewMut<'_, T> {}

/// A device buffer a launcher passes as a kernel's `&[T]` input: `CudaSlice<T>`, `CudaView<T>`
/// or `CudaViewMut<T>` (sealed: a kernel trusts the pointer and length, and only cudarc's own
/// buffers keep them within their allocation).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed as a kernel's slice input",
    note = "pass a `&CudaSlice<T>`, `&CudaView<T>` or `&CudaViewMut<T>` (e.g. from `stream.clone_htod(..)` or `.slice(..)`)"
)]
pub trait DeviceInput<T>: DevicePtr<T> + sealed::Sealed {
    /// The context that owns the memory, when the type records it (views do not).
    #[doc(hidden)]
    fn owner(&self) -> Option<&Arc<CudaContext>>;
}

/// A device buffer a launcher passes as a kernel's output (`DisjointSlice<T>` and the other
/// output types): `CudaSlice<T>` or `CudaViewMut<T>` (sealed, as [`DeviceInput`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed as a kernel's output",
    note = "pass a `&mut CudaSlice<T>` or `&mut CudaViewMut<T>` (e.g. from `stream.alloc_zeros(..)` or `.slice_mut(..)`)"
)]
pub trait DeviceOutput<T>: DevicePtrMut<T> + sealed::Sealed {
    /// The context that owns the memory, when the type records it (views do not).
    #[doc(hidden)]
    fn owner(&self) -> Option<&Arc<CudaContext>>;
}

impl<T> DeviceInput<T> for CudaSlice<T> {
    fn owner(&self) -> Option<&Arc<CudaContext>> {
        Some(self.context())
    }
}
impl<T> DeviceInput<T> for CudaView<'_, T> {
    fn owner(&self) -> Option<&Arc<CudaContext>> {
        None
    }
}
impl<T> DeviceInput<T> for CudaViewMut<'_, T> {
    fn owner(&self) -> Option<&Arc<CudaContext>> {
        None
    }
}
impl<T> DeviceOutput<T> for CudaSlice<T> {
    fn owner(&self) -> Option<&Arc<CudaContext>> {
        Some(self.context())
    }
}
impl<T> DeviceOutput<T> for CudaViewMut<'_, T> {
    fn owner(&self) -> Option<&Arc<CudaContext>> {
        None
    }
}

/// A row-major 2-D buffer and its row width, for a kernel's `DisjointSlice2d<T>`,
/// `DisjointRows<T>` or `DisjointTiles<T, ..>` output:
/// `Slice2d::new(&mut buf, cols)` with a `CudaSlice<T>` for `launch_*`, a `[T]` for `cpu_*`.
/// The width travels with the buffer so every thread of the launch uses the same one.
pub struct Slice2d<'a, S: ?Sized> {
    data: &'a mut S,
    cols: usize,
}

impl<'a, S: ?Sized> Slice2d<'a, S> {
    pub fn new(data: &'a mut S, cols: usize) -> Self {
        Slice2d { data, cols }
    }
}

/// A buffer and its claim counter for a kernel's `DisjointAppend<T>` output:
/// `Append::new(&mut buf, &mut count)`, with a `CudaSlice<T>` and a `CudaSlice<u64>` for
/// `launch_*`, a `[T]` and a `[u64]` for `cpu_*`. `count` needs one element; each push of the
/// launch adds one to `count[0]` and writes `buf[old count]` when that is below the buffer's
/// length, so set `count[0]` to 0 (or to where appending should start) before the launch, and
/// afterwards `min(count[0], buf.len())` elements are written (a larger count means the buffer
/// was too small and that many pushes were dropped).
pub struct Append<'a, S: ?Sized, C: ?Sized> {
    data: &'a mut S,
    count: &'a mut C,
}

impl<'a, S: ?Sized, C: ?Sized> Append<'a, S, C> {
    pub fn new(data: &'a mut S, count: &'a mut C) -> Self {
        Append { data, count }
    }

    /// The buffer and the counter, for the generated launchers.
    #[doc(hidden)]
    pub fn split(&mut self) -> (&mut S, &mut C) {
        (self.data, self.count)
    }
}

/// Refuses a `DisjointAppend` counter without an element.
pub fn check_counter(kernel: &'static str, arg: &'static str, len: usize) -> Result<(), Error> {
    if len == 0 {
        return Err(Error::InvalidLaunch {
            kernel,
            reason: format!(
                "argument `{arg}`: the claim counter is empty; pass `Append::new(&mut buf, &mut count)` with a `count` of one u64 (zero before the first launch)"
            ),
        });
    }
    Ok(())
}

/// A row-major `rows x cols` matrix for a kernel's `Matrix<T>` input:
/// `Matrix::new(&buf, rows, cols)` with a `CudaSlice<T>` (or view) for `launch_*`, a `[T]` for
/// `cpu_*`. The launchers check that the buffer holds `rows * cols` elements, which is what lets
/// the kernel's `get(r, c)` check only `r < rows && c < cols`.
pub struct Matrix<'a, S: ?Sized> {
    data: &'a S,
    rows: usize,
    cols: usize,
}

impl<'a, S: ?Sized> Matrix<'a, S> {
    pub fn new(data: &'a S, rows: usize, cols: usize) -> Self {
        Matrix { data, rows, cols }
    }

    /// The buffer and the shape as the device receives it, `[cols, rows]`.
    #[doc(hidden)]
    pub fn parts(&self) -> (&'a S, [usize; 2]) {
        (self.data, [self.cols, self.rows])
    }
}

/// A row-major `rows x cols` matrix of atomics for a kernel's `Matrix<AtomicU32>` (…) argument
/// on the GPU: `MatrixMut::new(&mut buf, rows, cols)` with a `CudaSlice` of the plain type. The
/// kernel writes it, so the launch holds it exclusively and orders later uses of the buffer,
/// on any stream, after its writes. (`cpu_*` takes `Matrix::new(&atomics[..], rows, cols)`.)
pub struct MatrixMut<'a, S: ?Sized> {
    data: &'a mut S,
    rows: usize,
    cols: usize,
}

impl<'a, S: ?Sized> MatrixMut<'a, S> {
    pub fn new(data: &'a mut S, rows: usize, cols: usize) -> Self {
        MatrixMut { data, rows, cols }
    }

    /// The buffer and the shape as the device receives it, `[cols, rows]`.
    #[doc(hidden)]
    pub fn into_parts(self) -> (&'a mut S, [usize; 2]) {
        (self.data, [self.cols, self.rows])
    }
}

/// A row-major 3-D buffer with its row width and rows per plane, for a kernel's
/// `DisjointSlice3d<T>` output: `Slice3d::new(&mut buf, cols, rows)`.
pub struct Slice3d<'a, S: ?Sized> {
    data: &'a mut S,
    cols: usize,
    rows: usize,
}

impl<'a, S: ?Sized> Slice3d<'a, S> {
    pub fn new(data: &'a mut S, cols: usize, rows: usize) -> Self {
        Slice3d { data, cols, rows }
    }
}

/// A buffer and the pair distance of a kernel's `DisjointXorPairs<T>` (partner `i ^ d`) or
/// `DisjointButterflies<T>` (partner `i0 + d`) output: `Pairs::new(&mut buf, d)`. The distance
/// travels with the buffer so every thread of the launch pairs elements the same way.
pub struct Pairs<'a, S: ?Sized> {
    data: &'a mut S,
    distance: usize,
}

impl<'a, S: ?Sized> Pairs<'a, S> {
    pub fn new(data: &'a mut S, distance: usize) -> Self {
        Pairs { data, distance }
    }
}

/// How generated launchers take a shaped output apart: the buffer and the launch-uniform shape
/// that the device's `OutputSlice::from_raw` receives.
#[doc(hidden)]
pub trait Shaped<S: ?Sized> {
    fn split(&mut self) -> (&mut S, [usize; 3]);
}

impl<S: ?Sized> Shaped<S> for Slice2d<'_, S> {
    fn split(&mut self) -> (&mut S, [usize; 3]) {
        (self.data, [self.cols, 0, 0])
    }
}

impl<S: ?Sized> Shaped<S> for Pairs<'_, S> {
    fn split(&mut self) -> (&mut S, [usize; 3]) {
        (self.data, [self.distance, 0, 0])
    }
}

impl<S: ?Sized> Shaped<S> for Slice3d<'_, S> {
    fn split(&mut self) -> (&mut S, [usize; 3]) {
        (self.data, [self.cols, self.rows, 0])
    }
}

/// Refuses a shaped output whose columns or rows do not fit in `u32`: the device types keep
/// them as `u32`, which lets the row-major index math go without overflow checks.
pub fn check_shape(kernel: &'static str, arg: &'static str, shape: [usize; 3]) -> Result<(), Error> {
    match shape.iter().find(|&&w| w > u32::MAX as usize) {
        Some(w) => Err(Error::InvalidLaunch {
            kernel,
            reason: format!(
                "argument `{arg}` has a shape of {w} columns or rows, more than the {} a row-major output supports; \
                 split the matrix",
                u32::MAX
            ),
        }),
        None => Ok(()),
    }
}

/// The shape words of a row-major output: its columns and its whole rows (`len / cols`).
pub fn with_rows(shape: [usize; 3], len: usize) -> [usize; 3] {
    [shape[0], len.checked_div(shape[0]).unwrap_or(0), 0]
}

/// The shape words of a row-major 3-D output: its columns, rows per plane and whole planes
/// (`len / (cols * rows)`; both fit `u32` after `check_shape`, so their product fits `usize`).
pub fn with_planes(shape: [usize; 3], len: usize) -> [usize; 3] {
    let plane = shape[0].checked_mul(shape[1]).unwrap_or(0);
    [shape[0], shape[1], len.checked_div(plane).unwrap_or(0)]
}

/// Refuses a `Matrix` input whose shape does not fit its buffer (`rows * cols > len`) or `u32`.
pub fn check_matrix(kernel: &'static str, arg: &'static str, len: usize, shape: [usize; 2]) -> Result<(), Error> {
    let [cols, rows] = shape;
    let reason = if cols > u32::MAX as usize || rows > u32::MAX as usize {
        format!(
            "argument `{arg}` is a {rows} x {cols} matrix, more than {} rows or columns; split the matrix",
            u32::MAX
        )
    } else if rows.checked_mul(cols).is_none_or(|n| n > len) {
        format!(
            "argument `{arg}` is a {rows} x {cols} matrix but its buffer holds {len} elements; pass the buffer's real shape to `Matrix::new`"
        )
    } else {
        return Ok(());
    };
    Err(Error::InvalidLaunch { kernel, reason })
}

/// Checks that a buffer of `T`s at `ptr` may be handed to a kernel launched in `stream`'s
/// context: aligned for `T`, and owned by that context. A `CudaSlice` names its context; for a
/// view the driver is asked (memory from a stream-ordered pool names no context, only its
/// device, which must then be the launch's).
fn check_buffer<T>(
    kernel: &'static str,
    arg: &'static str,
    ptr: u64,
    len: usize,
    owner: Option<sys::CUcontext>,
    stream: &CudaStream,
) -> Result<(), Error> {
    let bad = |reason: String| Err(Error::InvalidLaunch { kernel, reason });
    // The kernel reads `T`s this aligned with vector loads (`device::buffer_align`); every view
    // of a device allocation that starts at a whole element is.
    let align = crate::device::buffer_align::<T>() as u64;
    if len > 0 && ptr % align != 0 {
        return bad(format!(
            "argument `{arg}` starts at {ptr:#x}, which is not aligned to {align} bytes, as kernels read {}-byte \
             elements; pass a view that starts at a whole element of an allocation of this type",
            std::mem::size_of::<T>()
        ));
    }
    let ctx = stream.context();
    let foreign = format!(
        "argument `{arg}` was allocated in another CUDA context than the stream the kernel is launched on; \
         allocate it on a stream of the launch's context (or copy it there first)"
    );
    let owner = match owner {
        Some(owner) => owner,
        None if len == 0 || ptr == 0 => return Ok(()),
        None => {
            let asked = |what: &str| {
                let what = format!("asking the driver for the {what} of argument `{arg}` of kernel `{kernel}`");
                move |source| Error::Driver { what, source }
            };
            let owner =
                pointer_attribute::<sys::CUcontext>(ptr, sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT)
                    .map_err(asked("context"))?;
            if owner.is_null() {
                let device =
                    pointer_attribute::<i32>(ptr, sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
                        .map_err(asked("device"))?;
                return if device as usize == ctx.ordinal() { Ok(()) } else { bad(foreign) };
            }
            owner
        }
    };
    if owner != ctx.cu_ctx() {
        return bad(foreign);
    }
    Ok(())
}

/// One attribute of the allocation holding device address `ptr`.
fn pointer_attribute<V: Copy>(ptr: u64, attribute: sys::CUpointer_attribute) -> Result<V, cudarc::driver::DriverError> {
    let mut value = std::mem::MaybeUninit::<V>::zeroed();
    // SAFETY: the driver writes the attribute's value (a `CUcontext` for CONTEXT, an `int` for DEVICE_ORDINAL: the `V` each caller names) into `value`, which lives across the call and starts zeroed.
    unsafe { sys::cuPointerGetAttribute(value.as_mut_ptr() as *mut std::ffi::c_void, attribute, ptr).result()? };
    // SAFETY: zeroed and then written by the driver; both caller types are valid for any bits.
    Ok(unsafe { value.assume_init() })
}

/// A `&[T]` input's address, length and the guard that records its use on `stream`, after the
/// checks above. An empty input points at the context's zeroed pad (`pad`): the device code may
/// read element 0 ahead of a bounds check (oxide-build's guarded loads).
pub fn input_arg<'a, T>(
    kernel: &'static str,
    arg: &'static str,
    buf: &'a impl DeviceInput<T>,
    stream: &'a CudaStream,
    pad: u64,
) -> Result<(u64, usize, SyncOnDrop<'a>), Error> {
    let len = DeviceSlice::len(buf);
    let owner = buf.owner().map(|ctx| ctx.cu_ctx());
    let (ptr, guard) = buf.device_ptr(stream);
    check_buffer::<T>(kernel, arg, ptr, len, owner, stream)?;
    super::graph::check_arg(kernel, arg, stream.cu_stream() as usize, ptr, len * std::mem::size_of::<T>())?;
    let ptr = if len == 0 || ptr == 0 { pad } else { ptr };
    Ok((ptr, len, guard))
}

/// An output's address, length and use guard, after the checks above. An empty allocation may
/// have address 0, which Rust slices on the device must not see, so it becomes a dangling
/// aligned address (never dereferenced, since the length is 0).
pub fn output_arg<'a, T>(
    kernel: &'static str,
    arg: &'static str,
    buf: &'a mut impl DeviceOutput<T>,
    stream: &'a CudaStream,
) -> Result<(u64, usize, SyncOnDrop<'a>), Error> {
    let len = DeviceSlice::len(buf);
    let owner = buf.owner().map(|ctx| ctx.cu_ctx());
    let (ptr, guard) = buf.device_ptr_mut(stream);
    check_buffer::<T>(kernel, arg, ptr, len, owner, stream)?;
    super::graph::check_arg(kernel, arg, stream.cu_stream() as usize, ptr, len * std::mem::size_of::<T>())?;
    let ptr = if len == 0 || ptr == 0 { crate::device::buffer_align::<T>() as u64 } else { ptr };
    Ok((ptr, len, guard))
}

/// One `&[T]` input as passed: its name, address, size in bytes and whether its elements are
/// atomics.
pub type InputRange = (&'static str, u64, usize, bool);

/// Refuses a launch where an input of atomics overlaps a plain input: the plain input is
/// read-only (and `noalias`) for the kernel while threads write the other, so the kernel's
/// reads would race with those writes and could come from a stale cache. Atomics are passed as
/// `&mut` buffers, so the borrow checker already keeps cudarc's own buffers apart; this also
/// catches views that `unsafe` code made of the same memory.
pub fn check_inputs_apart(kernel: &'static str, inputs: &[InputRange]) -> Result<(), Error> {
    let live = |r: &&InputRange| r.2 > 0;
    for a in inputs.iter().filter(live).filter(|r| r.3) {
        for p in inputs.iter().filter(live).filter(|r| !r.3) {
            let (a_end, p_end) = (a.1.saturating_add(a.2 as u64), p.1.saturating_add(p.2 as u64));
            if a.1 < p_end && p.1 < a_end {
                return Err(Error::InvalidLaunch {
                    kernel,
                    reason: format!(
                        "argument `{}` (atomics, which threads write) and argument `{}` (a read-only input) overlap in \
                         device memory; pass separate buffers, or read through the atomics",
                        a.0, p.0
                    ),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_and_plain_inputs_must_not_overlap() {
        let plain = ("x", 0x1000, 400, false);
        let apart = ("counts", 0x1190, 16, true);
        assert!(check_inputs_apart("k", &[plain, apart]).is_ok());
        let inside = ("counts", 0x1100, 4, true);
        let err = check_inputs_apart("k", &[plain, inside]).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("argument `counts`") && err.contains("argument `x`"), "{err}");
        // Two plain inputs, or two of atomics, may share memory; empty ones never overlap.
        assert!(check_inputs_apart("k", &[plain, ("y", 0x1000, 400, false)]).is_ok());
        assert!(check_inputs_apart("k", &[inside, ("c2", 0x1100, 4, true)]).is_ok());
        assert!(check_inputs_apart("k", &[plain, ("c", 0x1100, 0, true)]).is_ok());
    }

    /// Buffers sit on the largest power of two dividing the element's size, up to 16 (what a
    /// view at a whole element of a 256-byte aligned allocation has), never below the type's
    /// own alignment.
    #[test]
    fn buffers_are_aligned_to_their_elements_widest_load() {
        #[repr(C, align(64))]
        struct Wide([f32; 4]);
        use crate::device::buffer_align;
        let got = [
            buffer_align::<u8>(),
            buffer_align::<[u8; 3]>(),
            buffer_align::<[u8; 4]>(),
            buffer_align::<[u16; 4]>(),
            buffer_align::<[f32; 2]>(),
            buffer_align::<[f32; 3]>(),
            buffer_align::<[f32; 4]>(),
            buffer_align::<[f32; 12]>(),
            buffer_align::<[f64; 4]>(),
            buffer_align::<Wide>(),
            buffer_align::<()>(),
        ];
        assert_eq!(got, [1, 1, 4, 8, 8, 4, 16, 16, 16, 64, 1]);
    }

    /// Whole rows and whole planes, zero for an empty width, and no overflow at the largest
    /// widths `check_shape` lets through.
    #[test]
    fn shape_words_count_whole_rows_and_planes() {
        assert_eq!(with_rows([7, 0, 0], 50), [7, 7, 0]);
        assert_eq!(with_rows([0, 0, 0], 50), [0, 0, 0]);
        assert_eq!(with_planes([7, 3, 0], 7 * 3 * 4 + 20), [7, 3, 4]);
        assert_eq!(with_planes([7, 3, 0], 20), [7, 3, 0]);
        assert_eq!(with_planes([7, 0, 0], 50), [7, 0, 0]);
        let max = u32::MAX as usize;
        assert_eq!(with_planes([max, max, 0], usize::MAX), [max, max, usize::MAX / (max * max)]);
        assert!(check_shape("k", "out", [max, max, 0]).is_ok());
        assert!(check_shape("k", "out", [max + 1, 1, 0]).is_err());
    }
}
