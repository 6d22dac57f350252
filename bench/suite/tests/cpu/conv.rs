//! conv kernels on the CPU executor.
