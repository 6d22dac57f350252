use oxide_rt::device::*;

#[kernel]
pub fn k(flag: bool, mut y: DisjointSlice<u32>) {
    if let Some(y) = y.get_mut(thread::index_1d()) {
        *y = flag as u32;
    }
}

fn main() {}
