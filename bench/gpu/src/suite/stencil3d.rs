//! stencil3d kernels of the suite against their CUDA C++ twins (`cuda/suite/stencil3d.cu`).

use crate::cases::Case;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![]
}
