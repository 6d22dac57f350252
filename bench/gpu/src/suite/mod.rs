//! The untuned-kernel suite (`bench/suite`): each kernel against its CUDA C++ twin
//! (`bench/gpu/cuda/suite/<family>.cu`), one file per family.
mod atomics;
mod conv;
mod image;
mod math;
mod networks;
mod pairwise;
mod rows;
mod sparse;
mod stencil3d;
mod structs;

use crate::cases::Case;

pub fn all() -> Vec<(&'static str, Case)> {
    let mut all = Vec::new();
    all.extend(stencil3d::cases());
    all.extend(image::cases());
    all.extend(conv::cases());
    all.extend(sparse::cases());
    all.extend(pairwise::cases());
    all.extend(math::cases());
    all.extend(structs::cases());
    all.extend(rows::cases());
    all.extend(networks::cases());
    all.extend(atomics::cases());
    all
}
