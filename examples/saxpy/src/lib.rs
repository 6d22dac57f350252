//! The saxpy example as a library, so benchmarks and differential tests can reuse its kernels.
pub mod kernels;

/// The CPU reference: `a * x[i] + y[i]`.
pub fn reference(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    x.iter().zip(y).map(|(x, y)| a * x + y).collect()
}
