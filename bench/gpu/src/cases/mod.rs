//! One file per example kernel: the oxide launch, its CUDA C++ twin, a correctness check.

pub mod saxpy;

use crate::harness::{Bench, Res, Row};

pub type Case = fn(&Bench) -> Res<Row>;

pub fn all() -> Vec<(&'static str, Case)> {
    vec![("saxpy", saxpy::run)]
}
