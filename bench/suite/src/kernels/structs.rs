//! structs kernels (device side).
