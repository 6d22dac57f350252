//! atomics kernels on the CPU executor.
