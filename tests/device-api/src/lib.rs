//! Kernels exercising the whole device API (`kernels`) and the expected results every backend
//! must produce (`check`), shared by the CPU and GPU tests.
pub mod check;
pub mod kernels;
