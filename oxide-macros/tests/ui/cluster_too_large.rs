use oxide_rt::device::*;

#[kernel(cluster(4, 4))]
pub fn k(x: &[f32]) {
    let _ = x;
}

fn main() {}
