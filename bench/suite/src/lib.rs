//! The untuned-kernel suite: frozen kernels (`kernels`), and per family the host side every
//! run shares: a deterministic problem, a plain CPU reference, a CPU-executor run and a
//! comparison. `bench/gpu` times each kernel against a CUDA C++ twin; `tests/cpu` checks each
//! on the CPU executor.
pub mod kernels;

pub mod atomics;
pub mod conv;
pub mod image;
pub mod math;
pub mod networks;
pub mod pairwise;
pub mod rows;
pub mod sparse;
pub mod stencil3d;
pub mod structs;

/// The PTX oxide-build produced for the suite's kernels (the benchmark reads register counts
/// from it).
pub const PTX: &str = include_str!(env!("OXIDE_PTX"));

/// The cubins ptxas produced for the suite's kernels, `(arch, image)`.
pub const CUBINS: &[(&str, &[u8])] = include!(env!("OXIDE_CUBINS"));
