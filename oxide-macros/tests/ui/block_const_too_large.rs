use oxide_rt::device::*;

const SIDE: u32 = 64;

// Extents given as constants are checked once their values are known.
#[kernel(dims = 2, block(SIDE, SIDE))]
pub fn k(x: &[f32]) {
    let _ = x;
}

fn main() {}
