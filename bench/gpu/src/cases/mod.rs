//! One file per example kernel: the oxide launch, its CUDA C++ twin, a correctness check.

pub mod histogram;
pub mod reduction;
pub mod saxpy;
pub mod scan;
pub mod sgemm;
pub mod softmax;
pub mod stencil;
pub mod transpose;

use crate::harness::{Bench, Res, Row};

pub type Case = fn(&Bench) -> Res<Row>;

pub fn all() -> Vec<(&'static str, Case)> {
    vec![
        ("saxpy", saxpy::run),
        ("reduction", reduction::run),
        ("sgemm", sgemm::run),
        ("histogram", histogram::run),
        ("transpose", transpose::run),
        ("softmax", softmax::run),
        ("stencil", stencil::run),
        ("scan", scan::run),
    ]
}
