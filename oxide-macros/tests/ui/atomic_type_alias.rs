// `&[AtomicU32]` is a `CudaSlice<u32>` on the host, chosen by the name in the signature: an
// alias of an atomic of another size must not compile (the kernel would read 8-byte elements
// from a buffer of 4-byte ones).
use core::sync::atomic::AtomicU64 as AtomicU32;
use core::sync::atomic::Ordering;
use oxide_rt::device::*;

#[kernel]
pub fn wide(x: &[AtomicU32], mut out: DisjointSlice<u64>) {
    let i = thread::index();
    if let (Some(o), Some(a)) = (out.get_mut(i), x.get(i.get())) {
        *o = a.fetch_add(1, Ordering::Relaxed);
    }
}

fn main() {}
