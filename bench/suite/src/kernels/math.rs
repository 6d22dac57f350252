//! math kernels (device side).
