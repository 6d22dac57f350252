//! oxide runtime.
//!
//! * [`device`]: what kernels call (indices, barriers, disjoint output slices). It is `no_std`
//!   and compiles for `nvptx64-nvidia-cuda` (intrinsics) and for the host (the CPU executor's
//!   per-thread context), so the same kernel source runs on both.
//! * [`host`] (not on nvptx64): loading embedded PTX through cudarc, launch checks, errors, and
//!   the CPU executor behind every `cpu_<kernel>` launcher.
//!
//! A crate with kernels depends on this crate alone (plus `oxide-build` in its
//! build-dependencies): [`macro@kernel`] turns a function of its kernels module into a kernel with
//! typed launchers, [`cuda`] is the cudarc driver API those launchers take (`CudaSlice`,
//! `CudaStream`, …), and `host::Gpu::new(0)` gives a context and its stream. The README's
//! "Your own crate" is a whole example.
//!
//! Generated code reaches this crate only through [`__private`].
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(stdarch_nvptx, asm_experimental_arch))]

mod arg;
pub mod device;
mod dim;

#[cfg(not(target_arch = "nvptx64"))]
pub mod host;

pub use arg::KernelArg;
pub use device::half::{Bf16, Tf32, E4M3, E5M2, F16};
pub use dim::{Dim3, LaunchConfig, MAX_LAUNCH_THREADS};
pub use oxide_macros::kernel;
pub use oxide_macros::KernelArg;

#[cfg(not(target_arch = "nvptx64"))]
pub use host::{Append, Backend, CpuCheck, Error, Matrix, MatrixMut, Pairs, Slice2d, Slice3d};

/// cudarc's driver API, the types the launchers take (`CudaSlice`, `CudaStream`, …), re-exported
/// so a crate depends on `oxide-rt` alone and its cudarc version always matches oxide's.
#[cfg(not(target_arch = "nvptx64"))]
pub use cudarc::driver as cuda;

/// The kernels module that oxide-build embedded for the crate expanding this macro: its PTX and
/// the cubins ptxas produced (see `oxide_build`'s `OXIDE_PTX` / `OXIDE_CUBINS`).
#[doc(hidden)]
#[macro_export]
macro_rules! __oxide_module {
    () => {
        &$crate::__private::EmbeddedModule {
            ptx: ::core::include_str!(::core::env!(
                "OXIDE_PTX",
                "no PTX was built for this crate's kernels; add `oxide_build::kernels(\"src/kernels.rs\").compile();` to its build.rs"
            )),
            cubins: ::core::include!(::core::env!(
                "OXIDE_CUBINS",
                "no kernel images were built for this crate; add `oxide_build::kernels(\"src/kernels.rs\").compile();` to its build.rs"
            )),
        }
    };
}

/// Includes what oxide-build generated for the crate's CUDA C++ sources
/// (`oxide_build::kernels(..).cuda_source("src/filters.cu")`): the structs of their headers as
/// `#[repr(C)]` kernel arguments (with the C layout asserted on the host and on nvptx64) and,
/// on the host, `launch_<kernel>` / `launch_<kernel>_with` for every `__global__` function, plus
/// a `cpu_<kernel>` that returns `Err` (CUDA C++ runs only on a GPU). Put it in the kernels
/// module, so Rust kernels can take the shared structs too:
///
/// ```ignore
/// // src/kernels.rs
/// oxide_rt::include_cuda!();
/// ```
#[macro_export]
macro_rules! include_cuda {
    () => {
        ::core::include!(::core::env!(
            "OXIDE_CUDA",
            "no CUDA C++ bindings were generated for this crate; add `.cuda_source(\"src/<file>.cu\")` to the `oxide_build::kernels(..)` call in its build.rs"
        ));
    };
}

/// A kernels module embedded in a host binary: PTX for any GPU (JIT-compiled by the driver) and
/// ahead-of-time cubins per architecture, e.g. `("sm_90", bytes)`.
#[doc(hidden)]
#[derive(Debug)]
pub struct EmbeddedModule {
    pub ptx: &'static str,
    pub cubins: &'static [(&'static str, &'static [u8])],
}

