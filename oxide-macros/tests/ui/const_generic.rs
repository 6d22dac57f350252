use oxide_rt::device::*;

#[kernel]
pub fn k<const N: usize>(x: &[f32]) {
    let _ = x[N];
}

fn main() {}
