use oxide_rt::device::*;

#[kernel(launch_bounds(2048))]
pub fn k(x: &[f32]) {
    let _ = x;
}

fn main() {}
