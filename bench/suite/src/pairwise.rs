//! pairwise kernels: problems, CPU references, CPU-executor runs.
