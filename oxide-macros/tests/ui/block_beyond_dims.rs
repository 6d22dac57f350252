use oxide_rt::device::*;

#[kernel(dims = 1, block(32, 8))]
pub fn k(x: &[f32]) {
    let _ = x;
}

fn main() {}
