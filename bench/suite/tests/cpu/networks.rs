//! networks kernels on the CPU executor.
