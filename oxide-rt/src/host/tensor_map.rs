//! TMA tensor maps: the 128-byte descriptors a kernel's [`TensorMap`](crate::device::TensorMap)
//! argument receives, encoded by the CUDA driver (`cuTensorMapEncodeTiled`) after oxide has
//! checked every rule the driver would reject (or, for the bounds of the buffer, not check at
//! all): each failure is an `Err` naming the dimension, the value and the fix. A map of host
//! memory ([`TensorMap::host`]) passes the same checks and feeds the CPU executor's `cpu_*`
//! launchers, whose TMA copies read and write it as the GPU's would.
//!
//! ```no_run
//! # fn f(stream: &std::sync::Arc<cudarc::driver::CudaStream>) -> Result<(), oxide_rt::Error> {
//! use oxide_rt::host::{Swizzle, TensorMap, TensorMapDesc};
//! let a = stream.alloc_zeros::<f32>(1024 * 512).map_err(|e| oxide_rt::Error::Config(e.to_string()))?;
//! // A 512 x 1024 row-major matrix (innermost dimension first), loaded in 32 x 64 boxes.
//! let map = TensorMap::new(&a, TensorMapDesc::row_major([1024, 512], [64, 32]))?;
//! let swizzled = TensorMap::new(&a, TensorMapDesc::row_major([1024, 512], [32, 32]).swizzle(Swizzle::B128))?;
//! # let _ = (map, swizzled); Ok(()) }
//! ```

use super::Error;
use crate::device::half::{Bf16, E4M3, E5M2, F16};
use crate::device::tma::{CpuTensorMap, TensorMapInfo};
use cudarc::driver::{sys, CudaSlice, CudaStream, CudaViewMut, DeviceRepr, SyncOnDrop};
use std::cell::RefCell;

/// How a box is laid out in shared memory: plain rows, or rows whose 16-byte chunks are
/// permuted (XOR of the chunk index with the row index within a pattern of 8 rows) so that
/// threads reading a column hit different banks. With a swizzle the innermost box extent may
/// span at most the swizzle's bytes, and the tile must start aligned to 8 times that.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Swizzle {
    #[default]
    None,
    /// 32-byte spans (`CU_TENSOR_MAP_SWIZZLE_32B`).
    B32,
    /// 64-byte spans (`CU_TENSOR_MAP_SWIZZLE_64B`).
    B64,
    /// 128-byte spans (`CU_TENSOR_MAP_SWIZZLE_128B`): what wgmma's 128-byte swizzled layouts read.
    B128,
}

