// An output type behind an alias: `#[kernel]` recognises outputs by name, and `Out<'_>` is a
// borrow, never a value, so the error says to write the type itself.
use oxide_rt::device::*;

pub type Out<'a> = DisjointSlice<'a, f32>;

#[kernel]
pub fn fill(a: f32, mut y: Out<'_>) {
    if let Some(v) = y.get_mut(thread::index()) {
        *v = a;
    }
}

fn main() {}
