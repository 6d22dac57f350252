//! rows kernels (device side).
