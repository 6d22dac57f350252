use oxide_rt::device::*;

#[kernel]
pub fn k(v: Vec<f32>, mut y: DisjointSlice<f32>) {
    if let Some(y) = y.get_mut(thread::index_1d()) {
        *y = v[0];
    }
}

fn main() {}
