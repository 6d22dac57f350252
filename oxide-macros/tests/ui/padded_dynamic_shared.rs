// A struct with padding bytes in dynamic shared memory: another view of the same window (here
// `u8`s) would read its padding, which is uninitialised. Refused when the kernel is compiled.
use oxide_rt::device::*;
use oxide_rt::KernelArg;

#[derive(Clone, Copy, KernelArg)]
#[repr(C)]
pub struct Padded {
    pub tag: u8,
    pub value: f32,
}

#[kernel]
pub fn peek(mut out: DisjointSlice<u8>) {
    let items = shared::dynamic_shared::<Padded>();
    items.set(0, Padded { tag: 1, value: 2.0 });
    sync_threads();
    let bytes = shared::dynamic_shared::<u8>();
    if let Some(o) = out.get_mut(thread::index()) {
        *o = bytes.get(1);
    }
}

fn main() {
    let mut out = [0u8; 32];
    let _ = cpu_peek(1, 32, &mut out);
}
