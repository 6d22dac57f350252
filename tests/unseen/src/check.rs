//! What the corpus' tests share: a small deterministic generator and a float comparison.

/// A 64-bit LCG: deterministic inputs without a dependency.
pub struct Rng(pub u64);

impl Rng {
    #[allow(clippy::should_implement_trait)] // a generator, not an `Iterator`
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 11
    }

    /// In [-1, 1], in steps of 0.001.
    pub fn f32(&mut self) -> f32 {
        (self.next() % 2001) as f32 / 1000.0 - 1.0
    }

    /// In [-10, 10], in steps of 0.0001.
    pub fn f64(&mut self) -> f64 {
        (self.next() % 200001) as f64 / 10000.0 - 10.0
    }
}

/// `a` within `tol` of `b`, relative to `b`'s magnitude (absolute near zero).
pub fn close32(a: f32, b: f32, tol: f32) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}
