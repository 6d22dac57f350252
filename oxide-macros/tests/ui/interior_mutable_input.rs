// `&[T]` inputs are read-only and `noalias` for the optimiser, so their elements must have no
// interior mutability: a `Cell` is refused (atomics are `&[AtomicU32]`-style inputs instead).
use oxide_rt::device::*;

#[kernel]
pub fn poke(x: &[core::cell::Cell<u32>], mut y: DisjointSlice<u32>) {
    if let Some(y) = y.get_mut(thread::index()) {
        *y = x[0].get();
    }
}

fn main() {}
