//! Kernel panics on the GPU, reported to the host as [`Error::KernelPanic`].
//!
//! How: every module oxide-build produces has a global `__oxide_panic_buffer`, a pointer the
//! device panic handler (`device/nvptx.rs`) writes its [`PanicRecord`] through: source file,
//! line, column, message, thread and block. Per CUDA context this module allocates one record in
//! mapped, page-locked host memory (`cuMemHostAlloc(DEVICEMAP)`), so the host can still read it
//! after the kernel's `trap` has made the context unusable, and stores its device address into
//! the global of each module loaded in that context ([`install`], called after the load).
//!
//! The device cannot know which kernel it is running, so the host remembers the last kernel
//! launched in each context ([`note_launch`], from `Kernel::prepare`) and names that one. With
//! several streams launching concurrently in one context the name can be a neighbour's; the
//! location and message are always the panicking thread's.
//!
//! A kernel's failure shows up at the next synchronizing call: [`synchronize`] (or
//! `Gpu::synchronize`) turns it into `Error::KernelPanic`, and so does the next launch through a
//! typed launcher in that context.

use super::Error;
use crate::device::panic_record::{PanicRecord, DONE, FILE_CAP, MESSAGE_CAP, MESSAGE_NOT_RECORDED, NOT_RECORDED};
use cudarc::driver::{result, sys, CudaContext, CudaModule, CudaStream, DriverError};
use std::sync::{Arc, Mutex, MutexGuard};

/// The device symbol the panic handler reads its record address from.
const SYMBOL: &str = "__oxide_panic_buffer";

/// Per context: its panic record and the last kernel launched there.
struct Slot {
    ctx: usize,
    record: *mut PanicRecord,
    device_addr: u64,
    last_kernel: &'static str,
}

// SAFETY: `record` points to page-locked host memory that lives for the rest of the process (never freed) and is only read on the host (volatile, after the kernels stopped).
unsafe impl Send for Slot {}

static SLOTS: Mutex<Vec<Slot>> = Mutex::new(Vec::new());

fn lock() -> MutexGuard<'static, Vec<Slot>> {
    // Each update is a single push or field store, so a poisoned lock holds consistent data.
    SLOTS.lock().unwrap_or_else(|e| e.into_inner())
}

fn ctx_key(ctx: &Arc<CudaContext>) -> usize {
    Arc::as_ptr(ctx) as usize
}

/// The record of `ctx`, allocated (zeroed, mapped) on first use. The memory is kept for the
/// life of the process: device code of any module of the context may point at it.
fn slot_index(slots: &mut Vec<Slot>, ctx: &Arc<CudaContext>) -> Result<usize, Error> {
    let key = ctx_key(ctx);
    if let Some(i) = slots.iter().position(|s| s.ctx == key) {
        return Ok(i);
    }
    let what = "allocating the mapped host memory that reports kernel panics";
    let driver = |source: DriverError| Error::Driver { what: what.into(), source };
    ctx.bind_to_thread().map_err(driver)?;
    let size = std::mem::size_of::<PanicRecord>();
    // SAFETY: a plain page-locked allocation of `size` bytes; it is zeroed below before use.
    let host = unsafe { result::malloc_host(size, sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE) }
        .map_err(driver)?;
    let record = host as *mut PanicRecord;
    // SAFETY: `record` is a fresh allocation of exactly one `PanicRecord`, which is plain integers and bytes, so all-zero is a valid (empty) record.
    unsafe { std::ptr::write_bytes(record, 0, 1) };
    let mut device_addr: sys::CUdeviceptr = 0;
    // SAFETY: `host` was allocated with DEVICEMAP in this (bound) context; flags must be 0.
    unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device_addr, host, 0) }.result().map_err(driver)?;
    slots.push(Slot { ctx: key, record, device_addr, last_kernel: "<unknown kernel>" });
    Ok(slots.len() - 1)
}

/// Points `module`'s panic-buffer global at the context's record. A module without the global
/// (PTX not built by oxide-build) simply reports panics as plain launch failures.
pub(crate) fn install(ctx: &Arc<CudaContext>, module: &Arc<CudaModule>) -> Result<(), Error> {
    let addr = {
        let mut slots = lock();
        let i = slot_index(&mut slots, ctx)?;
        slots[i].device_addr
    };
    let stream = ctx.default_stream();
    let Ok(mut global) = module.get_global(SYMBOL, &stream) else {
        return Ok(());
    };
    if global.len() < 8 {
        return Ok(());
    }
    let what = "setting the kernel panic buffer of a freshly loaded module";
    stream
        .memcpy_htod(&addr.to_ne_bytes(), &mut global)
        .and_then(|_| stream.synchronize())
        .map_err(|source| Error::Driver { what: what.into(), source })
}

/// Remembers `kernel` as the last one launched in `ctx`, after reporting a panic of the
/// previous launch (the context would reject this launch anyway).
pub(crate) fn note_launch(ctx: &Arc<CudaContext>, kernel: &'static str) -> Result<(), Error> {
    let key = ctx_key(ctx);
    let mut slots = lock();
    let Some(slot) = slots.iter_mut().find(|s| s.ctx == key) else {
        return Ok(());
    };
    if let Some(e) = read(slot) {
        return Err(e);
    }
    slot.last_kernel = kernel;
    Ok(())
}

