//! The device API: everything a kernel calls.
//!
//! Each function has two backends chosen at compile time: NVPTX intrinsics when the kernels
//! module is built for the GPU, and the CPU executor's per-thread context when it is built for
//! the host. Kernel code is identical for both.

mod slice;
pub mod sync;
pub mod thread;
pub mod warp;

#[cfg(target_arch = "nvptx64")]
mod nvptx;
#[cfg(target_arch = "nvptx64")]
use nvptx as backend;

#[cfg(not(target_arch = "nvptx64"))]
pub(crate) mod cpu;
#[cfg(not(target_arch = "nvptx64"))]
use cpu as backend;

pub use crate::dim::Dim3;
pub use oxide_macros::kernel;
pub use slice::DisjointSlice;
pub use sync::sync_threads;
pub use thread::ThreadIndex;
