//! image kernels (device side).
