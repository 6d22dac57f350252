use oxide_rt::device::*;

#[kernel]
pub fn fill(y: &mut [f32]) {
    y[0] = 1.0;
}

fn main() {}
