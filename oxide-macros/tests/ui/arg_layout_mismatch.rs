// The fixture manifest records the output's element of `arg_size_split` as 8 bytes, as a
// `cfg(target_arch)` alias that is `f64` on the GPU would: the host's `f32` is an error there.
use oxide_rt::device::*;

pub type Wide = f32;

#[kernel]
pub fn arg_size_split(mut y: DisjointSlice<Wide>, a: f32) {
    if let Some(v) = y.get_mut(thread::index()) {
        *v = a;
    }
}

fn main() {}
