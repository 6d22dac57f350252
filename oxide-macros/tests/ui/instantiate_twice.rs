use oxide_rt::device::*;

#[kernel(instantiate(f32, u32, f32))]
pub fn scale<T: Copy + core::ops::Mul<Output = T> + KernelArg>(a: T, x: &[T], mut y: DisjointSlice<T>) {
    let i = thread::index();
    if let (Some(y), Some(x)) = (y.get_mut(i), x.get(i.get())) {
        *y = a * *x;
    }
}

fn main() {}
