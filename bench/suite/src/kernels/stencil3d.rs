//! stencil3d kernels (device side): 3-D stencils over a row-major `nx × ny × nz` grid
//! (x fastest), one thread per cell, 3-D launch.
use oxide_rt::device::*;

/// 7-point stencil with boundary copy: interior cells get
/// `c0 * centre + c1 * (west + east + south + north + below + above)`, cells on any face of the
/// grid copy the input.
#[kernel]
pub fn stencil7_3d(input: &[f32], nz: u32, c0: f32, c1: f32, mut out: DisjointSlice3d<f32>) {
    let (x, y, z) = thread::index_3d();
    let (nx, ny, nz) = (out.cols(), out.rows(), nz as usize);
    if z >= nz {
        return;
    }
    let Some(o) = out.get_mut() else {
        return;
    };
    let plane = nx * ny;
    let i = (z * ny + y) * nx + x;
    *o = if x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1 {
        input[i]
    } else {
        c0 * input[i]
            + c1 * (input[i - 1] + input[i + 1] + input[i - nx] + input[i + nx] + input[i - plane] + input[i + plane])
    };
}

/// 27-point box filter: the mean of the 3×3×3 neighbourhood, neighbours past a face repeating
/// the face cell (clamped).
#[kernel]
pub fn box27_3d(input: &[f32], nz: u32, mut out: DisjointSlice3d<f32>) {
    let (x, y, z) = thread::index_3d();
    let (nx, ny, nz) = (out.cols(), out.rows(), nz as usize);
    if z >= nz {
        return;
    }
    let Some(o) = out.get_mut() else {
        return;
    };
    let mut sum = 0.0f32;
    for zz in [z.saturating_sub(1), z, (z + 1).min(nz - 1)] {
        for yy in [y.saturating_sub(1), y, (y + 1).min(ny - 1)] {
            for xx in [x.saturating_sub(1), x, (x + 1).min(nx - 1)] {
                sum += input[(zz * ny + yy) * nx + xx];
            }
        }
    }
    *o = sum * (1.0 / 27.0);
}
