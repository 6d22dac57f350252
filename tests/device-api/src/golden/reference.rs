//! An independent reference for the golden kernels: plain Rust (`std`'s `f32`/`f64` functions,
//! `as` casts, core's integer methods, sequential sums) and a model of the warp operations
//! written from the PTX ISA's definition of `shfl.sync`, `vote.sync` and the butterfly sums.
//! It holds the CPU executor to the golden set's bounds in CI, where there is no GPU.

use super::{Atomics, Exec, GOLDEN_MATH_OPS};
use crate::kernels::{golden_pred, golden_vote_mask, GOLDEN_SHFL_PARAMS};

/// The reference: std, `as` casts, core integer methods, and the PTX ISA's warp semantics.
pub struct Reference;

/// A NaN as the GPU's arithmetic writes it (`0x7fffffff`).
fn canon32(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(0x7fff_ffff)
    } else {
        x
    }
}

fn canon64(x: f64) -> f64 {
    x
}

/// `math::Float`'s operation `op` in f32 (see `kernels::golden_math`), from `std`.
fn math32(op: u32, a: f32, b: f32, c: f32, n: i32) -> f32 {
    canon32(match op {
        0 => a.sqrt(),
        1 => (1.0 / (a as f64).sqrt()) as f32,
        2 => a.cbrt(),
        3 => a.exp(),
        4 => a.exp2(),
        5 => 10f64.powf(a as f64) as f32,
        6 => a.exp_m1(),
        7 => a.ln(),
        8 => a.log2(),
        9 => a.log10(),
        10 => a.ln_1p(),
        11 | 35 => a.sin(),
        12 | 36 => a.cos(),
        13 => a.tan(),
        14 => a.asin(),
        15 => a.acos(),
        16 => a.atan(),
        17 => a.sinh(),
        18 => a.cosh(),
        19 => a.tanh(),
        20 => erf(a as f64) as f32,
        21 => erfc(a as f64) as f32,
        22 => a.floor(),
        23 => a.ceil(),
        24 => a.round(),
        25 => a.trunc(),
        27 => a.powf(b),
        28 => a.atan2(b),
        29 => a.hypot(b),
        33 => a.mul_add(b, c),
        34 => a.powi(n),
        30 => min_number(a as f64, b as f64) as f32,
        31 => -min_number(-a as f64, -b as f64) as f32,
        // Bit moves (abs, copysign) and the operators keep their NaNs' bits.
        26 => return a.abs(),
        32 => return a.copysign(b),
        37 => return a + b,
        38 => return a - b,
        39 => return a * b,
        40 => return a / b,
        41 => return -a,
        k => return fast32(k - GOLDEN_MATH_OPS, a, b),
    })
}

/// The fast intrinsics' exact values (rounded from f64).
fn fast32(op: u32, a: f32, b: f32) -> f32 {
    let (x, y) = (a as f64, b as f64);
    (match op {
        0 => x.exp2(),
        1 => x.log2(),
        2 => x.sin(),
        3 => x.cos(),
        4 => 1.0 / x.sqrt(),
        5 => 1.0 / x,
        6 => x.tanh(),
        7 => x.exp(),
        8 => x.ln(),
        9 => x.tan(),
        10 => x / y,
        _ => x.powf(y),
    }) as f32
}

fn math64(op: u32, a: f64, b: f64, c: f64, n: i32) -> f64 {
    canon64(match op {
        0 => a.sqrt(),
        1 => 1.0 / a.sqrt(),
        2 => a.cbrt(),
        3 => a.exp(),
        4 => a.exp2(),
        5 => 10f64.powf(a),
        6 => a.exp_m1(),
        7 => a.ln(),
        8 => a.log2(),
        9 => a.log10(),
        10 => a.ln_1p(),
        11 | 35 => a.sin(),
        12 | 36 => a.cos(),
        13 => a.tan(),
        14 => a.asin(),
        15 => a.acos(),
        16 => a.atan(),
        17 => a.sinh(),
        18 => a.cosh(),
        19 => a.tanh(),
        20 => erf(a),
        21 => erfc(a),
        22 => a.floor(),
        23 => a.ceil(),
        24 => a.round(),
        25 => a.trunc(),
        27 => a.powf(b),
        28 => a.atan2(b),
        29 => a.hypot(b),
        33 => a.mul_add(b, c),
        34 => a.powi(n),
        30 => min_number(a, b),
        31 => -min_number(-a, -b),
        // The CUDA Programming Guide: double-precision abs passes a NaN through unchanged.
        26 if a.is_nan() => return a,
        26 => return a.abs(),
        32 => return a.copysign(b),
        37 => return a + b,
        38 => return a - b,
        39 => return a * b,
        40 => return a / b,
        _ => return -a,
    })
}

