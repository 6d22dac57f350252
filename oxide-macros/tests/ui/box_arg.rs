use oxide_rt::device::*;

#[kernel]
pub fn k(a: Box<f32>) {
    let _ = a;
}

fn main() {}
