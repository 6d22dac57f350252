use oxide_rt::device::*;

#[kernel]
pub async fn k(x: &[f32]) {
    let _ = x;
}

fn main() {}
