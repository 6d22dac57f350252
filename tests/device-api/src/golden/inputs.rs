//! Inputs of the golden set: edge cases and fixed-seed random values per operation.

use super::{ATOMIC_THREADS, FAST_DOMAINS, RANDOM, WARP_WARPS};

const PI: f64 = std::f64::consts::PI;

/// splitmix64, fixed-seed: the examples' generator (`unit`, `range` for floats).
pub use example_common::Rng;

/// A float type of the golden set.
pub trait GoldenFloat: Copy + PartialOrd + std::fmt::Debug {
    const NAME: &'static str;
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
    fn from_bits64(b: u64) -> Self;
    fn bits64(self) -> u64;
    /// The bits of this type's NaNs with the payloads the edge cases use.
    fn nans() -> Vec<Self>;
    /// The next value towards +inf / -inf.
    fn step(self, up: bool) -> Self;
    /// The smallest positive subnormal, the largest subnormal, the smallest normal, the largest.
    fn limits() -> [Self; 4];
}

impl GoldenFloat for f32 {
    const NAME: &'static str = "f32";
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_bits64(b: u64) -> f32 {
        f32::from_bits(b as u32)
    }
    fn bits64(self) -> u64 {
        self.to_bits() as u64
    }
    fn nans() -> Vec<f32> {
        [0x7fc0_0000u32, 0xffc0_0000, 0x7fc0_1234, 0x7f80_0001, 0x7fff_ffff, 0xffff_ffff].map(f32::from_bits).to_vec()
    }
    fn step(self, up: bool) -> f32 {
        if up {
            self.next_up()
        } else {
            self.next_down()
        }
    }
    fn limits() -> [f32; 4] {
        [f32::from_bits(1), f32::from_bits(0x007f_ffff), f32::MIN_POSITIVE, f32::MAX]
    }
}

