//! conv kernels (device side).
