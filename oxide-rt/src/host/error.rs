//! The one error type of the host runtime. Every variant says what failed and how to fix it.

use std::fmt;

#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// No CUDA driver library (libcuda) could be loaded.
    NoDriver,
    /// The driver is present but reports no device.
    NoDevice,
    /// `Gpu::new(ordinal)` asked for a GPU the driver does not report: it sees `count` of them,
    /// numbered from 0.
    NoSuchDevice { ordinal: usize, count: usize },
    /// A CUDA graph of typed launches could not be captured or replayed (see
    /// [`Graph`](crate::host::Graph)); the message says why and what to do.
    Graph(String),
    /// A CUDA driver call failed.
    Driver { what: String, source: cudarc::driver::DriverError },
    /// The driver rejected the embedded PTX; `log` is the JIT compiler's own log.
    PtxLoad { log: String, source: cudarc::driver::DriverError },
    /// The launch configuration cannot run this kernel on this device.
    InvalidLaunch { kernel: &'static str, reason: String },
    /// A kernel panicked (bounds check, `panic!`, `unwrap` on `None`, …). The panicking thread
    /// stopped, the rest of its launch ran on (so that launch's outputs are incomplete), and the
    /// context stays usable: later launches run normally.
    KernelPanic { kernel: &'static str, message: String, location: Option<String> },
    /// A kernel faulted (illegal address or instruction, a trap in foreign PTX, …) and the driver
    /// has marked the CUDA context of GPU `ordinal` unusable: every later call on it fails the
    /// same way, and current drivers give the process no new context on that GPU either (a
    /// primary-context reset does not help), so the process must be restarted.
    ContextLost { ordinal: usize, what: String, source: cudarc::driver::DriverError },
    /// Bad configuration of the runtime itself (environment variables).
    Config(String),
    /// A TMA tensor map's shape breaks a rule of the hardware (alignment, strides, box sizes,
    /// swizzle span) or reaches past its buffer; the message names the value and the fix.
    TensorMap(String),
    /// The CPU executor found a hazard in the kernel that the GPU would not report: a data
    /// race in shared memory, a divergent barrier, a shuffle reading an absent lane, a thread
    /// overflowing its stack or spinning forever. `report` names the threads, their source
    /// lines and the barrier epoch. See [`set_cpu_checks`](crate::host::set_cpu_checks).
    CpuCheck { kernel: &'static str, check: CpuCheck, report: String },
}

/// Which check of the CPU executor failed (see [`Error::CpuCheck`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CpuCheck {
    /// Threads of one block waited at different `sync_threads` calls, or some waited at a
    /// barrier that others had left the kernel without reaching.
    BarrierDivergence,
    /// A warp operation read a lane that does not take part in it.
    WarpLane,
    /// Two threads accessed one element of shared memory, at least one of them writing, with
    /// no barrier between them (racecheck's read-after-write, write-after-read and
    /// write-after-write hazards).
    SharedRace,
    /// A thread read shared memory that no thread of its block had written (it holds whatever
    /// the previous block left).
    UninitShared,
    /// A simulated thread ran out of stack (deep recursion, a huge local array).
    StackOverflow,
    /// A thread kept polling memory that nothing changed for longer than the watchdog allows.
    Watchdog,
}

impl fmt::Display for CpuCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CpuCheck::BarrierDivergence => "barrier divergence",
            CpuCheck::WarpLane => "warp lane misuse",
            CpuCheck::SharedRace => "shared-memory data race",
            CpuCheck::UninitShared => "read of never-written shared memory",
            CpuCheck::StackOverflow => "stack overflow",
            CpuCheck::Watchdog => "no progress (watchdog)",
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoDriver => write!(
                f,
                "no CUDA driver found (libcuda.so could not be loaded); install the NVIDIA driver, \
                 or run the kernels on the CPU with OXIDE_BACKEND=cpu"
            ),
            Error::NoDevice => write!(
                f,
                "the CUDA driver reports no GPU; check `nvidia-smi`, or run on the CPU with OXIDE_BACKEND=cpu"
            ),
            Error::NoSuchDevice { ordinal, count } => write!(
                f,
                "there is no GPU {ordinal}: the CUDA driver reports {count} GPU(s), numbered 0 to {}; check \
                 `nvidia-smi` and CUDA_VISIBLE_DEVICES, or ask `Gpu::count()` first",
                count.saturating_sub(1)
            ),
            Error::Graph(msg) => write!(f, "CUDA graph: {msg}"),
            Error::Driver { what, source } => write!(f, "{what}: {source}"),
            Error::PtxLoad { log, source } => {
                write!(f, "the CUDA driver rejected the embedded PTX ({source})")?;
                if log.trim().is_empty() {
                    write!(f, "; the JIT log is empty")
                } else {
                    write!(f, ":\n{}", log.trim_end())
                }
            }
            Error::InvalidLaunch { kernel, reason } => write!(f, "cannot launch kernel `{kernel}`: {reason}"),
            Error::KernelPanic { kernel, message, location } => {
                write!(f, "kernel `{kernel}` panicked")?;
                if let Some(loc) = location {
                    write!(f, " at {loc}")?;
                }
                write!(f, ": {message}")
            }
            Error::ContextLost { ordinal, what, source } => {
                write!(f, "{what}: {source}; {}", super::panic::lost_context_note(*ordinal))
            }
            Error::Config(msg) => f.write_str(msg),
            Error::TensorMap(msg) => write!(f, "bad tensor map: {msg}"),
            Error::CpuCheck { kernel, check, report } => {
                write!(f, "kernel `{kernel}` failed a CPU executor check ({check}): {report}")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Driver { source, .. } | Error::PtxLoad { source, .. } | Error::ContextLost { source, .. } => {
                Some(source)
            }
            _ => None,
        }
    }
}
