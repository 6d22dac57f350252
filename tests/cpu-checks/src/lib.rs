//! Kernels with the bugs the CPU executor's checks find (`kernels`), each paired with a test in
//! `tests/` that expects the precise `Error::CpuCheck` (or, for a big but legal stack frame,
//! the right result).
pub mod kernels;
