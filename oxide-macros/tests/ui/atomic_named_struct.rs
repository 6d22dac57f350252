// A type of the user's own called `AtomicU32` is not one of oxide's atomic elements: the host
// would pass 4-byte elements for it whatever its size.
use oxide_rt::device::*;

#[repr(C)]
pub struct AtomicU32 {
    a: u64,
}

#[kernel]
pub fn own_atomic(x: &[AtomicU32], mut out: DisjointSlice<u64>) {
    let i = thread::index();
    if let (Some(o), Some(a)) = (out.get_mut(i), x.get(i.get())) {
        *o = a.a;
    }
}

fn main() {}
