//! rows kernels: problems, CPU references, CPU-executor runs.
