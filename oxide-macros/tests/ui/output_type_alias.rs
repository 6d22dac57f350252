// `#[kernel]` picks an output's host checks and shape words by the name in the signature: an
// alias that gives one output type another's name must not compile (here a row-major output
// would be read as a 3-D one, whose host side never checks its rows against the buffer).
use oxide_rt::device::DisjointSlice2d as DisjointSlice3d;
use oxide_rt::device::*;

#[kernel]
pub fn aliased(mut out: DisjointSlice3d<u32>) {
    if let Some(o) = out.get_mut() {
        *o = 7;
    }
}

fn main() {}
