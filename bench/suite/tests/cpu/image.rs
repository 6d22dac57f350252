//! image kernels on the CPU executor.
