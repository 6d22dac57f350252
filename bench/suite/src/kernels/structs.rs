//! struct kernels (device side): a structure-of-arrays particle step, batched 4x4 matrix
//! products on a `#[repr(C, align(16))]` matrix type.
use oxide_rt::device::*;
use oxide_rt::KernelArg;

/// The constants of a particle step.
#[derive(Clone, Copy, KernelArg)]
#[repr(C)]
pub struct StepParams {
    /// Time step.
    pub dt: f32,
    /// Gravity (acceleration along -y).
    pub gravity: f32,
    /// Height of the floor.
    pub floor: f32,
    /// Fraction of the vertical speed kept by a bounce.
    pub restitution: f32,
    /// Factor applied to the horizontal velocity each step (air drag).
    pub drag: f32,
}

/// One explicit Euler step of particles stored as separate arrays (updated in place): drag on
/// the horizontal velocity, gravity on `vy`, then the move; a particle that falls below the
/// floor is put on it and bounces with `restitution`.
#[kernel(dims = 1)]
pub fn particles_step(
    p: StepParams,
    mut px: DisjointSlice<f32>,
    mut py: DisjointSlice<f32>,
    mut pz: DisjointSlice<f32>,
    mut vx: DisjointSlice<f32>,
    mut vy: DisjointSlice<f32>,
    mut vz: DisjointSlice<f32>,
) {
    let i = thread::index();
    if let (Some(x), Some(y), Some(z), Some(u), Some(v), Some(w)) =
        (px.get_mut(i), py.get_mut(i), pz.get_mut(i), vx.get_mut(i), vy.get_mut(i), vz.get_mut(i))
    {
        *u *= p.drag;
        *w *= p.drag;
        *v -= p.gravity * p.dt;
        *x += *u * p.dt;
        *y += *v * p.dt;
        *z += *w * p.dt;
        if *y < p.floor {
            *y = p.floor;
            *v = -*v * p.restitution;
        }
    }
}

/// A row-major 4x4 matrix (`m[row][col]`), 16-byte aligned like CUDA's `float4` rows.
#[derive(Clone, Copy, Debug, PartialEq, KernelArg)]
#[repr(C, align(16))]
pub struct Mat4 {
    pub m: [[f32; 4]; 4],
}

impl core::ops::Mul for Mat4 {
    type Output = Mat4;

    #[inline]
    fn mul(self, rhs: Mat4) -> Mat4 {
        let mut out = [[0.0f32; 4]; 4];
        for (r, row) in out.iter_mut().enumerate() {
            for (c, o) in row.iter_mut().enumerate() {
                let mut s = 0.0;
                for k in 0..4 {
                    s += self.m[r][k] * rhs.m[k][c];
                }
                *o = s;
            }
        }
        Mat4 { m: out }
    }
}

/// `out[i] = a[i] * b[i]` for a batch of 4x4 matrices.
#[kernel(dims = 1)]
pub fn mat4_batch(a: &[Mat4], b: &[Mat4], mut out: DisjointSlice<Mat4>) {
    let i = thread::index();
    if let Some(o) = out.get_mut(i) {
        *o = a[i.get()] * b[i.get()];
    }
}
