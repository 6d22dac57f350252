use core::sync::atomic::{AtomicU32, Ordering};
use oxide_rt::device::*;
use oxide_rt::KernelArg;

#[derive(Clone, Copy, KernelArg)]
#[repr(C)]
pub struct Affine {
    pub scale: f32,
    pub bias: f64,
    pub shift: u8,
    pub tail: [u16; 3],
}

#[derive(Clone, Copy, KernelArg)]
#[repr(C)]
pub struct Pair(pub f32, pub u32);

/// y[i] = p.scale * x[i].0 + p.bias + x[i].1 + p.shift + p.tail[2]
#[kernel(launch_bounds(128), name = "affine_v1")]
pub fn affine(p: Affine, x: &[Pair], mut y: DisjointSlice<f64>) {
    let i = thread::index_1d();
    if let Some(yi) = y.get_mut(i) {
        let xi = x[i.get()];
        *yi = (p.scale * xi.0) as f64 + p.bias + xi.1 as f64 + p.shift as f64 + p.tail[2] as f64;
    }
}

#[kernel(instantiate(f32, f64, u32))]
pub fn scale<T: Copy + core::ops::Mul<Output = T> + KernelArg>(a: T, x: &[T], mut y: DisjointSlice<T>) {
    let i = thread::index_1d();
    if let Some(yi) = y.get_mut(i) {
        *yi = a * x[i.get()];
    }
}

#[kernel]
pub fn count_odd(x: &[u32], bins: &[AtomicU32]) {
    let i = thread::index_1d().get();
    if i < x.len() && x[i] % 2 == 1 {
        bins[0].fetch_add(1, Ordering::Relaxed);
    }
}

/// A second `Pair`, of another definition, in another module: each derive gets its own layout
/// record (named with a hash of the definition), so the two do not clash in the device build.
pub mod wide {
    use oxide_rt::device::*;
    use oxide_rt::KernelArg;

    #[derive(Clone, Copy, KernelArg)]
    #[repr(C)]
    pub struct Pair(pub f64, pub u64);

    /// y[i] = p.0 * i + p.1
    #[kernel]
    pub fn ramp(p: Pair, mut y: DisjointSlice<f64>) {
        let i = thread::index();
        if let Some(yi) = y.get_mut(i) {
            *yi = p.0 * i.get() as f64 + p.1 as f64;
        }
    }
}
