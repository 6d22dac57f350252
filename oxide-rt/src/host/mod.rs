//! Host runtime: embedded-PTX modules on cudarc, launch checks, errors, and the CPU executor.

mod args;
pub(crate) mod cpu;
mod error;
mod gpu;
mod graph;
mod image;
mod panic;
mod tensor_map;
mod unchecked;

pub use args::{Append, DeviceInput, DeviceOutput, Matrix, MatrixMut, Pairs, Slice2d, Slice3d};
pub use cpu::{cpu_checks, set_cpu_checks, set_cpu_watchdog, DEFAULT_WATCHDOG_MS};
pub use error::{CpuCheck, Error};
pub use gpu::{gpu_available, multiprocessors, Gpu, MAX_LOCAL_PER_THREAD};
pub use graph::{BuffersMut, Graph, GraphBuffers};
pub use image::{loaded_image, loaded_images, ImageKind};
pub use panic::{panic_in, synchronize};
pub use tensor_map::{RawTensorMap, Swizzle, TensorMap, TensorMapDesc, TmaElem};

/// Rejects a launch of more than [`crate::MAX_LAUNCH_THREADS`] threads (GPU and CPU alike).
pub(crate) fn check_thread_count(kernel: &'static str, cfg: &crate::LaunchConfig) -> Result<(), Error> {
    use crate::dim::MAX_LAUNCH_THREADS;
    let total = u128::from(cfg.grid.volume()) * u128::from(cfg.block.volume());
    if total > u128::from(MAX_LAUNCH_THREADS) {
        return Err(Error::InvalidLaunch {
            kernel,
            reason: format!(
                "the launch has {total} threads (grid {:?}, block {:?}), more than the {MAX_LAUNCH_THREADS} oxide allows \
                 (2^63, so thread indices never wrap); split the work over several launches",
                cfg.grid, cfg.block
            ),
        });
    }
    Ok(())
}

/// Which executor runs kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// NVIDIA GPU through the CUDA driver.
    Cuda,
    /// The CPU executor (same kernels, SIMT semantics on host threads).
    Cpu,
}

impl Backend {
    /// `OXIDE_BACKEND=cuda|cpu` when set; otherwise CUDA when a driver and a device are
    /// present, else the CPU.
    pub fn from_env() -> Result<Backend, Error> {
        match std::env::var("OXIDE_BACKEND") {
            Ok(v) if v.eq_ignore_ascii_case("cuda") || v.eq_ignore_ascii_case("gpu") => Ok(Backend::Cuda),
            Ok(v) if v.eq_ignore_ascii_case("cpu") => Ok(Backend::Cpu),
            Ok(v) if !v.is_empty() => Err(Error::Config(format!(
                "OXIDE_BACKEND={v:?} is not a backend; use OXIDE_BACKEND=cuda or OXIDE_BACKEND=cpu"
            ))),
            _ => Ok(if gpu_available() { Backend::Cuda } else { Backend::Cpu }),
        }
    }
}

#[doc(hidden)]
pub mod __private {
    pub use super::args::{
        check_counter, check_inputs_apart, check_matrix, check_shape, input_arg, output_arg, with_planes, with_rows,
        DeviceInput, DeviceOutput, Shaped,
    };
    pub use super::cpu::{cpu_launch, cpu_matrix, CpuKernel, SendPtr};
    pub use super::gpu::{launch_error, Kernel, EMPTY_INPUT_PAD, ONE_D_SUFFIX, UNCHECKED_SUFFIX};
    pub use super::tensor_map::{tensor_map_arg, tensor_map_on_cpu};
    pub use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, DeviceSlice, PushKernelArg};
    pub use std::sync::Arc;
}

#[cfg(test)]
mod tests {
    use crate::{Dim3, LaunchConfig};

    #[test]
    fn launches_up_to_2_pow_63_threads_pass_the_count_check_and_larger_ones_do_not() {
        let at = LaunchConfig::new(Dim3::new(1 << 31, 1 << 11, 1 << 11), 1024u32);
        assert!(super::check_thread_count("k", &at).is_ok());
        let past = LaunchConfig::new(Dim3::new(1 << 31, 1 << 11, (1 << 11) + 1), 1024u32);
        let err = super::check_thread_count("k", &past).unwrap_err().to_string();
        assert!(err.contains("9227875636482146304 threads"), "{err}");
    }
}
