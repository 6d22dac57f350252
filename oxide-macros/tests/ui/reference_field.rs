use oxide_rt::KernelArg;

#[derive(KernelArg)]
#[repr(C)]
pub struct Params {
    pub a: f32,
    pub b: &'static f32,
}

fn main() {}
