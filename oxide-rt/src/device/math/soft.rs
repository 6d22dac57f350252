//! Pure-Rust `f64` math with only `core` arithmetic: the device fallback when libdevice is
//! absent (`--cfg oxide_no_libdevice`, whose `f32` functions round these results), and `erf` /
//! `erfc` on the host, where `std` has none. Accurate to a few ulp for ordinary arguments (range
//! reduction is Cody–Waite, so `sin`/`cos` of huge arguments lose accuracy).
#![allow(clippy::excessive_precision, dead_code)]

use core::f64::consts::{FRAC_PI_2, FRAC_PI_6, LN_10, LN_2, LOG10_E, LOG2_E, PI};

const LN2_HI: f64 = 6.93147180369123816490e-01;
const LN2_LO: f64 = 1.90821492927058770002e-10;
const PIO2_1: f64 = 1.57079632673412561417e+00;
const PIO2_2: f64 = 6.07710050630396597660e-11;
const PIO2_3: f64 = 2.02226624871116645580e-21;
const SQRT3: f64 = 1.73205080756887729353;

/// Square root: the exact PTX instruction on the GPU, std on the host.
#[inline(always)]
pub fn sqrt(x: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: f64;
        // SAFETY: a pure arithmetic instruction.
        unsafe {
            core::arch::asm!("sqrt.rn.f64 {r}, {x};", r = out(reg64) r, x = in(reg64) x, options(pure, nomem, nostack))
        };
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.sqrt()
    }
}

#[inline(always)]
pub fn fma(x: f64, a: f64, b: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: f64;
        // SAFETY: a pure arithmetic instruction.
        unsafe {
            core::arch::asm!("fma.rn.f64 {r}, {x}, {a}, {b};", r = out(reg64) r, x = in(reg64) x, a = in(reg64) a, b = in(reg64) b, options(pure, nomem, nostack))
        };
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.mul_add(a, b)
    }
}

pub fn abs(x: f64) -> f64 {
    f64::from_bits(x.to_bits() & !(1 << 63))
}

pub fn copysign(x: f64, s: f64) -> f64 {
    f64::from_bits((x.to_bits() & !(1 << 63)) | (s.to_bits() & (1 << 63)))
}

pub fn trunc(x: f64) -> f64 {
    let b = x.to_bits();
    let e = ((b >> 52) & 0x7ff) as i32 - 1023;
    if e >= 52 {
        return x; // integral, inf or NaN
    }
    if e < 0 {
        return f64::from_bits(b & (1 << 63));
    }
    f64::from_bits(b & !((1u64 << (52 - e)) - 1))
}

pub fn floor(x: f64) -> f64 {
    let t = trunc(x);
    if t > x {
        t - 1.0
    } else {
        t
    }
}

pub fn ceil(x: f64) -> f64 {
    let t = trunc(x);
    if t < x {
        t + 1.0
    } else {
        t
    }
}

/// Nearest integer, halves away from zero.
pub fn round(x: f64) -> f64 {
    let t = trunc(x);
    if abs(x - t) >= 0.5 {
        t + copysign(1.0, x)
    } else {
        t
    }
}

pub fn fmin(x: f64, y: f64) -> f64 {
    if x.is_nan() || y < x {
        y
    } else {
        x
    }
}

pub fn fmax(x: f64, y: f64) -> f64 {
    if x.is_nan() || y > x {
        y
    } else {
        x
    }
}

/// `y · 2^k` without intermediate overflow.
fn scalbn(mut y: f64, mut k: i32) -> f64 {
    while k > 1000 {
        y *= f64::from_bits(((1000 + 1023) as u64) << 52);
        k -= 1000;
    }
    while k < -1000 {
        y *= f64::from_bits(((-1000 + 1023) as u64) << 52);
        k += 1000;
    }
    y * f64::from_bits(((k + 1023) as u64) << 52)
}

/// `e^r` for |r| ≤ 0.35 (Taylor to r^15).
fn exp_small(r: f64) -> f64 {
    let mut p = 1.0 / 1_307_674_368_000.0; // 1/15!
    let mut n = 15.0;
    while n > 1.0 {
        n -= 1.0;
        p = p * r + 1.0 / fact(n);
    }
    p * r + 1.0
}

fn fact(n: f64) -> f64 {
    let mut f = 1.0;
    let mut i = 2.0;
    while i <= n {
        f *= i;
        i += 1.0;
    }
    f
}

pub fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 709.782712893384 {
        return f64::INFINITY;
    }
    if x < -745.1332191019412 {
        return 0.0;
    }
    let k = round(x * LOG2_E);
    let r = (x - k * LN2_HI) - k * LN2_LO;
    scalbn(exp_small(r), k as i32)
}

