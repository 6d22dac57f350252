//! Kernels a new user wrote from the README alone (55 functions, 63 entries once instantiated),
//! kept as a regression corpus: they build in debug and release and `tests/` checks each on the
//! CPU executor against a plain-Rust reference.
pub mod check;
pub mod kernels;
