use oxide_rt::device::*;

#[kernel]
pub fn k(a: TensorMap<f32>) {
    let _ = a;
}

fn main() {}
