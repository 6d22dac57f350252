use oxide_rt::device::*;

#[kernel]
pub fn k(a: TensorMap<f32, 6>) {
    let _ = a.box_bytes();
}

fn main() {}
