use oxide_rt::device::*;

#[kernel]
pub fn k(x: &'static [f32], mut y: DisjointSlice<f32>) {
    let i = thread::index_1d();
    if let Some(y) = y.get_mut(i) {
        *y = x[i.get()];
    }
}

fn main() {}
