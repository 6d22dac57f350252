use oxide_rt::device::*;

pub struct Scaler {
    pub a: f32,
}

impl Scaler {
    #[kernel]
    pub fn scale(&self, x: &[f32]) {
        let _ = (self.a, x);
    }
}

fn main() {}
