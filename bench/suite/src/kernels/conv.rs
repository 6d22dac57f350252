//! conv kernels (device side): 1-D and 2-D convolutions with their weights passed by value,
//! and a separable Gaussian blur through shared-memory tiles.
use oxide_rt::device::*;

/// Taps of [`conv1d_15`].
pub const TAPS: usize = 15;
/// Radius of the separable Gaussian (9 taps).
pub const GAUSS_R: usize = 4;
/// Taps of the separable Gaussian.
pub const GAUSS_TAPS: usize = 2 * GAUSS_R + 1;
/// Block shape of the Gaussian passes: 32 columns x 8 rows.
pub const GBX: u32 = 32;
pub const GBY: u32 = 8;
const BX: usize = GBX as usize;
const BY: usize = GBY as usize;

/// `y[i] = sum_k taps[k] * x[i + k - 7]`, zero outside `x` ("same" size). 1-D launch.
#[kernel]
pub fn conv1d_15(x: &[f32], taps: [f32; TAPS], mut y: DisjointSlice<f32>) {
    let i = thread::index();
    if let Some(out) = y.get_mut(i) {
        let i = i.get();
        let mut acc = 0.0f32;
        for (k, &t) in taps.iter().enumerate() {
            if let Some(&v) = (i + k).checked_sub(TAPS / 2).and_then(|j| x.get(j)) {
                acc += t * v;
            }
        }
        *out = acc;
    }
}

/// 3×3 convolution, zero padding: `out[y][x] = sum w[dy*3+dx] * in[y+dy-1][x+dx-1]`. 2-D
/// launch over the output.
#[kernel]
pub fn conv2d_3x3(input: &[f32], w: [f32; 9], mut out: DisjointSlice2d<f32>) {
    let (x, y) = thread::index_2d();
    let (cols, rows) = (out.cols(), out.rows());
    if let Some(o) = out.get_mut() {
        let mut acc = 0.0f32;
        for dy in 0..3 {
            for dx in 0..3 {
                let (xx, yy) = (x + dx, y + dy);
                if xx >= 1 && yy >= 1 && xx - 1 < cols && yy - 1 < rows {
                    acc += w[dy * 3 + dx] * input[(yy - 1) * cols + (xx - 1)];
                }
            }
        }
        *o = acc;
    }
}

/// Row pass of the separable Gaussian: `out[y][x] = sum_k taps[k] * in[y][clamp(x + k - R)]`.
/// Each block loads its 8 rows of 32 + 2R columns (clamped) into shared memory, then
/// convolves from there.
#[kernel(block(GBX, GBY))]
pub fn gauss_rows(input: &[f32], taps: [f32; GAUSS_TAPS], mut out: DisjointSlice2d<f32>) {
    let tile = shared_array!(f32, BY, BX + 2 * GAUSS_R);
    let t = thread::thread_idx();
    let (tx, ty) = (t.x as usize, t.y as usize);
    let (x, y) = thread::index_2d();
    let (w, h) = (out.cols(), out.rows());
    // Every thread loads (clamped into the image) so all of them reach the barrier.
    let row = y.min(h.saturating_sub(1)) * w;
    let at = |xx: usize| input[row + xx.min(w.saturating_sub(1))];
    tile.set(ty, tx + GAUSS_R, at(x));
    if tx < GAUSS_R {
        tile.set(ty, tx, at(x.saturating_sub(GAUSS_R)));
        tile.set(ty, tx + BX + GAUSS_R, at(x + BX));
    }
    sync_threads();
    if let Some(o) = out.get_mut() {
        let mut acc = 0.0f32;
        for (k, &c) in taps.iter().enumerate() {
            acc += c * tile.get(ty, tx + k);
        }
        *o = acc;
    }
}

/// Column pass of the separable Gaussian: `out[y][x] = sum_k taps[k] * in[clamp(y + k - R)][x]`,
/// through a (8 + 2R) x 32 shared tile.
#[kernel(block(GBX, GBY))]
pub fn gauss_cols(input: &[f32], taps: [f32; GAUSS_TAPS], mut out: DisjointSlice2d<f32>) {
    let tile = shared_array!(f32, BY + 2 * GAUSS_R, BX);
    let t = thread::thread_idx();
    let (tx, ty) = (t.x as usize, t.y as usize);
    let (x, y) = thread::index_2d();
    let (w, h) = (out.cols(), out.rows());
    let col = x.min(w.saturating_sub(1));
    let at = |yy: usize| input[yy.min(h.saturating_sub(1)) * w + col];
    tile.set(ty + GAUSS_R, tx, at(y));
    if ty < GAUSS_R {
        tile.set(ty, tx, at(y.saturating_sub(GAUSS_R)));
        tile.set(ty + BY + GAUSS_R, tx, at(y + BY));
    }
    sync_threads();
    if let Some(o) = out.get_mut() {
        let mut acc = 0.0f32;
        for (k, &c) in taps.iter().enumerate() {
            acc += c * tile.get(ty + k, tx);
        }
        *o = acc;
    }
}