/// The panic recorded in `ctx`, if a kernel panicked there.
pub fn panic_in(ctx: &Arc<CudaContext>) -> Option<Error> {
    let key = ctx_key(ctx);
    lock().iter().find(|s| s.ctx == key).and_then(read)
}

/// Waits for everything queued on `stream`. When a kernel failed, returns
/// `Error::KernelPanic` (kernel, `file:line:col`, message, thread and block) if it panicked,
/// else the driver's error.
pub fn synchronize(stream: &CudaStream) -> Result<(), Error> {
    match stream.synchronize() {
        Ok(()) => Ok(()),
        Err(source) => Err(panic_in(stream.context())
            .unwrap_or_else(|| Error::Driver { what: "a kernel failed (synchronizing the stream)".into(), source })),
    }
}

fn read(slot: &Slot) -> Option<Error> {
    let rec = slot.record;
    // The device writes the record before setting `state` to DONE and fences; the host reads the
    // fields only after seeing DONE, with volatile reads (the device writes behind our back).
    // SAFETY: `rec` is this context's live record (never freed), read as described above.
    unsafe {
        if std::ptr::read_volatile(&raw const (*rec).state) != DONE {
            return None;
        }
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        let file_len = (std::ptr::read_volatile(&raw const (*rec).file_len) as usize).min(FILE_CAP);
        let message_len = std::ptr::read_volatile(&raw const (*rec).message_len);
        let file: [u8; FILE_CAP] = std::ptr::read_volatile(&raw const (*rec).file);
        let message: [u8; MESSAGE_CAP] = std::ptr::read_volatile(&raw const (*rec).message);
        let line = std::ptr::read_volatile(&raw const (*rec).line);
        let column = std::ptr::read_volatile(&raw const (*rec).column);
        let t = std::ptr::read_volatile(&raw const (*rec).thread);
        let b = std::ptr::read_volatile(&raw const (*rec).block);
        let location =
            (file_len > 0).then(|| format!("{}:{line}:{column}", String::from_utf8_lossy(&file[..file_len])));
        let text = if message_len == MESSAGE_NOT_RECORDED {
            NOT_RECORDED.into()
        } else {
            String::from_utf8_lossy(&message[..(message_len as usize).min(MESSAGE_CAP)])
        };
        let message = format!("{text} (thread ({}, {}, {}) of block ({}, {}, {}))", t[0], t[1], t[2], b[0], b[1], b[2]);
        Some(Error::KernelPanic { kernel: slot.last_kernel, message, location })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::panic_record::WRITING;

    fn slot_with(f: impl FnOnce(&mut PanicRecord)) -> (Box<PanicRecord>, Slot) {
        // SAFETY: all-zero is a valid PanicRecord (integers and byte arrays).
        let mut rec: Box<PanicRecord> = Box::new(unsafe { std::mem::zeroed() });
        f(&mut rec);
        let slot = Slot { ctx: 1, record: &mut *rec, device_addr: 0, last_kernel: "oob" };
        (rec, slot)
    }

    #[test]
    fn a_complete_record_becomes_kernel_panic() {
        let (_rec, slot) = slot_with(|r| {
            let file = b"src/kernels.rs";
            r.file[..file.len()].copy_from_slice(file);
            r.file_len = file.len() as u32;
            r.line = 12;
            r.column = 9;
            let msg = b"index out of bounds: the len is 4 but the index is 7";
            r.message[..msg.len()].copy_from_slice(msg);
            r.message_len = msg.len() as u32;
            r.thread = [7, 0, 0];
            r.state = DONE;
        });
        let Some(e) = read(&slot) else { panic!("a complete record must be reported") };
        match &e {
            Error::KernelPanic { kernel, message, location } => {
                assert_eq!(*kernel, "oob");
                assert_eq!(location.as_deref(), Some("src/kernels.rs:12:9"));
                assert!(message.starts_with("index out of bounds"), "{message}");
                assert!(message.contains("thread (7, 0, 0) of block (0, 0, 0)"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(e.to_string().contains("kernel `oob` panicked at src/kernels.rs:12:9"), "{e}");
    }

    #[test]
    fn a_record_without_a_message_names_the_option_that_records_it() {
        let (_rec, slot) = slot_with(|r| {
            r.message_len = MESSAGE_NOT_RECORDED;
            r.state = DONE;
        });
        let Some(e) = read(&slot) else { panic!("a complete record must be reported") };
        assert!(e.to_string().contains("panic_messages(true)"), "{e}");
    }

    #[test]
    fn empty_or_half_written_records_are_not_reported() {
        assert!(read(&slot_with(|_| {}).1).is_none());
        assert!(read(&slot_with(|r| r.state = WRITING).1).is_none());
    }

    #[test]
    fn oversized_lengths_are_clamped() {
        let (_rec, slot) = slot_with(|r| {
            r.file_len = u32::MAX;
            r.message_len = u32::MAX;
            r.state = DONE;
        });
        assert!(matches!(read(&slot), Some(Error::KernelPanic { .. })));
    }
}
