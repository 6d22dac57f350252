//! atomics kernels (device side).
