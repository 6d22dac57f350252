use oxide_rt::device::*;

#[kernel(instantiate(f32, [f32; 2]))]
pub fn k<T: Copy>(a: T, mut y: DisjointSlice<T>) {
    if let Some(y) = y.get_mut(thread::index_1d()) {
        *y = a;
    }
}

fn main() {}
