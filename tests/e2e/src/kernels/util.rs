#[inline]
pub fn affine(a: f32, b: f32, x: f32) -> f32 {
    a * x + b
}
