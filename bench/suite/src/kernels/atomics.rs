//! atomic kernels (device side): a float scatter-add into bins, an integer histogram.
use oxide_rt::device::atomic::AtomicU32;
use oxide_rt::device::*;

/// `out[bin(x[i])] += w[i]` with `bin(x) = (x - lo) * inv_width` truncated to an integer and
/// clamped to the bins.
#[kernel(dims = 1)]
pub fn scatter_add(x: &[f32], w: &[f32], lo: f32, inv_width: f32, out: &[AtomicF32]) {
    let i = thread::index().get();
    if i < x.len() && !out.is_empty() {
        let bin = ((x[i] - lo) * inv_width) as i32;
        let bin = bin.clamp(0, out.len() as i32 - 1) as usize;
        out[bin].atomic_add(w[i], Scope::Device);
    }
}

/// `bins[keys[i] % bins.len()] += 1`.
#[kernel(dims = 1)]
pub fn histogram_keys(keys: &[u32], bins: &[AtomicU32]) {
    let i = thread::index().get();
    if let Some(&k) = keys.get(i) {
        if !bins.is_empty() {
            bins[k as usize % bins.len()].atomic_add(1, Scope::Device);
        }
    }
}

/// Stream compaction: every key below `threshold` is appended to `out` (in claim order).
#[kernel(dims = 1)]
pub fn compact_keys(keys: &[u32], threshold: u32, mut out: DisjointAppend<u32>) {
    let i = thread::index().get();
    if let Some(&key) = keys.get(i) {
        if key < threshold {
            out.push(key);
        }
    }
}
