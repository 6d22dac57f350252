//! structs kernels on the CPU executor.
