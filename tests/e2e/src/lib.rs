//! A library whose kernels module is built by oxide-build from build.rs.
pub mod kernels;
