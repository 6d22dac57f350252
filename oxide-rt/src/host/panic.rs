//! Kernel panics on the GPU, reported to the host as [`Error::KernelPanic`], and what a device
//! fault does to the CUDA context.
//!
//! How: every module oxide-build produces has a global `__oxide_panic_buffer`, a pointer the
//! device panic handler (`device/nvptx.rs`) writes its [`PanicRecord`] through: source file,
//! line, column, message, thread and block, and the panicking launch's grid, block shape and
//! dynamic shared memory. Per CUDA context this module allocates one record in mapped,
//! page-locked host memory (`cuMemHostAlloc(DEVICEMAP)`) and stores its device address into the
//! global of each module loaded in that context ([`install`], called after the load).
//!
//! A panicking thread writes the record and then *exits* (it does not `trap`): a trap is a
//! device fault, and on the H200's driver (580) a fault poisons the device for the whole
//! process — not even `cuDevicePrimaryCtxReset` or a new context brings it back (measured). An
//! exit ends only that thread (barriers stop waiting for it), the launch completes, and the
//! context stays usable; the launch's outputs are incomplete, which the `Err` says. The next
//! [`synchronize`] (or typed launch) in the context reports the panic once and clears the
//! record for later launches.
//!
//! # Which kernel panicked
//!
//! The device cannot know which kernel it is running, so the host keeps, per context, the
//! launches it made that are not known to be finished ([`note_launch`], from `Kernel::prepare`;
//! a successful [`synchronize`] of a stream retires that stream's launches, and at most
//! [`IN_FLIGHT_PER_STREAM`] are kept per stream). The panicking launch is the one whose geometry
//! (grid, block, dynamic shared memory, as recorded by the device) matches. When exactly one
//! launch in flight matches, the report names its kernel, stream and launch number exactly;
//! when several match (the same geometry in flight on two streams, or queued twice on one
//! stream), it says so and lists them, naming the earliest as the kernel.
//!
//! # Device faults
//!
//! An illegal address or instruction (only `unsafe` code or foreign PTX can cause one) leaves
//! the context, and on current drivers the device, unusable for the rest of the process:
//! `Error::ContextLost` says so and that the process must be restarted.

use super::Error;
use crate::device::panic_record::{
    Geometry, PanicRecord, DONE, EMPTY, FILE_CAP, MESSAGE_CAP, MESSAGE_NOT_RECORDED, NOT_RECORDED,
};
use crate::LaunchConfig;
use cudarc::driver::{result, sys, CudaContext, CudaModule, CudaStream, DriverError};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// The device symbol the panic handler reads its record address from.
pub(crate) const SYMBOL: &str = "__oxide_panic_buffer";

/// Launches remembered per stream while not known to be finished (older ones are forgotten:
/// they have almost certainly finished, and the list must not grow without bound when a
/// stream is never synchronized through oxide).
pub(crate) const IN_FLIGHT_PER_STREAM: usize = 32;

/// One launch made through a typed launcher.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Launch {
    /// Launch number in its context, from 1.
    seq: u64,
    kernel: &'static str,
    /// The `CUstream` handle (0: the legacy default stream).
    stream: usize,
    geometry: Geometry,
}

/// Per context: its panic record and the launches in flight there.
struct Slot {
    /// Identity of the context (never dereferenced after the context is gone).
    ctx: Weak<CudaContext>,
    record: *mut PanicRecord,
    device_addr: u64,
    next_seq: u64,
    in_flight: VecDeque<Launch>,
}

// SAFETY: `record` points to page-locked host memory that lives as long as the slot's context (the slot is removed before the context is reset) and is only read on the host (volatile, after the kernels stopped).
unsafe impl Send for Slot {}

static SLOTS: Mutex<Vec<Slot>> = Mutex::new(Vec::new());

fn lock() -> MutexGuard<'static, Vec<Slot>> {
    // Each update is a single push, removal or field store, so a poisoned lock holds consistent data.
    SLOTS.lock().unwrap_or_else(|e| e.into_inner())
}

fn same_ctx(slot: &Slot, ctx: &Arc<CudaContext>) -> bool {
    std::ptr::eq(slot.ctx.as_ptr(), Arc::as_ptr(ctx))
}

