use oxide_rt::device::*;

#[kernel]
pub fn sum(x: &[f32]) -> f32 {
    x[0]
}

fn main() {}
