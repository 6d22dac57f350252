//! Every suite kernel on the CPU executor against its plain CPU reference.
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