/// Re-exports used by code that `#[kernel]` generates. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::device::atomic::AtomicElem;
    pub use crate::device::slice::OutputSlice;

    /// `a == b`, at compile time: `#[kernel]` asserts that the output and atomic types it
    /// chose by the name written in a signature are oxide's types of that name.
    pub const fn same_name(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }
    pub use crate::device::tma::{TensorMapInfo, TensorMapParam};

    #[cfg(target_arch = "nvptx64")]
    pub use crate::device::nvptx::{assume_block, assume_dims, assume_max_threads, handle_panic};

    /// The start and end of every `#[kernel(cluster(..))]` entry: no block exits (and frees
    /// its shared memory) while another thread of the cluster can still reach it, early
    /// returns and skipped cluster barriers included (see `device::cluster`).
    pub use crate::device::cluster::{__enter as cluster_enter, __exit as cluster_exit};

    /// Rejects a launch that uses more dimensions than the kernel's `#[kernel(dims = N)]`.
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn check_dims(kernel: &'static str, dims: u8, cfg: &crate::LaunchConfig) -> Result<(), crate::Error> {
        let (g, b) = (cfg.grid, cfg.block);
        let used = |d: crate::Dim3| {
            if d.z != 1 {
                3
            } else if d.y != 1 {
                2
            } else {
                1
            }
        };
        let n = used(g).max(used(b));
        if n > dims {
            return Err(crate::Error::InvalidLaunch {
                kernel,
                reason: format!(
                    "the kernel is declared `#[kernel(dims = {dims})]` but the launch uses {n} dimensions (grid {}x{}x{}, block {}x{}x{})",
                    g.x, g.y, g.z, b.x, b.y, b.z
                ),
            });
        }
        Ok(())
    }
    /// Rejects a launch whose block is not the kernel's `#[kernel(block(..))]`.
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn check_block(kernel: &'static str, block: [u32; 3], cfg: &crate::LaunchConfig) -> Result<(), crate::Error> {
        let b = cfg.block;
        if [b.x, b.y, b.z] != block {
            return Err(crate::Error::InvalidLaunch {
                kernel,
                reason: format!(
                    "the kernel is declared `#[kernel(block({}, {}, {}))]` but the launch uses blocks of {}x{}x{}; launch it with exactly that block",
                    block[0], block[1], block[2], b.x, b.y, b.z
                ),
            });
        }
        Ok(())
    }
    /// Rejects a launch of a `#[kernel(cluster(..))]` kernel whose grid is not a whole number
    /// of clusters in every dimension.
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn check_cluster(
        kernel: &'static str,
        cluster: [u32; 3],
        cfg: &crate::LaunchConfig,
    ) -> Result<(), crate::Error> {
        let g = cfg.grid;
        if [g.x, g.y, g.z].iter().zip(cluster).any(|(&g, c)| g % c != 0) {
            return Err(crate::Error::InvalidLaunch {
                kernel,
                reason: format!(
                    "the kernel is declared `#[kernel(cluster({}, {}, {}))]` but the grid {}x{}x{} is not a whole number of clusters; make each grid extent a multiple of the cluster's",
                    cluster[0], cluster[1], cluster[2], g.x, g.y, g.z
                ),
            });
        }
        Ok(())
    }
    pub use crate::arg::{assert_kernel_arg, KernelArg};
    #[cfg(not(target_arch = "nvptx64"))]
    pub use crate::arg::{push_value, IntProbe, IntValue, NotInt};

    #[cfg(not(target_arch = "nvptx64"))]
    pub use crate::host::__private::*;

    #[cfg(not(target_arch = "nvptx64"))]
    pub use crate::__oxide_module as module;
    pub use crate::EmbeddedModule;

    /// Rebuilds a kernel's `&[T]` argument from the pointer and length the host passed.
    ///
    /// # Safety
    /// `ptr`/`len` must describe a live allocation of `len` initialised `T`s (`ptr` non-null
    /// and aligned even when `len == 0`) that nobody writes during the kernel; the host launcher guarantees this by passing a shared borrow of a
    /// device slice for the duration of the launch.
    /// The host launchers never pass a null pointer (see `host::args::output_arg`), so no
    /// branch is needed here.
    #[inline(always)]
    pub unsafe fn slice_from_raw<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
        // SAFETY: guaranteed by the caller, see above; `ptr` is non-null and aligned even when `len == 0`.
        unsafe {
            crate::device::assume_buffer::<T>(ptr, len);
            core::slice::from_raw_parts(ptr, len)
        }
    }
}
