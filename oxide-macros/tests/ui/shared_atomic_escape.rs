// A shared-memory element used atomically cannot be kept past the block: the reference that
// `SharedAtomic::with` lends lives only inside the closure.
use oxide_rt::device::atomic::AtomicU32;
use oxide_rt::device::*;

#[kernel]
pub fn leak(mut y: DisjointSlice<u32>) {
    let bins = shared_array!(u32, 4);
    let kept: &'static AtomicU32 = bins.atomic(0).with(|a| a);
    if let Some(y) = y.get_mut(thread::index()) {
        *y = kept.load(core::sync::atomic::Ordering::Relaxed);
    }
}

fn main() {}