impl Swizzle {
    /// The span in bytes (0 for none).
    pub fn bytes(self) -> u32 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }

    fn raw(self) -> sys::CUtensorMapSwizzle {
        match self {
            Swizzle::None => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
            Swizzle::B32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
            Swizzle::B64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
            Swizzle::B128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// An element type TMA copies: `u8`, `i8`, `u16`, `i16`, `u32`, `i32`, `u64`, `i64`, `f32`,
/// `f64`, [`F16`], [`Bf16`], [`E4M3`], [`E5M2`] (the 8-bit floats as `UINT8`: TMA only moves them).
pub trait TmaElem: sealed::Sealed + Copy {
    #[doc(hidden)]
    const DATA_TYPE: sys::CUtensorMapDataType;
}

macro_rules! tma_elems {
    ($($t:ty => $v:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl TmaElem for $t {
            const DATA_TYPE: sys::CUtensorMapDataType = sys::CUtensorMapDataType::$v;
        }
    )*};
}
tma_elems!(
    u8 => CU_TENSOR_MAP_DATA_TYPE_UINT8, i8 => CU_TENSOR_MAP_DATA_TYPE_UINT8,
    u16 => CU_TENSOR_MAP_DATA_TYPE_UINT16, i16 => CU_TENSOR_MAP_DATA_TYPE_UINT16,
    u32 => CU_TENSOR_MAP_DATA_TYPE_UINT32, i32 => CU_TENSOR_MAP_DATA_TYPE_INT32,
    u64 => CU_TENSOR_MAP_DATA_TYPE_UINT64, i64 => CU_TENSOR_MAP_DATA_TYPE_INT64,
    f32 => CU_TENSOR_MAP_DATA_TYPE_FLOAT32, f64 => CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
    F16 => CU_TENSOR_MAP_DATA_TYPE_FLOAT16, Bf16 => CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
    E4M3 => CU_TENSOR_MAP_DATA_TYPE_UINT8, E5M2 => CU_TENSOR_MAP_DATA_TYPE_UINT8
);

/// The shape of a tensor and of the box one TMA copy moves, `D` = 1..=5 dimensions, innermost
/// (contiguous) first, all in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMapDesc<const D: usize> {
    /// Extent of each dimension.
    pub dims: [u64; D],
    /// Distance between neighbours along each dimension; `strides[0]` must be 1 (TMA reads
    /// rows of contiguous elements), the others times the element size a multiple of 16 bytes.
    pub strides: [u64; D],
    /// Extent of the box in each dimension, 1..=256.
    pub box_dims: [u32; D],
    /// The shared-memory layout of the box.
    pub swizzle: Swizzle,
}

impl<const D: usize> TensorMapDesc<D> {
    /// A packed row-major tensor (`strides` the running products of `dims`) without swizzle.
    pub fn row_major(dims: [u64; D], box_dims: [u32; D]) -> Self {
        let mut strides = [1u64; D];
        for i in 1..D {
            strides[i] = strides[i - 1].saturating_mul(dims[i - 1]);
        }
        TensorMapDesc { dims, strides, box_dims, swizzle: Swizzle::None }
    }

    /// The same with `swizzle`.
    pub fn swizzle(mut self, swizzle: Swizzle) -> Self {
        self.swizzle = swizzle;
        self
    }

    /// The same with these strides (elements; `strides[0]` must be 1).
    pub fn strides(mut self, strides: [u64; D]) -> Self {
        self.strides = strides;
        self
    }
}

/// The most shared memory one block may have on sm_90 (227 KiB): no box can be larger.
const MAX_BOX_BYTES: u64 = 227 * 1024;

/// Every rule of a tiled tensor map, checked for `len` elements of `elem` bytes at `addr`;
/// returns the box's bytes.
pub(crate) fn check<const D: usize>(addr: u64, len: usize, elem: usize, d: &TensorMapDesc<D>) -> Result<u32, Error> {
    let bad = |m: String| Err(Error::TensorMap(m));
    if !(1..=5).contains(&D) {
        return bad(format!("a tensor map has 1 to 5 dimensions, not {D}"));
    }
    if addr % 16 != 0 {
        return bad(format!(
            "the buffer starts at {addr:#x}, which is not 16-byte aligned; TMA needs a 16-byte aligned global \
             address: pass a whole allocation (or a view starting at a multiple of 16 bytes)"
        ));
    }
    if d.strides[0] != 1 {
        return bad(format!(
            "strides[0] is {}, but the innermost dimension must be contiguous (stride 1); transpose the data or \
             map it with the contiguous dimension first",
            d.strides[0]
        ));
    }
    let mut last = 0u64;
    for i in 0..D {
        let (n, s, b) = (d.dims[i], d.strides[i], d.box_dims[i]);
        if n == 0 || n > 1 << 32 {
            return bad(format!("dims[{i}] is {n}; each dimension has 1 to 2^32 elements"));
        }
        if !(1..=256).contains(&b) {
            return bad(format!("box_dims[{i}] is {b}; a TMA box has 1 to 256 elements per dimension"));
        }
        if i > 0 {
            let bytes = s.saturating_mul(elem as u64);
            if bytes % 16 != 0 {
                return bad(format!(
                    "strides[{i}] is {s} elements = {bytes} bytes, not a multiple of 16; TMA needs every stride \
                     to be a multiple of 16 bytes: pad each row (e.g. to {} elements)",
                    (bytes.div_ceil(16) * 16) / elem as u64
                ));
            }
            if bytes >= 1 << 40 {
                return bad(format!("strides[{i}] is {bytes} bytes; TMA strides are below 2^40 bytes"));
            }
        }
        last = last.saturating_add((n - 1).saturating_mul(s));
    }
    if last >= len as u64 {
        return bad(format!(
            "the tensor reaches element {last} but the buffer has {len}; shrink dims/strides or pass a larger buffer"
        ));
    }
    let inner = d.box_dims[0] as u64 * elem as u64;
    if inner % 16 != 0 {
        return bad(format!(
            "the box's innermost extent is {} elements = {inner} bytes, not a multiple of 16; TMA moves rows of \
             whole 16-byte units: make box_dims[0] a multiple of {}",
            d.box_dims[0],
            16 / elem.min(16)
        ));
    }
    let span = d.swizzle.bytes() as u64;
    if span != 0 && inner > span {
        return bad(format!(
            "the box's innermost extent is {inner} bytes, more than the {span}-byte swizzle span; make box_dims[0] at \
             most {} elements or choose a wider swizzle",
            span / elem as u64
        ));
    }
    let bytes = d.box_dims.iter().fold(elem as u64, |acc, &b| acc * b as u64);
    if bytes > MAX_BOX_BYTES {
        return bad(format!(
            "the box is {bytes} bytes, more than a block's shared memory ({MAX_BOX_BYTES} bytes); make it smaller"
        ));
    }
    Ok(bytes as u32)
}

/// The driver's descriptor, as the kernel parameter receives it (128 bytes, 64-byte aligned).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct RawTensorMap(pub [u64; 16]);

// SAFETY: plain bytes, passed by value as a kernel parameter of the same 128 bytes.
unsafe impl DeviceRepr for RawTensorMap {}

/// A TMA tensor map of a device buffer of `T`, `D` dimensions: pass `&map` to a kernel's
/// `TensorMap<T, D>` argument. It borrows the buffer (shared for [`new`](Self::new), exclusive
/// for [`new_mut`](Self::new_mut), which also allows TMA stores), so the buffer outlives it.
pub struct TensorMap<'a, T, const D: usize> {
    raw: RawTensorMap,
    info: TensorMapInfo,
    buf: Buffer<'a, T>,
}

