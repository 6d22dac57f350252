//! Compiled twice: for the host (typed launchers, CPU executor) and for nvptx64 (PTX).
use oxide_rt::device::*;

/// Elements per thread, interleaved within the block (see [`DisjointStrided`]).
pub const PER_THREAD: usize = 4;

/// `y[i] = a * x[i] + y[i]` (elements of `y` past the end of `x` stay as they are). Each
/// thread reads all of its elements of `x` and `y` before it writes any, so eight loads are in
/// flight per thread; `get` rather than indexing keeps panic exits from splitting them apart.
#[kernel(dims = 1)]
#[allow(clippy::needless_range_loop)] // k indexes the values and the thread's elements in step
pub fn saxpy(a: f32, x: &[f32], mut y: DisjointStrided<f32, PER_THREAD>) {
    let mut v: [Option<f32>; PER_THREAD] = [None; PER_THREAD];
    for k in 0..PER_THREAD {
        if let (Some(&xk), Some(&yk)) = (y.index(k).and_then(|i| x.get(i)), y.get(k)) {
            v[k] = Some(a * xk + yk);
        }
    }
    for k in 0..PER_THREAD {
        if let (Some(yk), Some(vk)) = (y.get_mut(k), v[k]) {
            *yk = vk;
        }
    }
}