/// IEEE 754-2019 minimumNumber: a NaN operand ignored, -0 below +0 (max is `-min(-a, -b)`).
fn min_number(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

const FRAC_2_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;

/// erf by its Taylor series below 0.5, its series of positive terms
/// `2/sqrt(pi) e^(-x^2) sum 2^k x^(2k+1) / (1·3·…·(2k+1))` below 0.8 (its rounding errors add
/// up beyond), `1 - erfc` above.
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let ax = x.abs();
    let r = if ax < 0.5 {
        // The alternating Taylor series: no cancellation this close to 0, and exact at ±0.
        let (x2, mut term, mut sum, mut k) = (ax * ax, ax, ax, 0.0);
        while term.abs() > 1e-20 * sum {
            k += 1.0;
            term *= -x2 / k;
            sum += term / (2.0 * k + 1.0);
        }
        FRAC_2_SQRT_PI * sum
    } else if ax < 0.8 {
        let (x2, mut term, mut sum, mut k) = (ax * ax, ax, ax, 0.0);
        while term > 1e-20 * sum {
            k += 1.0;
            term *= 2.0 * x2 / (2.0 * k + 1.0);
            sum += term;
        }
        FRAC_2_SQRT_PI * exp_neg_square(ax) * sum
    } else {
        1.0 - erfc_cf(ax)
    };
    if x < 0.0 {
        -r
    } else {
        r
    }
}

/// erfc: 1 - erf near 0, the continued fraction `e^(-x^2)/sqrt(pi) / (x + 1/2 / (x + 1 / (x + …)))`
/// from 0.5 on.
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let ax = x.abs();
    let r = if ax < 0.5 { 1.0 - erf(ax) } else { erfc_cf(ax) };
    if x < 0.0 {
        2.0 - r
    } else {
        r
    }
}

fn erfc_cf(x: f64) -> f64 {
    if x > 27.3 {
        return 0.0;
    }
    let terms = if x < 2.0 { 4000 } else { 200 };
    let mut t = x;
    for k in (1..=terms).rev() {
        t = x + (k as f64 / 2.0) / t;
    }
    exp_neg_square(x) / std::f64::consts::PI.sqrt() / t
}

/// `e^(-x^2)` with `x^2 = hi + lo` exactly: the rounding of `x * x` would otherwise grow into
/// an error of `x^2` ulp.
fn exp_neg_square(x: f64) -> f64 {
    let hi = x * x;
    (-hi).exp() * (1.0 - x.mul_add(x, -hi))
}

/// The lane a PTX `shfl.sync` with CUDA's `c` operand for `width` reads for `lane`, from the
/// ISA's pseudocode (only `b[4:0]` counts); the lane itself when the source is out of range.
fn shfl_source(mode: u32, lane: u32, b: u32, width: u32) -> u32 {
    let (b, seg) = (b & 31, (32 - width) & 31);
    let min = lane & seg;
    let max = min | (31 & !seg);
    let (j, ok) = match mode {
        0 => (min | (b & !seg), true),
        1 => (lane.wrapping_sub(b), lane >= b && lane - b >= min),
        2 => (lane + b, lane + b <= max),
        _ => (lane ^ b, (lane ^ b) <= max),
    };
    if ok {
        j
    } else {
        lane
    }
}

impl Exec for Reference {
    fn f32(&self, op: u32, a: &[f32], b: &[f32], c: &[f32], n: &[i32]) -> Vec<f32> {
        (0..a.len()).map(|i| math32(op, a[i], b[i], c[i], n[i])).collect()
    }

    fn f64(&self, op: u32, a: &[f64], b: &[f64], c: &[f64], n: &[i32]) -> Vec<f64> {
        (0..a.len()).map(|i| math64(op, a[i], b[i], c[i], n[i])).collect()
    }

    fn conv(&self, op: u32, x: &[f32], y: &[f64], n: &[u64]) -> Vec<u64> {
        (0..x.len())
            .map(|i| {
                let (a, d, m) = (x[i], y[i], n[i]);
                match op {
                    0 => a as i8 as u64,
                    1 => a as u8 as u64,
                    2 => a as i16 as u64,
                    3 => a as u16 as u64,
                    4 => a as i32 as u64,
                    5 => a as u32 as u64,
                    6 => a as i64 as u64,
                    7 => a as u64,
                    8 => d as i8 as u64,
                    9 => d as u8 as u64,
                    10 => d as i16 as u64,
                    11 => d as u16 as u64,
                    12 => d as i32 as u64,
                    13 => d as u32 as u64,
                    14 => d as i64 as u64,
                    15 => d as u64,
                    16 => (a as f64).to_bits(),
                    17 => (d as f32).to_bits() as u64,
                    18 => (m as i32 as f32).to_bits() as u64,
                    19 => (m as u32 as f32).to_bits() as u64,
                    20 => (m as i64 as f32).to_bits() as u64,
                    21 => (m as f32).to_bits() as u64,
                    22 => (m as i32 as f64).to_bits(),
                    23 => (m as u32 as f64).to_bits(),
                    24 => (m as i64 as f64).to_bits(),
                    _ => (m as f64).to_bits(),
                }
            })
            .collect()
    }

