//! pairwise kernels on the CPU executor.
