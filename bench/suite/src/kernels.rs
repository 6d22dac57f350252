//! The suite's kernels, one module per family. Each kernel was written once the way a user
//! writes it (safe Rust, `[]`/`get` indexing, `usize` indices) and then **frozen**: it is never
//! edited to win a benchmark; a faster formulation goes in as a separately named variant.
pub mod atomics;
pub mod conv;
pub mod image;
pub mod math;
pub mod networks;
pub mod pairwise;
pub mod rows;
pub mod sparse;
pub mod stencil3d;
pub mod structs;
