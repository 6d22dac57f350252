use oxide_rt::device::*;

#[kernel]
pub fn k(grid: u32, mut y: DisjointSlice<u32>) {
    if let Some(y) = y.get_mut(thread::index_1d()) {
        *y = grid;
    }
}

fn main() {}