    fn warp(&self, op: u32, x: &[u64]) -> Vec<u64> {
        x.chunks(32)
            .enumerate()
            .flat_map(|(w, v)| {
                let w = w as u32;
                let (width, param) = (1u32 << (w % 6), GOLDEN_SHFL_PARAMS[((w / 6) % 8) as usize]);
                let pred = |l: usize| golden_pred(v[l], w);
                let ballot = |m: u32| (0..32).filter(|&l| m >> l & 1 == 1 && pred(l)).fold(0u32, |b, l| b | 1 << l);
                let sum_f32 = {
                    let mut s: Vec<f32> = v.iter().map(|&b| f32::from_bits(b as u32)).collect();
                    for offset in [16, 8, 4, 2, 1] {
                        s = (0..32).map(|l| s[l] + s[l ^ offset]).collect();
                    }
                    s
                };
                (0..32usize)
                    .map(|l| match op {
                        0..=15 => {
                            let src = shfl_source(op % 4, l as u32, param, width) as usize;
                            if matches!(op / 4, 0 | 2) {
                                v[src] & 0xffff_ffff
                            } else {
                                v[src]
                            }
                        }
                        16 => ballot(u32::MAX) as u64,
                        17 => (ballot(u32::MAX) == u32::MAX) as u64,
                        18 => (ballot(u32::MAX) != 0) as u64,
                        19 => {
                            let m = golden_vote_mask(w);
                            if m >> l & 1 == 1 {
                                let b = ballot(m);
                                b as u64 | ((b == m) as u64) << 32 | ((b != 0) as u64) << 33
                            } else {
                                0
                            }
                        }
                        20 => v.iter().fold(0u32, |s, &b| s.wrapping_add(b as u32)) as u64,
                        21 => sum_f32[l].to_bits() as u64,
                        _ => u32::MAX as u64,
                    })
                    .collect::<Vec<u64>>()
            })
            .collect()
    }

    fn bits(&self, op: u32, x: &[u64]) -> Vec<u64> {
        let ffs = |v: u64| if v == 0 { 0 } else { v.trailing_zeros() as u64 + 1 };
        x.iter()
            .map(|&v| {
                let (a, s) = (v as u32, (v >> 32) as u32);
                match op {
                    0 | 4 => a.count_ones() as u64,
                    1 | 5 => a.leading_zeros() as u64,
                    2 | 6 => a.reverse_bits() as u64,
                    3 | 7 => ffs(a as u64),
                    8 | 12 => v.count_ones() as u64,
                    9 | 13 => v.leading_zeros() as u64,
                    10 | 14 => v.reverse_bits(),
                    11 | 15 => ffs(v),
                    16 => a.trailing_zeros() as u64,
                    17 => v.trailing_zeros() as u64,
                    18 => a.rotate_left(s % 32) as u64,
                    19 => v.swap_bytes(),
                    20 => (a << (s % 32)) as u64,
                    21 => ((a as i32) >> (s % 32)) as u32 as u64,
                    22 => v >> (s % 64),
                    _ => (a as u64 * s as u64) >> 32,
                }
            })
            .collect()
    }

    fn atomics(&self, x: &[u64], f: &[f32], d: &[f64]) -> Atomics {
        let mut r = Atomics::initial();
        for &v in x {
            let (a, b) = (v as u32, (v >> 32) as u32);
            let u = &mut r.u32s;
            u[0] = u[0].wrapping_add(a);
            u[1] = u[1].min(a);
            u[2] = u[2].max(a);
            u[3] &= a | b;
            u[4] = u[4].wrapping_add(a);
            u[5] |= a & b;
            u[6] ^= a;
            let s = &mut r.i32s;
            s[0] = s[0].wrapping_add(a as i32);
            s[1] = s[1].min(a as i32);
            s[2] = s[2].max(a as i32);
            let w = &mut r.u64s;
            w[0] = w[0].wrapping_add(v);
            w[1] = w[1].min(v);
            w[2] = w[2].max(v);
            w[3] &= v | v.rotate_left(17);
            w[4] |= v & v.rotate_left(17);
            w[5] ^= v;
            w[6] = w[6].wrapping_sub(v);
            let l = &mut r.i64s;
            l[0] = l[0].wrapping_add(v as i64);
            l[1] = l[1].min(v as i64);
            l[2] = l[2].max(v as i64);
        }
        r.f32s[0] = f.iter().sum();
        r.f32s[1] = f.chunks(128).map(|c| c.iter().sum::<f32>()).sum();
        r.f64s[0] = d.iter().sum();
        r
    }
}
