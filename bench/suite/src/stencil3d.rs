//! stencil3d kernels: problems, CPU references, CPU-executor runs.
