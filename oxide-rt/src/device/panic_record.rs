//! The record a panicking kernel leaves for the host: one per CUDA context, in mapped,
//! page-locked host memory (see `host::panic`). The layout is `#[repr(C)]` and identical on the
//! device and the host, which reads it after the launch has finished (the panicking thread
//! exits after writing it).

#![cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]

#[cfg(target_arch = "nvptx64")]
use crate::dim::Dim3;

/// `state`: nobody has panicked yet.
pub(crate) const EMPTY: u32 = 0;
/// `state`: a thread won the right to write the record and is writing it.
pub(crate) const WRITING: u32 = 1;
/// `state`: the record is complete.
pub(crate) const DONE: u32 = 2;

pub(crate) const FILE_CAP: usize = 256;
/// The message of a panic in a kernel built without device-side message formatting (only the
/// host shows it).
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) const NOT_RECORDED: &str =
    "(message not recorded: release builds format panic messages on the device only with oxide_build::Build::panic_messages(true))";
pub(crate) const MESSAGE_CAP: usize = 1024;
/// `message_len` of a record whose message was not formatted on the device: the host shows
/// [`NOT_RECORDED`] (so release kernels do not carry a copy of that text at each panic site).
pub(crate) const MESSAGE_NOT_RECORDED: u32 = u32::MAX - 1;

#[repr(C)]
pub(crate) struct PanicRecord {
    /// `EMPTY` → `WRITING` by compare-and-swap (first panicking thread wins) → `DONE`.
    pub state: u32,
    pub line: u32,
    pub column: u32,
    pub file_len: u32,
    pub message_len: u32,
    pub thread: [u32; 3],
    pub block: [u32; 3],
    pub file: [u8; FILE_CAP],
    pub message: [u8; MESSAGE_CAP],
    /// The launch's geometry and dynamic shared memory, which the host matches against the
    /// launches it has in flight to name the kernel (the device cannot know its own name). Kept
    /// last so records of PTX built before these fields existed still read correctly (as 0).
    pub grid: [u32; 3],
    pub block_dim: [u32; 3],
    pub dynamic_shared: u32,
}

/// The launch a record came from, as the device sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared: u32,
}

/// Writes `info` into `*rec` if no other thread got there first.
///
/// # Safety
/// `rec` points to a live `PanicRecord` that only this function (on any thread) writes while
/// `state` is not `EMPTY`.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn record<const MESSAGE: bool>(
    rec: *mut PanicRecord,
    info: &core::panic::PanicInfo<'_>,
    thread: Dim3,
    block: Dim3,
    launch: Geometry,
) {
    use core::fmt::Write as _;
    // SAFETY: `state` is a 4-aligned u32 of the live record (see `# Safety`).
    if !unsafe { claim(&raw mut (*rec).state) } {
        return; // another thread's panic is already reported
    }
    // SAFETY: this thread won the flag, so it is the record's only writer (see `# Safety`).
    unsafe {
        if let Some(loc) = info.location() {
            let file = loc.file().as_bytes();
            // A loop over a length LLVM cannot see: with the constant length it would expand
            // the copy into one load and store per byte at every panic site, and ptxas sizes the
            // kernel's registers for that straight-line code too.
            let n = opaque(file.len().min(FILE_CAP));
            let dst = (&raw mut (*rec).file) as *mut u8;
            let mut i = 0;
            while i < n {
                dst.add(i).write_volatile(*file.as_ptr().add(i));
                i += 1;
            }
            (*rec).file_len = n as u32;
            (*rec).line = loc.line();
            (*rec).column = loc.column();
        }
        (*rec).thread = [thread.x, thread.y, thread.z];
        (*rec).block = [block.x, block.y, block.z];
        (*rec).grid = launch.grid;
        (*rec).block_dim = launch.block;
        (*rec).dynamic_shared = launch.dynamic_shared;
        if MESSAGE {
            let mut w = RawWriter { dst: (&raw mut (*rec).message) as *mut u8, cap: MESSAGE_CAP, len: 0 };
            let _ = write!(w, "{}", info.message());
            (*rec).message_len = w.len as u32;
        } else {
            (*rec).message_len = MESSAGE_NOT_RECORDED;
        }
    }
    // The fields reach the host before `DONE` does (a system-wide fence; the host reads the
    // fields only once it sees `DONE`). A plain store, not a system-scope atomic: see `claim`.
    super::nvptx::fence_system();
    // SAFETY: this thread won the flag (see above); `state` is 4-aligned, so one store.
    unsafe { (&raw mut (*rec).state).write_volatile(DONE) };
}

/// Takes `*state` from `EMPTY` to `WRITING` (PTX `atom.cas.b32`: relaxed, device scope) and says
/// whether this thread did. Device scope because only this GPU's threads compete for the flag
/// and the record lives in mapped host memory, where a system-scope atomic needs host-native
/// atomics that PCIe machines lack (compute-sanitizer's memcheck refuses it there, and the panic
/// went unreported under it).
///
/// # Safety
/// `state` points to a live, 4-aligned u32 that threads access only through this function
/// while kernels run.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn claim(state: *mut u32) -> bool {
    let old: u32;
    // SAFETY: an atomic compare-and-swap on the live, aligned word the caller vouches for.
    unsafe {
        core::arch::asm!(
            "atom.cas.b32 {old}, [{p}], {empty}, {writing};",
            old = out(reg32) old,
            p = in(reg64) state,
            empty = in(reg32) EMPTY,
            writing = in(reg32) WRITING,
            options(nostack),
        )
    };
    old == EMPTY
}

/// `n`, opaque to the optimiser (a register move it cannot look through).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn opaque(n: usize) -> usize {
    let out: usize;
    // SAFETY: a register-to-register move; no memory, no side effects.
    unsafe {
        core::arch::asm!("mov.b64 {o}, {i};", o = out(reg64) out, i = in(reg64) n, options(pure, nomem, nostack))
    };
    out
}

/// Formats into a fixed raw buffer, truncating (at a UTF-8 boundary) when it is full.
#[cfg(target_arch = "nvptx64")]
struct RawWriter {
    dst: *mut u8,
    cap: usize,
    len: usize,
}

#[cfg(target_arch = "nvptx64")]
impl core::fmt::Write for RawWriter {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let mut n = s.len().min(self.cap - self.len);
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        // SAFETY: `len + n <= cap`, and `dst..dst+cap` is the writer's exclusive buffer.
        unsafe { core::ptr::copy_nonoverlapping(s.as_ptr(), self.dst.add(self.len), n) };
        self.len += n;
        Ok(())
    }
}
