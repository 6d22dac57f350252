//! stencil3d kernels (device side).
