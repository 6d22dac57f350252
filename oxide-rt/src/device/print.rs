//! Printing from kernels: [`dprintln!`](crate::dprintln) / [`dprint!`](crate::dprint).
//!
//! On the GPU the message is formatted with `core::fmt` into a 512-byte buffer on the thread's
//! stack (longer messages are truncated) and handed to CUDA's `vprintf("%s", buf)`; the driver
//! prints it when the host synchronizes. On the CPU executor it goes to stdout.

use core::fmt;

#[cfg(target_arch = "nvptx64")]
const CAP: usize = 512;

/// Prints `args` from the current thread. Use the macros instead.
#[doc(hidden)]
#[cfg(target_arch = "nvptx64")]
#[inline(never)]
pub fn __print(args: fmt::Arguments<'_>, newline: bool) {
    use core::fmt::Write as _;
    struct Buf {
        bytes: [u8; CAP],
        len: usize,
    }
    impl fmt::Write for Buf {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            // Keep one byte for the terminating NUL; truncate at a char boundary.
            let mut n = s.len().min(CAP - 1 - self.len);
            while !s.is_char_boundary(n) {
                n -= 1;
            }
            self.bytes[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
            self.len += n;
            Ok(())
        }
    }
    let mut buf = Buf { bytes: [0; CAP], len: 0 };
    let _ = buf.write_fmt(args);
    if newline {
        let _ = buf.write_str("\n");
    }
    buf.bytes[buf.len] = 0;
    // vprintf's argument block: one 8-byte pointer for the `%s`.
    let arg: *const u8 = buf.bytes.as_ptr();
    // SAFETY: both strings are NUL-terminated and live for the call; the argument block holds exactly the one pointer the format asks for.
    unsafe {
        core::arch::nvptx::vprintf(c"%s".as_ptr() as *const u8, &arg as *const *const u8 as *const core::ffi::c_void);
    }
}

/// Prints `args` from the current thread. Use the macros instead.
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
pub fn __print(args: fmt::Arguments<'_>, newline: bool) {
    use std::io::Write as _;
    // One locked write per call, so lines from concurrent simulated threads do not interleave.
    let mut out = std::io::stdout().lock();
    let _ = if newline { writeln!(out, "{args}") } else { write!(out, "{args}") };
}

/// `println!` for kernels: `dprintln!("i = {}, x = {}", i, x)`. See [`device::print`](crate::device::print).
#[macro_export]
macro_rules! dprintln {
    () => {
        $crate::device::print::__print(::core::format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::device::print::__print(::core::format_args!($($arg)*), true)
    };
}

/// `print!` for kernels (no newline). See [`device::print`](crate::device::print).
#[macro_export]
macro_rules! dprint {
    ($($arg:tt)*) => {
        $crate::device::print::__print(::core::format_args!($($arg)*), false)
    };
}
