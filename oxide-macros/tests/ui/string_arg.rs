use oxide_rt::device::*;

#[kernel]
pub fn k(label: String) {
    let _ = label;
}

fn main() {}
