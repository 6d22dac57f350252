//! stencil3d kernels on the CPU executor.