/// The record of `ctx`, allocated (zeroed, mapped) on first use. The memory is kept as long as
/// the context: device code of any module of the context may point at it.
fn slot_index(slots: &mut Vec<Slot>, ctx: &Arc<CudaContext>) -> Result<usize, Error> {
    if let Some(i) = slots.iter().position(|s| same_ctx(s, ctx)) {
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
    slots.push(Slot { ctx: Arc::downgrade(ctx), record, device_addr, next_seq: 1, in_flight: VecDeque::new() });
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

/// Before a launch of `kernel` on `stream`: reports a panic of an earlier launch in the
/// context (the context would reject this launch anyway), else remembers this launch.
pub(crate) fn note_launch(stream: &CudaStream, kernel: &'static str, cfg: &LaunchConfig) -> Result<(), Error> {
    note_launches(stream, &[(kernel, geometry(cfg))])
}

/// The geometry the device records for a launch made with `cfg`.
pub(crate) fn geometry(cfg: &LaunchConfig) -> Geometry {
    Geometry {
        grid: [cfg.grid.x, cfg.grid.y, cfg.grid.z],
        block: [cfg.block.x, cfg.block.y, cfg.block.z],
        dynamic_shared: cfg.shared_mem_bytes,
    }
}

/// Reports a panic of an earlier launch in the stream's context, without noting a launch (a
/// launch under capture runs only when its graph is replayed).
pub(crate) fn check_pending(stream: &CudaStream) -> Result<(), Error> {
    note_launches(stream, &[])
}

/// [`note_launch`] for several launches at once: a replayed graph's kernel launches, each
/// distinct kernel and geometry once (which of equal launches panicked cannot be told apart).
pub(crate) fn note_launches(stream: &CudaStream, launches: &[(&'static str, Geometry)]) -> Result<(), Error> {
    let ctx = stream.context();
    let mut slots = lock();
    let Some(slot) = slots.iter_mut().find(|s| same_ctx(s, ctx)) else {
        return Ok(());
    };
    if let Some(e) = take(slot) {
        return Err(e);
    }
    let handle = stream.cu_stream() as usize;
    for (i, &(kernel, geometry)) in launches.iter().enumerate() {
        if launches[..i].iter().any(|&(k, g)| k == kernel && g == geometry) {
            continue;
        }
        let launch = Launch { seq: slot.next_seq, kernel, stream: handle, geometry };
        slot.next_seq += 1;
        remember(&mut slot.in_flight, launch);
    }
    Ok(())
}

fn remember(in_flight: &mut VecDeque<Launch>, launch: Launch) {
    if in_flight.iter().filter(|l| l.stream == launch.stream).count() >= IN_FLIGHT_PER_STREAM {
        if let Some(oldest) = in_flight.iter().position(|l| l.stream == launch.stream) {
            in_flight.remove(oldest);
        }
    }
    in_flight.push_back(launch);
}

/// `e`, or the panic recorded in `ctx` when there is one (a failed driver call after a device
/// panic is a consequence of the panic, which is the useful report).
pub(crate) fn explain(ctx: &Arc<CudaContext>, e: Error) -> Error {
    panic_in(ctx).unwrap_or_else(|| lost_if_sticky(ctx.ordinal(), e))
}

/// The panic recorded in `ctx`, if a kernel panicked there since the last report; reporting
/// it clears the record, so each panic is reported once.
pub fn panic_in(ctx: &Arc<CudaContext>) -> Option<Error> {
    lock().iter_mut().find(|s| same_ctx(s, ctx)).and_then(take)
}

/// Waits for everything queued on `stream`. When a kernel of the context panicked, returns
/// `Error::KernelPanic` (kernel, `file:line:col`, message, thread and block, which launch);
/// the context stays usable. A device fault is `Error::ContextLost`, anything else the
/// driver's error.
pub fn synchronize(stream: &CudaStream) -> Result<(), Error> {
    let ctx = stream.context();
    match stream.synchronize() {
        Ok(()) => {
            let mut slots = lock();
            let Some(slot) = slots.iter_mut().find(|s| same_ctx(s, ctx)) else { return Ok(()) };
            // The panic is read before this stream's launches are retired, so the one that
            // panicked is still among those it is matched against.
            let panicked = take(slot);
            // Everything launched on this stream before the call has finished.
            let handle = stream.cu_stream() as usize;
            slot.in_flight.retain(|l| l.stream != handle);
            panicked.map_or(Ok(()), Err)
        }
        Err(source) => {
            Err(explain(ctx, Error::Driver { what: "a kernel failed (synchronizing the stream)".into(), source }))
        }
    }
}

/// Whether `code` is one of the driver's "sticky" errors: the context is unusable afterwards.
pub(crate) fn is_sticky(code: sys::CUresult) -> bool {
    use sys::CUresult::*;
    matches!(
        code,
        CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_LAUNCH_TIMEOUT
            | CUDA_ERROR_ECC_UNCORRECTABLE
            | CUDA_ERROR_CONTEXT_IS_DESTROYED
    )
}

/// A driver error that means the context is gone becomes `Error::ContextLost`.
pub(crate) fn lost_if_sticky(ordinal: usize, e: Error) -> Error {
    match e {
        Error::Driver { what, source } if is_sticky(source.0) => Error::ContextLost { ordinal, what, source },
        e => e,
    }
}

/// The sentence every report of a lost context ends with: what happened and how to go on.
pub(crate) fn lost_context_note(ordinal: usize) -> String {
    format!(
        "the CUDA context of GPU {ordinal} is lost: a device fault is sticky, every later call on it fails, and the \
         driver gives this process no new context on that GPU (a primary-context reset does not help); restart the \
         process, or run GPU work that may fault in a child process"
    )
}

fn stream_name(handle: usize) -> String {
    match handle {
        0 => "the default stream".into(),
        2 => "the per-thread default stream".into(),
        h => format!("stream {h:#x}"),
    }
}

fn describe_geometry(g: &Geometry) -> String {
    let ([gx, gy, gz], [bx, by, bz]) = (g.grid, g.block);
    format!("grid {gx}x{gy}x{gz}, block {bx}x{by}x{bz}, {} bytes dynamic shared memory", g.dynamic_shared)
}

/// Which launch in flight panicked, given the geometry the device recorded (all zero: PTX
/// older than the geometry fields, then every launch in flight is a candidate). Returns the
/// kernel to name and a sentence saying which launch it was (or which ones it may have been).
fn attribute(in_flight: &VecDeque<Launch>, recorded: &Geometry) -> (&'static str, String) {
    let unknown = recorded.grid == [0, 0, 0];
    let matches: Vec<&Launch> = in_flight.iter().filter(|l| unknown || l.geometry == *recorded).collect();
    let launch_text = |l: &Launch| format!("launch #{} of `{}` on {}", l.seq, l.kernel, stream_name(l.stream));
    match matches.as_slice() {
        [] => (
            "<unknown kernel>",
            format!(
                "no launch made through oxide's launchers is in flight with the panicking launch's geometry ({})",
                describe_geometry(recorded)
            ),
        ),
        [only] => (only.kernel, format!("{} ({})", launch_text(only), describe_geometry(&only.geometry))),
        [first, ..] => {
            let list: Vec<String> = matches.iter().map(|l| launch_text(l)).collect();
            let same_kernel = matches.iter().all(|l| l.kernel == first.kernel);
            let what = if same_kernel { "which launch it was" } else { "which kernel it was" };
            (
                first.kernel,
                format!(
                    "{} launches in flight match the panicking launch's geometry ({}), so {what} is ambiguous: {}",
                    matches.len(),
                    describe_geometry(&first.geometry),
                    list.join(", ")
                ),
            )
        }
    }
}

/// The panic recorded in `slot`, if any, after which the record is empty again.
fn take(slot: &mut Slot) -> Option<Error> {
    let e = read(slot)?;
    // SAFETY: as in `read`; the launch that wrote the record has finished (the host reads after a synchronize, or before the next launch once the record is complete), and a panic of a later launch starts from EMPTY again.
    unsafe { std::ptr::write_volatile(&raw mut (*slot.record).state, EMPTY) };
    Some(e)
}

fn read(slot: &Slot) -> Option<Error> {
    let rec = slot.record;
    // The device writes the record before setting `state` to DONE and fences; the host reads the
    // fields only after seeing DONE, with volatile reads (the device writes behind our back).
    // SAFETY: `rec` is this context's live record (freed only with the context, after the slot is removed), read as described above.
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
        let geometry = Geometry {
            grid: std::ptr::read_volatile(&raw const (*rec).grid),
            block: std::ptr::read_volatile(&raw const (*rec).block_dim),
            dynamic_shared: std::ptr::read_volatile(&raw const (*rec).dynamic_shared),
        };
        let location =
            (file_len > 0).then(|| format!("{}:{line}:{column}", String::from_utf8_lossy(&file[..file_len])));
        let text = if message_len == MESSAGE_NOT_RECORDED {
            NOT_RECORDED.into()
        } else {
            String::from_utf8_lossy(&message[..(message_len as usize).min(MESSAGE_CAP)])
        };
        let (kernel, which) = attribute(&slot.in_flight, &geometry);
        let message = format!(
            "{text} (thread ({}, {}, {}) of block ({}, {}, {}); {which}). The panicking thread stopped and the \
             launch's other threads ran on, so its outputs are incomplete; the context stays usable",
            t[0], t[1], t[2], b[0], b[1], b[2],
        );
        Some(Error::KernelPanic { kernel, message, location })
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
        let mut in_flight = VecDeque::new();
        in_flight.push_back(Launch { seq: 3, kernel: "oob", stream: 0, geometry: Geometry::default() });
        let slot = Slot { ctx: Weak::new(), record: &mut *rec, device_addr: 0, next_seq: 4, in_flight };
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

#[cfg(test)]
mod attribution_tests {
    use super::*;

    fn geometry(grid: u32, block: u32, shared: u32) -> Geometry {
        Geometry { grid: [grid, 1, 1], block: [block, 1, 1], dynamic_shared: shared }
    }

    fn launch(seq: u64, kernel: &'static str, stream: usize, g: Geometry) -> Launch {
        Launch { seq, kernel, stream, geometry: g }
    }

    #[test]
    fn the_launch_with_the_recorded_geometry_is_named_even_when_it_is_not_the_last() {
        let mut in_flight = VecDeque::new();
        in_flight.push_back(launch(1, "panics", 0x10, geometry(1, 64, 0)));
        in_flight.push_back(launch(2, "spins", 0x20, geometry(4, 128, 0)));
        let (kernel, which) = attribute(&in_flight, &geometry(1, 64, 0));
        assert_eq!(kernel, "panics");
        assert!(which.starts_with("launch #1 of `panics` on stream 0x10 (grid 1x1x1, block 64x1x1"), "{which}");
        // Dynamic shared memory is part of the match.
        in_flight.push_back(launch(3, "other", 0x20, geometry(1, 64, 512)));
        assert_eq!(attribute(&in_flight, &geometry(1, 64, 512)).0, "other");
    }

    #[test]
    fn equal_geometries_in_flight_are_reported_as_ambiguous() {
        let mut in_flight = VecDeque::new();
        in_flight.push_back(launch(5, "a", 0, geometry(2, 32, 0)));
        in_flight.push_back(launch(6, "b", 0x30, geometry(2, 32, 0)));
        let (kernel, which) = attribute(&in_flight, &geometry(2, 32, 0));
        assert_eq!(kernel, "a", "the earliest candidate is named");
        assert!(which.contains("which kernel it was is ambiguous"), "{which}");
        assert!(which.contains("launch #5 of `a` on the default stream"), "{which}");
        assert!(which.contains("launch #6 of `b` on stream 0x30"), "{which}");
    }

    #[test]
    fn no_matching_launch_is_not_blamed_on_another_kernel() {
        let mut in_flight = VecDeque::new();
        in_flight.push_back(launch(1, "innocent", 0, geometry(8, 256, 0)));
        let (kernel, which) = attribute(&in_flight, &geometry(1, 32, 0));
        assert_eq!(kernel, "<unknown kernel>");
        assert!(which.contains("grid 1x1x1, block 32x1x1"), "{which}");
    }

    #[test]
    fn at_most_a_bounded_number_of_launches_is_kept_per_stream() {
        let mut in_flight = VecDeque::new();
        in_flight.push_back(launch(1, "long", 0x20, geometry(1, 1, 0)));
        for seq in 2..100 {
            remember(&mut in_flight, launch(seq, "loop", 0x10, geometry(1, 1, 0)));
        }
        assert_eq!(in_flight.iter().filter(|l| l.stream == 0x10).count(), IN_FLIGHT_PER_STREAM);
        assert_eq!(in_flight.front().map(|l| l.kernel), Some("long"), "another stream's launch is kept");
        assert_eq!(in_flight.back().map(|l| l.seq), Some(99));
    }

    #[test]
    fn a_report_names_the_launch_says_the_context_survives_and_is_given_once() {
        // SAFETY: all-zero is a valid PanicRecord (integers and byte arrays).
        let mut rec: Box<PanicRecord> = Box::new(unsafe { std::mem::zeroed() });
        rec.grid = [1, 1, 1];
        rec.block_dim = [64, 1, 1];
        rec.state = DONE;
        let mut in_flight = VecDeque::new();
        in_flight.push_back(launch(1, "panics", 0x10, geometry(1, 64, 0)));
        in_flight.push_back(launch(2, "spins", 0x20, geometry(4, 128, 0)));
        let mut slot = Slot { ctx: Weak::new(), record: &mut *rec, device_addr: 0, next_seq: 3, in_flight };
        let Some(e) = take(&mut slot) else { panic!("a complete record must be reported") };
        assert!(matches!(e, Error::KernelPanic { kernel: "panics", .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains("launch #1 of `panics` on stream 0x10"), "{text}");
        assert!(text.contains("outputs are incomplete; the context stays usable"), "{text}");
        assert!(take(&mut slot).is_none(), "a panic is reported once, then the record is empty again");
    }

    #[test]
    fn sticky_driver_errors_become_context_lost() {
        let sticky = Error::Driver {
            what: "launching kernel `k`".into(),
            source: DriverError(sys::CUresult::CUDA_ERROR_LAUNCH_FAILED),
        };
        let e = lost_if_sticky(1, sticky);
        // (DriverError's Display asks libcuda for the text, so only the variant is checked here.)
        assert!(matches!(e, Error::ContextLost { ordinal: 1, .. }));
        let plain = Error::Driver {
            what: "launching kernel `k`".into(),
            source: DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE),
        };
        assert!(matches!(lost_if_sticky(1, plain), Error::Driver { .. }));
        assert!(lost_context_note(1).contains("restart the process"));
    }
}
