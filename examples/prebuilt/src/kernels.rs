//! Prebuilt by `cargo oxide build` into `kernels-prebuilt/` (committed), so this crate builds
//! without the device toolchain. Edit this file and the build tells you to refresh them.
use oxide_rt::device::*;

/// `out[i] = a * x[i] + b` (an affine map, e.g. a unit conversion).
#[kernel]
pub fn affine(a: f32, b: f32, x: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread::index_1d();
    if let Some(o) = out.get_mut(i) {
        *o = a * x[i.get()] + b;
    }
}
