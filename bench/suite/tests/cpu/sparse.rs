//! sparse kernels on the CPU executor.
