//! Kernels using `oxide_rt::device::wgmma` (`kernels`) and the host side of their tests: random
//! problems, the scalar reference and the accumulators gathered back into a matrix.
pub mod kernels;

use oxide_rt::device::wgmma::{WgAcc, M64N64K16};

/// GPU 0 for a GPU test, or `None` (printing why) when there is none. With
/// `OXIDE_REQUIRE_GPU=1` a missing GPU fails the test instead of skipping it.
pub fn gpu_or_skip() -> Option<oxide_rt::host::Gpu> {
    match oxide_rt::host::Gpu::new(0) {
        Ok(g) => Some(g),
        Err(e) if std::env::var("OXIDE_REQUIRE_GPU").as_deref() == Ok("1") => {
            panic!("OXIDE_REQUIRE_GPU=1 but no GPU: {e}")
        }
        Err(e) => {
            eprintln!("skipped: no GPU ({e})");
            None
        }
    }
}

/// Uniform values in [-1, 1) from a splitmix64 stream.
pub fn floats(seed: u64, len: usize) -> Vec<f32> {
    let mut s = seed;
    (0..len)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            (z >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

/// `C = A[64..128] * B^T` (A 128 x k, B n x k, row-major, exact inputs) in f64, and the
/// accumulation's error bound per element: `(k + 2) u sum|a b|` in f32 (`u = 2^-24`); on FP8
/// (`fp8`), whose tensor-core sums keep about 14 significant bits, `(k / 32 + 8) 2^-12 sum|a b|`
/// (a wrong element, k-slice or swizzle is off by about the value itself, far outside either).
pub fn reference(a: &[f32], b: &[f32], n: usize, k: usize, fp8: bool) -> (Vec<f64>, Vec<f64>) {
    let (mut c, mut tol) = (vec![0f64; 64 * n], vec![0f64; 64 * n]);
    let unit = if fp8 { (k as f64 / 32.0 + 8.0) * 2f64.powi(-12) } else { (k as f64 + 2.0) * 2f64.powi(-24) };
    for r in 0..64 {
        for j in 0..n {
            let (mut dot, mut abs) = (0f64, 0f64);
            for l in 0..k {
                let p = a[(64 + r) * k + l] as f64 * b[j * k + l] as f64;
                dot += p;
                abs += p.abs();
            }
            c[r * n + j] = dot;
            tol[r * n + j] = unit * abs + 1e-30;
        }
    }
    (c, tol)
}

/// The 64 x n matrix from the threads' chunks (`n / 2` elements each, thread-major).
pub fn gather(out: &[f32], n: usize) -> Vec<f32> {
    let mut c = vec![f32::NAN; 64 * n];
    for t in 0..128u32 {
        for i in 0..n / 2 {
            let (r, col) = WgAcc::<M64N64K16>::coord(t, i);
            c[r * n + col] = out[t as usize * (n / 2) + i];
        }
    }
    c
}

/// Err naming the first element outside the bound (NaN is outside every bound).
pub fn within(got: &[f32], want: &[f64], tol: &[f64], n: usize) -> Result<(), String> {
    let ok = |g: f32, w: f64, t: f64| (g as f64 - w).abs() <= t;
    let bad = got.iter().zip(want).zip(tol).filter(|((g, w), t)| !ok(**g, **w, **t)).count();
    match got.iter().zip(want).zip(tol).position(|((g, w), t)| !ok(*g, *w, *t)) {
        None => Ok(()),
        Some(i) => Err(format!(
            "C[{}][{}] = {}, want {} (tolerance {:e}); {bad} of {} wrong",
            i / n,
            i % n,
            got[i],
            want[i],
            tol[i],
            got.len()
        )),
    }
}

/// What `kernels::persistent_tiles` must leave in a `rows x cols` matrix on `blocks` blocks:
/// tile `l` (grouped order) belongs to block `l % blocks`, so its elements hold
/// `1 + l % blocks`.
pub fn persistent_owners(rows: usize, cols: usize, blocks: usize) -> Vec<u32> {
    use oxide_rt::device::wgmma::grouped;
    let (gy, gx) = (rows.div_ceil(128), cols.div_ceil(64));
    let mut want = vec![0u32; rows * cols];
    for l in 0..gy * gx {
        let (tm, tn) = grouped(l % gx, l / gx, gx, gy, kernels::PERSISTENT_GROUP);
        for r in tm * 128..(tm * 128 + 128).min(rows) {
            for c in tn * 64..(tn * 64 + 64).min(cols) {
                want[r * cols + c] = 1 + (l % blocks) as u32;
            }
        }
    }
    want
}

/// The shapes and launch grids `persistent_tiles` runs with: ragged edges, odd columns (no
/// pairs), more tiles than blocks and fewer, a 2-D grid.
pub const PERSISTENT_CASES: [(usize, usize, (u32, u32)); 5] =
    [(300, 200, (5, 1)), (257, 201, (2, 2)), (128, 64, (3, 1)), (900, 130, (1, 1)), (64, 640, (4, 1))];

/// What `kernels::persistent_store` must leave in a `rows x cols` matrix on `blocks` blocks:
/// element `i` of thread `t` of consumer `c` at its tile's `coord(t, i)` of rows `64c..`, the
/// value of the block's round that took the tile; zero past the matrix.
pub fn persistent_store_expected(rows: usize, cols: usize, blocks: usize) -> Vec<f32> {
    use oxide_rt::device::wgmma::grouped;
    let (gy, gx) = (rows.div_ceil(128), cols.div_ceil(64));
    let mut want = vec![0f32; rows * cols];
    for l in 0..gy * gx {
        let (tm, tn) = grouped(l % gx, l / gx, gx, gy, kernels::PERSISTENT_GROUP);
        for c in 0..2 {
            for t in 0..128 {
                for i in 0..32 {
                    let (r, col) = WgAcc::<M64N64K16>::coord(t as u32, i);
                    let (r, col) = (tm * 128 + 64 * c + r, tn * 64 + col);
                    if r < rows && col < cols {
                        want[r * cols + col] = kernels::store_value(t, i, l / blocks);
                    }
                }
            }
        }
    }
    want
}
