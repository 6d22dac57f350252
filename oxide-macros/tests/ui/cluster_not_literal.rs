use oxide_rt::device::*;

const N: u32 = 2;

#[kernel(cluster(N))]
pub fn k(x: &[f32]) {
    let _ = x;
}

fn main() {}
