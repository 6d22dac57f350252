use oxide_rt::device::*;

#[kernel(launch_bounds(128), block(32, 8))]
pub fn k(x: &[f32]) {
    let _ = x;
}

fn main() {}
