use oxide_rt::device::*;

#[kernel(name = "scale")]
pub fn scale_in_place(a: f32, mut y: DisjointSlice<f32>) {
    if let Some(y) = y.get_mut(thread::index_1d()) {
        *y *= a;
    }
}

#[kernel]
pub fn scale(a: f32, x: &[f32], mut y: DisjointSlice<f32>) {
    let i = thread::index_1d();
    if let Some(y) = y.get_mut(i) {
        *y = a * x[i.get()];
    }
}

fn main() {}
