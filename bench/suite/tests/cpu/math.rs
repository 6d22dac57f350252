//! math kernels on the CPU executor.
