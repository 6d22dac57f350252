use oxide_rt::KernelArg;

#[derive(Clone, Copy, KernelArg)]
pub struct Params {
    pub a: f32,
    pub b: u64,
}

fn main() {}
