// A KernelArg struct that the device build never saw (not in the kernels module).
use oxide_rt::KernelArg;

#[derive(Clone, Copy, KernelArg)]
#[repr(C)]
pub struct Elsewhere {
    pub a: f32,
}

fn main() {}
