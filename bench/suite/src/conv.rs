//! conv kernels: problems, CPU references, CPU-executor runs.
