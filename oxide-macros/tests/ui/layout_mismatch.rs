// The fixture manifest records field `b` of `Skewed` at offset 4, as if the device laid it out
// differently: the host's offset 8 must then be a compile error naming the struct and field.
use oxide_rt::KernelArg;

#[derive(Clone, Copy, KernelArg)]
#[repr(C)]
pub struct Skewed {
    pub a: u32,
    pub b: u64,
}

fn main() {}
