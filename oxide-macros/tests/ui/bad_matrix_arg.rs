use oxide_rt::device::*;

#[kernel]
pub fn k(a: Matrix<f32, f32>, b: Matrix) {
    let _ = (a, b);
}

fn main() {}
