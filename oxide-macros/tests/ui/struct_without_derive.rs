use oxide_rt::device::*;

#[derive(Clone, Copy)]
#[repr(C)]
pub struct Params {
    pub a: f32,
    pub b: u64,
}

#[kernel]
pub fn k(p: Params, mut y: DisjointSlice<f32>) {
    if let Some(y) = y.get_mut(thread::index_1d()) {
        *y = p.a;
    }
}

fn main() {}
