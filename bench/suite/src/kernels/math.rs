//! math kernels (device side): Mandelbrot escape times, transcendental-heavy maps in f32 and
//! f64, an integer hash with bit operations.
use oxide_rt::device::*;

/// `out[y][x]` = the iterations of `z = z^2 + c` from `z = 0` until `|z| > 2` (at most
/// `max_iter`), `c = (x0 + x * step, y0 + y * step)`, for a 2D launch over the image.
#[kernel(dims = 2)]
pub fn mandelbrot(x0: f32, y0: f32, step: f32, max_iter: u32, mut out: DisjointSlice2d<u32>) {
    let (x, y) = thread::index_2d();
    let cx = x0 + x as f32 * step;
    let cy = y0 + y as f32 * step;
    let (mut zx, mut zy) = (0.0f32, 0.0f32);
    let mut n = 0;
    while n < max_iter && zx * zx + zy * zy <= 4.0 {
        let t = zx * zx - zy * zy + cx;
        zy = 2.0 * zx * zy + cy;
        zx = t;
        n += 1;
    }
    if let Some(o) = out.get_mut() {
        *o = n;
    }
}

/// `y[i] = f(x[i])` with `f(x) = exp(-x/2) sin(3x) + ln(1 + x^2) x^1.5 - sqrt(exp(-x/2) + ln(1 + x^2))
/// + cos(x) / (1 + x)`, in f32 (inputs positive).
#[kernel(dims = 1)]
pub fn transcend_f32(x: &[f32], mut y: DisjointSlice<f32>) {
    let i = thread::index();
    if let Some(out) = y.get_mut(i) {
        let v = x[i.get()];
        let a = math::exp(-0.5 * v);
        let b = math::log(1.0 + v * v);
        let c = math::sin(3.0 * v);
        let d = math::pow(v, 1.5);
        *out = a * c + b * d - math::sqrt(a + b) + math::cos(v) / (1.0 + v);
    }
}

/// The same map as [`transcend_f32`], in f64.
#[kernel(dims = 1)]
pub fn transcend_f64(x: &[f64], mut y: DisjointSlice<f64>) {
    let i = thread::index();
    if let Some(out) = y.get_mut(i) {
        let v = x[i.get()];
        let a = math::exp(-0.5 * v);
        let b = math::log(1.0 + v * v);
        let c = math::sin(3.0 * v);
        let d = math::pow(v, 1.5);
        *out = a * c + b * d - math::sqrt(a + b) + math::cos(v) / (1.0 + v);
    }
}

/// `out[i]` = a hash of `keys[i] ^ seed` (the murmur3 32-bit finalizer, then eight xorshift
/// rounds with a multiply) mixed with the key's popcount, bit reversal and leading zeros.
#[kernel(dims = 1)]
pub fn bits_mix(keys: &[u32], seed: u32, mut out: DisjointSlice<u32>) {
    let i = thread::index();
    if let Some(o) = out.get_mut(i) {
        let k = keys[i.get()];
        let mut h = k ^ seed;
        h ^= h >> 16;
        h = h.wrapping_mul(0x85eb_ca6b);
        h ^= h >> 13;
        h = h.wrapping_mul(0xc2b2_ae35);
        h ^= h >> 16;
        for _ in 0..8 {
            h ^= h << 13;
            h ^= h >> 17;
            h ^= h << 5;
            h = h.wrapping_mul(0x9e37_79b1);
        }
        let bits = k.count_ones() + (k.reverse_bits() >> 7) + k.leading_zeros() * 0x0101_0101;
        *o = h ^ bits.rotate_left(h & 31);
    }
}