/// The mapped buffer: shared for loads; for stores, a mutable view that each launch records as
/// written (cudarc then orders later uses of the buffer, on any stream, after the kernel). The
/// cell lends the view out only inside the launcher's calls, never across them.
enum Buffer<'a, T> {
    Read(&'a CudaSlice<T>),
    Write(RefCell<CudaViewMut<'a, T>>),
    /// Host memory, for the CPU executor ([`TensorMap::host`], [`TensorMap::host_mut`]): the
    /// descriptor its copies read, borrowing the slice (exclusively when writable).
    Host(CpuTensorMap, std::marker::PhantomData<&'a [T]>),
}

impl<'a, T: TmaElem, const D: usize> TensorMap<'a, T, D> {
    /// A map for loads from `buf`. `Err` names the rule a bad shape breaks (see [`TensorMapDesc`]).
    pub fn new(buf: &'a CudaSlice<T>, desc: TensorMapDesc<D>) -> Result<Self, Error> {
        let (raw, info) = Self::encode(buf, desc, false)?;
        Ok(TensorMap { raw, info, buf: Buffer::Read(buf) })
    }

    /// A map for loads from and stores to `buf`.
    pub fn new_mut(buf: &'a mut CudaSlice<T>, desc: TensorMapDesc<D>) -> Result<Self, Error> {
        let (raw, info) = Self::encode(buf, desc, true)?;
        Ok(TensorMap { raw, info, buf: Buffer::Write(RefCell::new(buf.slice_mut(..))) })
    }

    /// A map of host memory for the CPU executor's `cpu_*` launchers (loads only), checked by
    /// the same rules as a device map, so a shape the GPU refuses is refused here too.
    pub fn host(data: &'a [T], desc: TensorMapDesc<D>) -> Result<Self, Error> {
        Self::on_host(data.as_ptr() as *mut u8, data.len(), desc, false)
    }

    /// A map of host memory for the CPU executor, for loads and stores.
    pub fn host_mut(data: &'a mut [T], desc: TensorMapDesc<D>) -> Result<Self, Error> {
        Self::on_host(data.as_mut_ptr() as *mut u8, data.len(), desc, true)
    }

    fn on_host(base: *mut u8, len: usize, d: TensorMapDesc<D>, writable: bool) -> Result<Self, Error> {
        const { assert!(D >= 1 && D <= 5, "a TMA tensor map has 1 to 5 dimensions") };
        let elem = std::mem::size_of::<T>();
        // The device's address rule (16-byte alignment) concerns its memory, not the host's.
        let box_bytes = check(16, len, elem, &d)?;
        let widen = |v: &[u64]| -> [u64; 5] { std::array::from_fn(|i| v.get(i).copied().unwrap_or(1)) };
        let info = Self::info(&d, box_bytes, writable);
        let cpu = CpuTensorMap {
            base,
            elem,
            writable,
            rank: D,
            dims: widen(&d.dims),
            strides: widen(&d.strides),
            box_dims: info.box_dims,
            swizzle: info.swizzle,
        };
        Ok(TensorMap { raw: RawTensorMap([0; 16]), info, buf: Buffer::Host(cpu, std::marker::PhantomData) })
    }

    fn encode(buf: &CudaSlice<T>, d: TensorMapDesc<D>, writable: bool) -> Result<(RawTensorMap, TensorMapInfo), Error> {
        const { assert!(D >= 1 && D <= 5, "a TMA tensor map has 1 to 5 dimensions") };
        let elem = std::mem::size_of::<T>();
        let stream = buf.stream();
        let (addr, _use) = cudarc::driver::DevicePtr::device_ptr(buf, stream);
        let box_bytes = check(addr, buf.len(), elem, &d)?;
        // SAFETY: only tries to dlopen the driver library; no symbols are called.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::NoDriver);
        }
        let dims: [u64; D] = d.dims;
        let strides: Vec<u64> = (1..D).map(|i| d.strides[i] * elem as u64).collect();
        let ones = [1u32; D];
        let mut raw = std::mem::MaybeUninit::<sys::CUtensorMap>::zeroed();
        // SAFETY: every pointer is valid for the counts the driver reads (`D` extents, `D - 1` strides, `D` box and element strides), `raw` is writable storage of the descriptor's size, and `addr` is a live allocation of at least the extent `check` verified.
        let r = unsafe {
            sys::cuTensorMapEncodeTiled(
                raw.as_mut_ptr(),
                T::DATA_TYPE,
                D as u32,
                addr as *mut std::ffi::c_void,
                dims.as_ptr(),
                strides.as_ptr(),
                d.box_dims.as_ptr(),
                ones.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                d.swizzle.raw(),
                sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        };
        if r != sys::CUresult::CUDA_SUCCESS {
            return Err(Error::Driver {
                what: format!("encoding a {D}-D tensor map ({d:?}) with cuTensorMapEncodeTiled"),
                source: cudarc::driver::DriverError(r),
            });
        }
        // SAFETY: the driver wrote the descriptor (CUDA_SUCCESS).
        let raw = unsafe { raw.assume_init() };
        Ok((RawTensorMap(raw.opaque), Self::info(&d, box_bytes, writable)))
    }

    /// What the launcher passes beside the map: the box (padded to 5 dimensions with 1s), its
    /// bytes, the swizzle span, the rank, and whether stores are allowed.
    fn info(d: &TensorMapDesc<D>, box_bytes: u32, writable: bool) -> TensorMapInfo {
        let mut box_dims = [1u32; 5];
        box_dims[..D].copy_from_slice(&d.box_dims);
        TensorMapInfo { box_dims, box_bytes, swizzle: d.swizzle.bytes(), rank: D as u32, writable: writable as u32 }
    }

    /// The box's bytes (what a kernel announces on its barrier per load).
    pub fn box_bytes(&self) -> u32 {
        self.info.box_bytes
    }

    /// The launcher's view: the descriptor and the box (the buffer stays inside the map, which
    /// [`tensor_map_arg`] records as used).
    #[doc(hidden)]
    pub fn parts(&self) -> (&RawTensorMap, &TensorMapInfo) {
        (&self.raw, &self.info)
    }
}

/// A map's use by one launch, held until the kernel is enqueued: a load-only map's buffer is
/// recorded as read when this drops (cudarc's guard); a writable map's as written.
#[doc(hidden)]
pub enum TensorMapUse<'m, 'b, T> {
    Read(#[allow(dead_code)] SyncOnDrop<'m>),
    Write(&'m RefCell<CudaViewMut<'b, T>>, &'m CudaStream),
}

impl<T> Drop for TensorMapUse<'_, '_, T> {
    fn drop(&mut self) {
        if let TensorMapUse::Write(view, stream) = self {
            // After the kernel in stream order: later readers and writers of the buffer wait for
            // this write event. (Only the launcher borrows the cell, and never across calls.)
            if let Ok(mut view) = view.try_borrow_mut() {
                let _recorded_on_drop = cudarc::driver::DevicePtrMut::device_ptr_mut(&mut *view, stream);
            }
        }
    }
}

/// Records the map's buffer as used by the launch on `stream` and checks it belongs to the
/// stream's context (as for slice inputs).
#[doc(hidden)]
pub fn tensor_map_arg<'m, 'b: 'm, T: TmaElem, const D: usize>(
    kernel: &'static str,
    arg: &'static str,
    map: &'m TensorMap<'b, T, D>,
    stream: &'m CudaStream,
) -> Result<TensorMapUse<'m, 'b, T>, Error> {
    match &map.buf {
        Buffer::Host(..) => Err(Error::InvalidLaunch {
            kernel,
            reason: format!(
                "argument `{arg}` is a tensor map of host memory (`TensorMap::host`), which the GPU cannot read: map a \
                 device buffer with `TensorMap::new` / `new_mut` for `launch_*`, or run the kernel with `cpu_*`"
            ),
        }),
        Buffer::Read(buf) => {
            let (_, _, guard) = super::args::input_arg::<T>(kernel, arg, *buf, stream, 0)?;
            Ok(TensorMapUse::Read(guard))
        }
        Buffer::Write(cell) => {
            // The same checks as an output's; the stream also waits here for earlier uses.
            let mut view = cell.try_borrow_mut().map_err(|_| Error::InvalidLaunch {
                kernel,
                reason: format!("argument `{arg}`: the writable tensor map is in use by another launch"),
            })?;
            let (_, _, use_now) = super::args::output_arg::<T>(kernel, arg, &mut *view, stream)?;
            drop(use_now);
            drop(view);
            Ok(TensorMapUse::Write(cell, stream))
        }
    }
}

/// A CPU launcher's kernel argument for `map`: a map of host memory ([`TensorMap::host`]),
/// whose descriptor the executor's TMA copies read; a map of device memory is an `Err`.
#[doc(hidden)]
pub fn tensor_map_on_cpu<T: crate::device::SharedElem, const D: usize>(
    kernel: &'static str,
    arg: &'static str,
    map: &TensorMap<'_, T, D>,
) -> Result<crate::device::TensorMap<T, D>, Error> {
    const { assert!(D >= 1 && D <= 5, "a TMA tensor map has 1 to 5 dimensions") };
    match &map.buf {
        // SAFETY: on the CPU executor a kernel's map is the address of a `CpuTensorMap`; this one lives in `map`, borrowed for the whole (blocking) CPU launch, and borrows the host buffer it describes.
        Buffer::Host(cpu, _) => {
            Ok(unsafe { crate::device::TensorMap::__from_param(cpu as *const CpuTensorMap as u64, map.info) })
        }
        _ => Err(Error::InvalidLaunch {
            kernel,
            reason: format!(
                "argument `{arg}` is a TMA tensor map of device memory, which the CPU executor cannot read: map host \
                 memory with `TensorMap::host` / `host_mut` for `cpu_*`, or launch the kernel on the GPU (`launch_*`)"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(r: Result<u32, Error>) -> String {
        match r {
            Err(Error::TensorMap(m)) => m,
            other => panic!("expected Error::TensorMap, got {other:?}"),
        }
    }

    #[test]
    fn a_packed_matrix_passes_and_reports_its_box_bytes() {
        let d = TensorMapDesc::row_major([64, 32], [16, 8]);
        assert_eq!(d.strides, [1, 64]);
        assert_eq!(check(0x1000, 64 * 32, 4, &d).unwrap(), 16 * 8 * 4);
        let d5 = TensorMapDesc::row_major([4, 4, 4, 4, 4], [4, 2, 1, 3, 2]);
        assert_eq!(d5.strides, [1, 4, 16, 64, 256]);
        assert_eq!(check(0x1000, 1024, 4, &d5).unwrap(), 4 * 2 * 3 * 2 * 4);
    }

    #[test]
    fn misaligned_strides_are_refused_with_the_padding_to_use() {
        // 100 f32 per row = 400 bytes: a multiple of 16. 10 bf16 per row = 20 bytes: not.
        let d = TensorMapDesc::row_major([10, 8], [8, 8]);
        let m = msg(check(0x1000, 80, 2, &d));
        assert!(m.contains("strides[1] is 10 elements = 20 bytes, not a multiple of 16"), "{m}");
        assert!(m.contains("pad each row (e.g. to 16 elements)"), "{m}");
        check(0x1000, 100 * 8, 4, &TensorMapDesc::row_major([100, 8], [4, 8])).unwrap();
    }

    #[test]
    fn address_box_and_swizzle_rules_are_checked() {
        let d = TensorMapDesc::row_major([64, 64], [64, 64]);
        assert!(msg(check(0x1008, 4096, 2, &d)).contains("not 16-byte aligned"));
        let big = TensorMapDesc::row_major([512, 4], [512, 4]);
        assert!(msg(check(0x1000, 2048, 2, &big)).contains("box_dims[0] is 512"));
        let odd = TensorMapDesc::row_major([64, 4], [6, 4]);
        assert!(msg(check(0x1000, 256, 2, &odd)).contains("innermost extent is 6 elements = 12 bytes"));
        // 64 bf16 = 128 bytes fits the 128-byte swizzle, not the 64-byte one.
        check(0x1000, 4096, 2, &d.swizzle(Swizzle::B128)).unwrap();
        let m = msg(check(0x1000, 4096, 2, &d.swizzle(Swizzle::B64)));
        assert!(m.contains("more than the 64-byte swizzle span; make box_dims[0] at most 32"), "{m}");
        let flat = TensorMapDesc::row_major([64, 64], [64, 64]).strides([2, 64]);
        assert!(msg(check(0x1000, 4096, 2, &flat)).contains("strides[0] is 2"));
    }

    #[test]
    fn a_tensor_larger_than_its_buffer_is_refused() {
        let d = TensorMapDesc::row_major([64, 65], [64, 1]);
        let m = msg(check(0x1000, 64 * 64, 4, &d));
        assert!(m.contains("reaches element 4159 but the buffer has 4096"), "{m}");
        let e = check(0x1000, 64 * 64, 4, &TensorMapDesc::row_major([64, 64], [64, 1])).unwrap();
        assert_eq!(e, 256);
    }
}
