use oxide_rt::device::*;

#[kernel(block(32, 0))]
pub fn k(x: &[f32]) {
    let _ = x;
}

fn main() {}