impl GoldenFloat for f64 {
    const NAME: &'static str = "f64";
    fn from_f64(x: f64) -> f64 {
        x
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn from_bits64(b: u64) -> f64 {
        f64::from_bits(b)
    }
    fn bits64(self) -> u64 {
        self.to_bits()
    }
    fn nans() -> Vec<f64> {
        [
            0x7ff8_0000_0000_0000u64,
            0xfff8_0000_0000_0000,
            0x7ff8_0000_0000_1234,
            0x7ff0_0000_0000_0001,
            u64::MAX >> 1,
            u64::MAX,
        ]
        .map(f64::from_bits)
        .to_vec()
    }
    fn step(self, up: bool) -> f64 {
        if up {
            self.next_up()
        } else {
            self.next_down()
        }
    }
    fn limits() -> [f64; 4] {
        [f64::from_bits(1), f64::from_bits(0x000f_ffff_ffff_ffff), f64::MIN_POSITIVE, f64::MAX]
    }
}

/// The edge cases of a float type: zeros, subnormals, the extreme normals, infinities, NaNs
/// with several payloads, values next to multiples of pi/2, next to 0 and 1, at the overflow
/// and underflow edges of exp, large magnitudes, integers and half-integers (ties).
pub fn float_edges<F: GoldenFloat>() -> Vec<F> {
    let mut v: Vec<F> =
        vec![F::from_f64(0.0), F::from_f64(-0.0), F::from_f64(f64::INFINITY), F::from_f64(f64::NEG_INFINITY)];
    for l in F::limits() {
        v.extend([l, F::from_f64(-l.to_f64())]);
    }
    v.extend(F::nans());
    let around = |v: &mut Vec<F>, x: f64| {
        let f = F::from_f64(x);
        v.extend([f.step(false), f, f.step(true)]);
    };
    for k in [1.0, 2.0, 3.0, 4.0, -1.0, 100.0, 1e5] {
        around(&mut v, k * PI / 2.0);
    }
    for x in [1.0, -1.0, 1e-7, -1e-7, 1e-30] {
        around(&mut v, x);
    }
    let more = [
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        3.5,
        0.49999997,
        2.0,
        3.0,
        7.0,
        -7.0,
        10.0,
        100.0,
        -100.0,
        1e6,
        8388608.5,
        4503599627370495.5,
        16777217.0,
        9007199254740993.0,
        88.72,
        88.73,
        -87.33,
        -103.97,
        -104.0,
        709.78,
        709.79,
        -745.1,
        127.99,
        128.0,
        -149.0,
        -150.0,
        1023.9,
        1024.0,
        -1074.0,
        -0.999999,
        1e-5,
        1e10,
        -1e10,
        1e30,
        -1e30,
        1e300,
        0.1,
        1.0 / 3.0,
        6.0,
        9.0,
        0.25,
        1e-300,
    ];
    v.extend(more.iter().map(|&x| F::from_f64(x)));
    v
}

/// Random floats: a quarter raw bit patterns (every exponent, NaNs, subnormals), a quarter
/// uniform in [-10, 10], half log-uniform magnitudes in [1e-6, 1e6] with random signs.
pub fn random_float<F: GoldenFloat>(rng: &mut Rng) -> F {
    match rng.next_u64() % 4 {
        0 => F::from_bits64(rng.next_u64()),
        1 => F::from_f64(rng.range(-10.0, 10.0)),
        _ => {
            let m = 10f64.powf(rng.range(-6.0, 6.0));
            F::from_f64(if rng.next_u64() & 1 == 0 { m } else { -m })
        }
    }
}

/// Inputs `(a, b, c, n)` of one math operation: every edge case against a few edge cases (so
/// binary operations see edge pairs; `c` and `n` cycle through edges), then [`RANDOM`] random
/// quadruples. The same for every operation (they differ only in which inputs they read).
pub fn math_inputs<F: GoldenFloat>(seed: u64) -> (Vec<F>, Vec<F>, Vec<F>, Vec<i32>) {
    let edges = float_edges::<F>();
    let partners: Vec<F> = edges.iter().copied().step_by(3).collect();
    let ints = [0, 1, -1, 2, -2, 3, 7, -7, 31, 64, -150, 1100, i32::MAX, i32::MIN];
    let (mut a, mut b, mut c, mut n) = (vec![], vec![], vec![], vec![]);
    for (i, &x) in edges.iter().enumerate() {
        for (j, &y) in partners.iter().enumerate() {
            a.push(x);
            b.push(y);
            c.push(edges[(i + 7 * j) % edges.len()]);
            n.push(ints[(i + j) % ints.len()]);
        }
    }
    let mut rng = Rng::new(seed);
    for _ in 0..RANDOM {
        a.push(random_float(&mut rng));
        b.push(random_float(&mut rng));
        c.push(random_float(&mut rng));
        n.push((rng.next_u64() % 129) as i32 - 64);
    }
    (a, b, c, n)
}

/// Inputs of fast operation `k` inside its documented domain (`FAST_DOMAINS`): the edge cases
/// that fall in it, then [`RANDOM`] values spread over it (log-uniform where it spans decades).
pub fn fast_inputs(k: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let ((alo, ahi), (blo, bhi)) = FAST_DOMAINS[k];
    let inside = |x: f32, lo: f64, hi: f64| {
        let x = x as f64;
        lo <= x && x <= hi && (x == 0.0 || x.abs() >= f32::MIN_POSITIVE as f64)
    };
    // Log-uniform where the range spans decades (with a random sign for div's divisor), else
    // uniform; drawn again when the rounding to f32 leaves the range (pi as f32 is above pi).
    let pick = |rng: &mut Rng, lo: f64, hi: f64| -> f32 {
        loop {
            let log_uniform = |rng: &mut Rng| (lo.ln() + rng.unit() * (hi / lo).ln()).exp();
            let v: f64 = if k == 10 && lo > 0.0 {
                let m = log_uniform(rng);
                if rng.next_u64() & 1 == 0 {
                    m
                } else {
                    -m
                }
            } else if lo > 0.0 && hi / lo > 1e3 {
                log_uniform(rng)
            } else {
                rng.range(lo, hi)
            };
            let v = v as f32;
            let ok = if k == 10 && lo > 0.0 { inside(v.abs(), lo, hi) } else { inside(v, lo, hi) };
            if ok {
                return v;
            }
        }
    };
    let mut rng = Rng::new(seed);
    let (mut a, mut b) = (vec![], vec![]);
    for x in float_edges::<f32>().into_iter().filter(|&x| inside(x, alo, ahi)) {
        a.push(x);
        b.push(pick(&mut rng, blo, bhi));
    }
    for _ in 0..RANDOM {
        a.push(pick(&mut rng, alo, ahi));
        b.push(pick(&mut rng, blo, bhi));
    }
    (a, b)
}

/// Inputs of the conversions `(x: f32, y: f64, n: integer bits)`: the float edge cases, both
/// sides of every integer bound, ties between neighbouring f32s, then random bit patterns and
/// random values around the bounds.
pub fn conv_inputs(seed: u64) -> (Vec<f32>, Vec<f64>, Vec<u64>) {
    let mut y: Vec<f64> = float_edges::<f64>();
    for bound in
        [128.0, 256.0, 32768.0, 65536.0, 2147483648.0, 4294967296.0, 9223372036854775808.0, 18446744073709551616.0]
    {
        for b in [bound, -bound] {
            for d in [-1.0, -0.5, 0.0, 0.5, 1.0] {
                y.push(b + d);
            }
            y.extend([b.next_down(), b.next_up(), (b as f32).next_down() as f64, (b as f32).next_up() as f64]);
        }
    }
    // f64 values halfway between two f32s (ties to even), and just off them.
    for m in [1.0f32, 1.5, 3.0e-39, 1.0e30, 16777216.0] {
        let half = (m as f64 + m.next_up() as f64) / 2.0;
        y.extend([half, half.next_up(), half.next_down()]);
    }
    let mut rng = Rng::new(seed);
    let edges = y.len();
    for i in 0..RANDOM {
        y.push(if i % 2 == 0 { f64::from_bits(rng.next_u64()) } else { y[i % edges] * rng.range(0.99, 1.01) });
    }
    let x: Vec<f32> = y
        .iter()
        .enumerate()
        .map(|(i, &v)| if i % 3 == 2 { f32::from_bits(rng.next_u64() as u32) } else { v as f32 })
        .collect();
    let mut n: Vec<u64> = vec![
        0,
        1,
        u64::MAX,
        i64::MAX as u64,
        i64::MIN as u64,
        i32::MAX as u64,
        i32::MIN as i64 as u64,
        u32::MAX as u64,
        (1 << 24) + 1,
        (1 << 24) + 3,
        (1 << 53) + 1,
        (1 << 53) + 3,
        (1 << 25) + 2,
        ((1 << 24) + 1) << 40,
        (1 << 63) + (1 << 39),
        (1 << 63) + (1 << 40) + (1 << 39),
        u64::MAX - (1 << 39),
    ];
    while n.len() < x.len() {
        let r = rng.next_u64();
        n.push(match n.len() % 3 {
            0 => r,
            1 => r >> (r % 64),
            _ => (r as i64 >> (r % 64)) as u64,
        });
    }
    (x, y, n)
}

/// Inputs of a warp operation: raw random bits, except finite floats for `reduce_add_f32`
/// (whose NaNs would come out of `+` with host-dependent payloads) and a few NaN payloads and
/// infinities among the shuffled floats.
pub fn warp_inputs(op: usize, seed: u64) -> Vec<u64> {
    let mut rng = Rng::new(seed);
    (0..WARP_WARPS * 32)
        .map(|i| {
            let r = rng.next_u64();
            match op {
                21 => (rng.range(-1e3, 1e3) as f32 * if i % 7 == 0 { 1e-3 } else { 1.0 }).to_bits() as u64,
                8..=11 if i % 5 == 0 => f32::nans()[i % 6].to_bits() as u64,
                12..=15 if i % 5 == 0 => f64::nans()[i % 6].to_bits(),
                _ => r,
            }
        })
        .collect()
}

/// Inputs of the bit operations: edge patterns (0, 1, all ones, single bits, sign bits) and
/// random bits with random shift amounts in the high half.
pub fn bit_inputs(seed: u64) -> Vec<u64> {
    let mut v: Vec<u64> = vec![0, 1, u64::MAX, 0x8000_0000, 0x8000_0000_0000_0000, 0xffff_ffff, 0xffff_ffff_0000_0000];
    v.extend((0..64).map(|k| 1u64 << k | (k as u64) << 32));
    v.extend((0..64).map(|k| (u64::MAX >> k) ^ (k as u64 * 7) << 32));
    let mut rng = Rng::new(seed);
    v.extend((0..RANDOM).map(|_| rng.next_u64()));
    v
}

/// Inputs of one atomics round `(x, f, d)`: random integers and finite floats of mixed signs
/// and magnitudes.
pub fn atomic_inputs(round: usize) -> (Vec<u64>, Vec<f32>, Vec<f64>) {
    let mut rng = Rng::new(0xa70_0000 + round as u64);
    let x = (0..ATOMIC_THREADS).map(|_| rng.next_u64()).collect();
    let f = (0..ATOMIC_THREADS)
        .map(|_| rng.range(-100.0, 100.0) as f32 * 10f32.powi((rng.next_u64() % 5) as i32 - 2))
        .collect();
    let d =
        (0..ATOMIC_THREADS).map(|_| rng.range(-100.0, 100.0) * 10f64.powi((rng.next_u64() % 9) as i32 - 4)).collect();
    (x, f, d)
}

/// The absolute tolerance of a float sum of `x` in any order: `2 (n - 1) eps sum |x|`.
pub fn sum_tolerance(x: impl Iterator<Item = f64> + Clone, eps: f64) -> f64 {
    let n = x.clone().count() as f64;
    2.0 * (n - 1.0).max(0.0) * eps * x.map(f64::abs).sum::<f64>()
}
