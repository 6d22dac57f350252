//! atomics kernels of the suite against their CUDA C++ twins (`cuda/suite/atomics.cu`).

use crate::cases::Case;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![]
}
