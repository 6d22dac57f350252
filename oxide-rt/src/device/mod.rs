//! The device API: everything a kernel calls.
//!
//! Each function has two backends chosen at compile time: NVPTX instructions when the kernels
//! module is built for the GPU, and the CPU executor's per-thread context when it is built for
//! the host. Kernel code is identical for both. `use oxide_rt::device::*;` brings in the modules
//! and the most common names:
//!
//! | module | CUDA equivalent |
//! | --- | --- |
//! | [`thread`] | `threadIdx`, `blockIdx`, `blockDim`, `gridDim`, global indices, lane/warp ids |
//! | [`sync`] | `__syncthreads{,_count,_and,_or}`, `__syncwarp`, `__threadfence{_block,,_system}` |
//! | [`shared`] | `__shared__` arrays ([`shared_array!`](crate::shared_array)), `extern __shared__` |
//! | [`atomic`] | `atomicAdd` … `atomicCAS` with block/device/system scope, float add |
//! | [`warp`] | `__shfl*_sync`, `__all/__any/__ballot_sync`, `__activemask`, `__popc` … |
//! | [`math`] | `sqrtf`, `expf`, … (libdevice), [`math::fast`] (`__expf`, …) |
//! | [`tensor`] | `mma.sync`, `ldmatrix`, `cp.async` (sm_80): tensor cores and async copies |
//! | [`wgmma`] | `wgmma.mma_async`, matrix descriptors, `setmaxnreg` (sm_90a): Hopper warpgroup MMA |
//! | [`mbarrier`] | `mbarrier.*` (sm_80/sm_90): transaction barriers in shared memory |
//! | [`tma`] | `cp.async.bulk.tensor` (sm_90): TMA copies with host-built tensor maps |
//! | [`cluster`] | thread-block clusters (sm_90): ranks, cluster barriers, distributed shared memory |
//! | [`specialize`] | `elect.sync` (sm_90), `setmaxnreg` (sm_90a): warp specialization |
//! | [`half`] | `__nv_bfloat16`, `__half`, TF32, `__nv_fp8_e4m3`, `__nv_fp8_e5m2`: [`Bf16`], [`F16`], [`Tf32`], [`E4M3`], [`E5M2`] |
//! | [`print`](mod@print) | `printf` ([`dprintln!`](crate::dprintln)) |
//!
//! **Inline PTX.** The kernels module is built with `asm_experimental_arch`, so
//! `core::arch::asm!` is the escape hatch for any instruction the API lacks. The CPU executor
//! cannot run PTX: put the `asm!` under `#[cfg(target_arch = "nvptx64")]` and give the host
//! build a Rust fallback under `#[cfg(not(target_arch = "nvptx64"))]` (README, "Writing
//! kernels", has the pattern). [`tma::TensorMap::as_u64`] and [`mbarrier::Mbarrier::as_ptr`]
//! hand their addresses to such code.
//!
//! A panic in a kernel (bounds check, `panic!`, `unwrap`) stops the kernel; on the GPU the host
//! gets `Error::KernelPanic` with the source location and message from
//! `oxide_rt::host::synchronize` (or the next launch).

pub mod atomic;
pub mod cluster;
pub mod half;
pub mod math;
mod matrix;
pub mod mbarrier;
pub(crate) mod panic_record;
pub mod print;
pub mod shared;
pub(crate) mod slice;
pub(crate) use slice::assume_buffer;
pub mod specialize;
pub mod sync;
pub mod tensor;
pub mod thread;
pub mod tma;
pub mod warp;
pub mod wgmma;

#[cfg(target_arch = "nvptx64")]
pub(crate) mod nvptx;
#[cfg(target_arch = "nvptx64")]
use nvptx as backend;
#[cfg(target_arch = "nvptx64")]
pub(crate) mod nvptx_hopper;
#[cfg(target_arch = "nvptx64")]
pub(crate) mod nvptx_tensor;
#[cfg(target_arch = "nvptx64")]
pub(crate) mod nvptx_wgmma;

#[cfg(not(target_arch = "nvptx64"))]
pub(crate) mod cpu;
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) mod cpu_hopper;
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) mod cpu_tensor;
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) mod racecheck;
#[cfg(not(target_arch = "nvptx64"))]
use cpu as backend;

pub use crate::dim::Dim3;
pub use crate::KernelArg;
pub use crate::{dprint, dprintln, mbarriers, shared_array};
pub use atomic::{AtomicF32, AtomicF64, AtomicFloat, AtomicInt, Scope};
pub use half::{Bf16, Tf32, E4M3, E5M2, F16};
pub use math::Float;
pub use matrix::Matrix;
pub use mbarrier::{Mbarrier, Mbarriers};
pub use oxide_macros::kernel;
pub use shared::{dynamic_shared, dynamic_shared_aligned, Shared2d, SharedAtomic, SharedElem, SharedSlice};
pub use slice::{
    buffer_align, DisjointAppend, DisjointButterflies, DisjointChunks, DisjointPerBlock, DisjointPerWarp, DisjointRows,
    DisjointSlice, DisjointSlice2d, DisjointSlice3d, DisjointStrided, DisjointTiles, DisjointXorPairs,
};
pub use sync::{sync_threads, sync_threads_and, sync_threads_count, sync_threads_or, sync_warp};
pub use tensor::DisjointMmaTiles;
pub use thread::{ThreadIndex, WARP_SIZE};
pub use tma::TensorMap;
pub use warp::FULL_MASK;
pub use wgmma::{DisjointPersistentWgmmaTiles, DisjointWgmmaTiles};
