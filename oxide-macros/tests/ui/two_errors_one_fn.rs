// Every error of one kernel is reported at once.
use oxide_rt::device::*;

#[kernel]
pub fn k(y: &mut [f32]) -> u32 {
    y[0] = 1.0;
    0
}

fn main() {}