pub fn exp2(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 1024.0 {
        return f64::INFINITY;
    }
    if x < -1075.0 {
        return 0.0;
    }
    let k = round(x);
    scalbn(exp_small((x - k) * LN_2), k as i32)
}

pub fn exp10(x: f64) -> f64 {
    exp(x * LN_10)
}

pub fn expm1(x: f64) -> f64 {
    if abs(x) < 0.5 {
        // Taylor: x + x²/2! + … + x^18/18!
        let mut p = 1.0 / fact(18.0);
        let mut n = 18.0;
        while n > 1.0 {
            n -= 1.0;
            p = p * x + 1.0 / fact(n);
        }
        p * x
    } else {
        exp(x) - 1.0
    }
}

pub fn log(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x == f64::INFINITY {
        return x;
    }
    let (mut x, mut e) = (x, 0i32);
    if x < f64::MIN_POSITIVE {
        x *= 18014398509481984.0; // 2^54
        e -= 54;
    }
    let b = x.to_bits();
    e += ((b >> 52) & 0x7ff) as i32 - 1023;
    let mut m = f64::from_bits((b & ((1u64 << 52) - 1)) | (1023u64 << 52));
    if m > core::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    // ln(m) = 2·atanh(z), z = (m-1)/(m+1), |z| ≤ 0.172.
    let z = (m - 1.0) / (m + 1.0);
    let z2 = z * z;
    let mut s = 0.0;
    let mut k = 25.0;
    while k >= 1.0 {
        s = s * z2 + 1.0 / k;
        k -= 2.0;
    }
    let e = e as f64;
    e * LN2_HI + (2.0 * z * s + e * LN2_LO)
}

pub fn log1p(x: f64) -> f64 {
    let u = 1.0 + x;
    if u == 1.0 {
        x
    } else if u == f64::INFINITY {
        u
    } else {
        log(u) * (x / (u - 1.0))
    }
}

pub fn log2(x: f64) -> f64 {
    log(x) * LOG2_E
}

pub fn log10(x: f64) -> f64 {
    log(x) * LOG10_E
}

/// sin and cos of |r| ≤ π/4 by nested Taylor series (to r^17 and r^18):
/// sin r = r(1 - r²/(2·3)(1 - r²/(4·5)(…))), cos r = 1 - r²/(1·2)(1 - r²/(3·4)(…)).
fn sin_cos_small(r: f64) -> (f64, f64) {
    let r2 = r * r;
    let mut s = 1.0;
    let mut n = 16.0;
    while n >= 2.0 {
        s = 1.0 - r2 / (n * (n + 1.0)) * s;
        n -= 2.0;
    }
    let mut c = 1.0;
    let mut n = 17.0;
    while n >= 1.0 {
        c = 1.0 - r2 / (n * (n + 1.0)) * c;
        n -= 2.0;
    }
    (r * s, c)
}

