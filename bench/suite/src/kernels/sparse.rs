//! sparse kernels (device side).
