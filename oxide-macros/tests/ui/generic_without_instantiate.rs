use oxide_rt::device::*;

#[kernel]
pub fn copy<T: Copy>(x: &[T], mut y: DisjointSlice<T>) {
    let i = thread::index_1d();
    if let Some(y) = y.get_mut(i) {
        *y = x[i.get()];
    }
}

fn main() {}
