//! networks kernels (device side).