pub fn sin_cos(x: f64) -> (f64, f64) {
    if !x.is_finite() {
        return (f64::NAN, f64::NAN);
    }
    let k = round(x * (2.0 / PI));
    let r = ((x - k * PIO2_1) - k * PIO2_2) - k * PIO2_3;
    let (s, c) = sin_cos_small(r);
    match (k as i64).rem_euclid(4) {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

pub fn sin(x: f64) -> f64 {
    sin_cos(x).0
}

pub fn cos(x: f64) -> f64 {
    sin_cos(x).1
}

pub fn tan(x: f64) -> f64 {
    let (s, c) = sin_cos(x);
    s / c
}

/// atan of 0 ≤ a ≤ tan(π/12) by its series.
fn atan_series(a: f64) -> f64 {
    let a2 = a * a;
    let mut s = 0.0;
    let mut k = 31.0;
    while k >= 1.0 {
        let sign = if (k as i64 / 2) % 2 == 0 { 1.0 } else { -1.0 };
        s = s * a2 + sign / k;
        k -= 2.0;
    }
    s * a
}

pub fn atan(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = abs(x);
    let (inv, a) = if a > 1.0 { (true, 1.0 / a) } else { (false, a) };
    let r = if a > 0.267_949_192_431_122_7 {
        FRAC_PI_6 + atan_series((a * SQRT3 - 1.0) / (SQRT3 + a))
    } else {
        atan_series(a)
    };
    let r = if inv { FRAC_PI_2 - r } else { r };
    copysign(r, x)
}

pub fn atan2(y: f64, x: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == 0.0 {
        return if y == 0.0 {
            if x.is_sign_negative() {
                copysign(PI, y)
            } else {
                copysign(0.0, y)
            }
        } else {
            copysign(FRAC_PI_2, y)
        };
    }
    let r = atan(y / x);
    if x > 0.0 {
        r
    } else {
        r + copysign(PI, y)
    }
}

pub fn asin(x: f64) -> f64 {
    if abs(x) > 1.0 {
        return f64::NAN;
    }
    atan2(x, sqrt((1.0 - x) * (1.0 + x)))
}

pub fn acos(x: f64) -> f64 {
    if abs(x) > 1.0 {
        return f64::NAN;
    }
    atan2(sqrt((1.0 - x) * (1.0 + x)), x)
}

pub fn sinh(x: f64) -> f64 {
    let a = abs(x);
    let r = if a < 22.0 {
        let em = expm1(a);
        (em + em / (em + 1.0)) * 0.5
    } else {
        exp(a - LN_2) // e^a / 2, overflowing to inf as it should
    };
    copysign(r, x)
}

pub fn cosh(x: f64) -> f64 {
    let a = abs(x);
    if a < 22.0 {
        let e = exp(a);
        (e + 1.0 / e) * 0.5
    } else {
        exp(a - LN_2)
    }
}

pub fn tanh(x: f64) -> f64 {
    let a = abs(x);
    let r = if a > 22.0 {
        1.0
    } else {
        let em = expm1(2.0 * a);
        em / (em + 2.0)
    };
    copysign(r, x)
}

pub fn pow(x: f64, y: f64) -> f64 {
    if y == 0.0 || x == 1.0 {
        return 1.0;
    }
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    let y_int = trunc(y) == y;
    let y_odd = y_int && abs(y) < 9007199254740992.0 && (y as i64) % 2 != 0;
    if x == 0.0 {
        let r = if y > 0.0 { 0.0 } else { f64::INFINITY };
        return if y_odd { copysign(r, x) } else { r };
    }
    if x < 0.0 {
        if !y_int {
            return f64::NAN;
        }
        let r = exp(y * log(-x));
        return if y_odd { -r } else { r };
    }
    exp(y * log(x))
}

pub fn powi(x: f64, n: i32) -> f64 {
    let mut e = n.unsigned_abs();
    let (mut base, mut r) = (x, 1.0);
    while e > 0 {
        if e & 1 == 1 {
            r *= base;
        }
        base *= base;
        e >>= 1;
    }
    if n < 0 {
        1.0 / r
    } else {
        r
    }
}

pub fn cbrt(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let a = abs(x);
    let mut y = exp(log(a) / 3.0);
    y -= (y * y * y - a) / (3.0 * y * y);
    copysign(y, x)
}

pub fn hypot(x: f64, y: f64) -> f64 {
    let (a, b) = (abs(x), abs(y));
    if a == f64::INFINITY || b == f64::INFINITY {
        return f64::INFINITY;
    }
    let (m, n) = if a > b { (a, b) } else { (b, a) };
    if m == 0.0 || m.is_nan() {
        return m + n;
    }
    let q = n / m;
    m * sqrt(1.0 + q * q)
}

/// `e^(-x^2)`, with `x^2` split exactly into `hi + lo` (the rounding of `x * x` alone would
/// grow into the result's error in proportion to `x^2`).
fn exp_neg_square(x: f64) -> f64 {
    let hi = x * x;
    let lo = fma(x, x, -hi);
    #[cfg(not(target_arch = "nvptx64"))]
    let e = (-hi).exp();
    #[cfg(target_arch = "nvptx64")]
    let e = exp(-hi);
    e * (1.0 - lo)
}

/// The Taylor series below 0.5, the series of positive terms
/// `2/sqrt(pi) e^(-x^2) sum 2^k x^(2k+1) / (1·3·…·(2k+1))` below 1 (no cancellation), then
/// `1 - erfc` (erfc's error shrinks with it).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = abs(x);
    let r = if a < 0.5 {
        let (x2, mut term, mut sum) = (a * a, a, a);
        let mut n = 0.0;
        loop {
            n += 1.0;
            term *= -x2 / n;
            let add = term / (2.0 * n + 1.0);
            sum += add;
            // `<=`: at 0 and for denormals every term is 0.
            if abs(add) <= 1e-17 * abs(sum) {
                break;
            }
        }
        sum * core::f64::consts::FRAC_2_SQRT_PI
    } else if a < 1.0 {
        let (x2, mut term, mut sum) = (a * a, a, a);
        let mut n = 0.0;
        while term > 1e-17 * sum {
            n += 1.0;
            term *= 2.0 * x2 / (2.0 * n + 1.0);
            sum += term;
        }
        core::f64::consts::FRAC_2_SQRT_PI * exp_neg_square(a) * sum
    } else {
        1.0 - erfc(a)
    };
    copysign(r, x)
}

/// `1 - erf` below 0.5; from 0.5 on, the continued fraction
/// `e^(-x^2)/sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / (x + …))))`, evaluated from the back
/// with enough terms to converge (more near 0.5).
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x < 0.5 {
        return 1.0 - erf(x);
    }
    if x > 27.3 {
        return 0.0; // below the smallest denormal
    }
    let terms = (60.0 + 250.0 / (x * x)) as u32;
    let mut t = x;
    let mut k = terms;
    while k > 0 {
        t = x + (k as f64 / 2.0) / t;
        k -= 1;
    }
    exp_neg_square(x) / (t * sqrt(PI))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, tol: f64, what: &str, x: f64) {
        let err = if want == 0.0 { got.abs() } else { ((got - want) / want).abs() };
        assert!(
            err <= tol || (got.is_nan() && want.is_nan()) || got == want,
            "{what}({x}): got {got}, want {want}, rel. err {err:e}"
        );
    }

    #[test]
    fn agrees_with_std() {
        let xs: Vec<f64> = (-400..=400).map(|i| i as f64 * 0.0537 + 0.0001).collect();
        for &x in &xs {
            close(exp(x), x.exp(), 4e-15, "exp", x);
            close(exp2(x), x.exp2(), 4e-15, "exp2", x);
            close(expm1(x), x.exp_m1(), 4e-15, "expm1", x);
            close(sin(x), x.sin(), 1e-14, "sin", x);
            close(cos(x), x.cos(), 1e-14, "cos", x);
            close(tan(x), x.tan(), 1e-13, "tan", x);
            close(atan(x), x.atan(), 4e-15, "atan", x);
            close(atan2(x, 0.7), x.atan2(0.7), 4e-15, "atan2", x);
            close(atan2(x, -0.7), x.atan2(-0.7), 4e-15, "atan2-", x);
            close(sinh(x), x.sinh(), 4e-15, "sinh", x);
            close(cosh(x), x.cosh(), 4e-15, "cosh", x);
            close(tanh(x), x.tanh(), 4e-15, "tanh", x);
            close(cbrt(x), x.cbrt(), 4e-15, "cbrt", x);
            close(hypot(x, 3.0), x.hypot(3.0), 4e-15, "hypot", x);
            close(floor(x), x.floor(), 0.0, "floor", x);
            close(ceil(x), x.ceil(), 0.0, "ceil", x);
            close(round(x), x.round(), 0.0, "round", x);
            close(trunc(x), x.trunc(), 0.0, "trunc", x);
            close(powi(x, 5), x.powi(5), 4e-15, "powi", x);
            close(pow(x, 3.0), x.powf(3.0), 1e-14, "pow", x);
            if x > 0.0 {
                close(log(x), x.ln(), 4e-15, "log", x);
                close(log2(x), x.log2(), 4e-15, "log2", x);
                close(log10(x), x.log10(), 4e-15, "log10", x);
                close(pow(x, 0.37), x.powf(0.37), 1e-14, "pow", x);
            }
            if x > -1.0 {
                close(log1p(x), x.ln_1p(), 4e-15, "log1p", x);
            }
            if x.abs() <= 1.0 {
                close(asin(x), x.asin(), 4e-15, "asin", x);
                close(acos(x), x.acos(), 4e-15, "acos", x);
            }
        }
        for x in [1e-300, 3e-310, 1e300, 0.5, 2.0, 1.0] {
            close(log(x), x.ln(), 4e-15, "log", x);
        }
        assert_eq!(round(0.49999999999999994), 0.0);
        assert_eq!(round(-2.5), -3.0);
    }

    #[test]
    fn erf_matches_known_values() {
        // Values from tables (A&S, 7.1), to 1e-15.
        for (x, want) in [
            (0.1, 0.1124629160182849),
            (0.5, 0.5204998778130465),
            (1.0, 0.8427007929497149),
            (2.0, 0.9953222650189527),
            (3.0, 0.9999779095030014),
        ] {
            close(erf(x), want, 1e-14, "erf", x);
            close(erf(-x), -want, 1e-14, "erf", -x);
            // `1 - want` itself loses digits for large x.
            close(erfc(x), 1.0 - want, 1e-11, "erfc", x);
        }
        close(erfc(3.0), 2.209049699858544e-05, 1e-14, "erfc", 3.0);
        // Zeros and denormals end the series at once (they used to loop forever).
        assert_eq!(erf(0.0).to_bits(), 0);
        assert_eq!(erf(-0.0).to_bits(), (-0.0f64).to_bits());
        assert!(erf(1e-310) > 0.0 && erfc(1e-310) == 1.0);
        close(erfc(5.0), 1.5374597944280349e-12, 1e-13, "erfc", 5.0);
    }
}
