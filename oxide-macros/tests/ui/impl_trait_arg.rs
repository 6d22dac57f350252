use oxide_rt::device::*;

#[kernel]
pub fn k(f: impl Fn(u32) -> u32) {
    let _ = f(1);
}

fn main() {}
