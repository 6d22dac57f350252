//! rows kernels on the CPU executor.
