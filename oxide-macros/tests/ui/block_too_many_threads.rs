use oxide_rt::device::*;

#[kernel(block(64, 32))]
pub fn k(x: &[f32]) {
    let _ = x;
}

fn main() {}
