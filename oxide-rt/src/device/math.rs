//! Floating-point math for kernels, for `f32` and `f64`.
//!
//! Call the functions as methods of the [`Float`] trait (`x.exp()`) or as free functions
//! (`math::exp(x)`); the free functions avoid any clash with `std`'s inherent methods on the
//! host. On the GPU they call libdevice (`__nv_expf`, …), which oxide-build links when a kernel
//! uses one; on the host (CPU executor) they are `std`'s. Results agree to within a few ulp
//! (libdevice documents its error bounds; `std` uses the platform libm).
//!
//! How closely, per function: the golden set of `tests/device-api` (`src/golden/mod.rs` holds
//! the bound of every function, CUDA's documented ulp plus the host libm's own) runs each one
//! on the GPU and on the CPU executor over edge cases and random inputs and prints the
//! agreement table. Rounding functions, `abs`, `copysign`, `fma` and `sqrt` agree bit for bit,
//! `min`/`max` too (the CPU puts -0 below +0), and f32 NaN results carry the GPU's canonical
//! bits on both.
//!
//! Without libdevice, oxide-build compiles the device code with `--cfg oxide_no_libdevice`, and
//! these functions come from oxide's own `no_std` implementation instead (in `f64`, a few ulp;
//! slower than libdevice).
//!
//! [`fast`] has CUDA's fast approximate intrinsics (`__expf`, `__sinf`, …) for `f32`.
#![allow(unexpected_cfgs)] // `oxide_no_libdevice` is set by oxide-build for the device build only

/// Math on `f32` and `f64` (see the [module](self)).
pub trait Float:
    Copy
    + PartialOrd
    + core::ops::Add<Output = Self>
    + core::ops::Sub<Output = Self>
    + core::ops::Mul<Output = Self>
    + core::ops::Div<Output = Self>
    + core::ops::Neg<Output = Self>
    + sealed::Sealed
{
    /// Square root.
    fn sqrt(self) -> Self;
    /// Reciprocal square root `1/sqrt(x)`.
    fn rsqrt(self) -> Self;
    /// Cube root.
    fn cbrt(self) -> Self;
    /// `e^x`.
    fn exp(self) -> Self;
    /// `2^x`.
    fn exp2(self) -> Self;
    /// `10^x`.
    fn exp10(self) -> Self;
    /// `e^x - 1`, accurate near 0.
    fn expm1(self) -> Self;
    /// Natural logarithm.
    fn log(self) -> Self;
    /// Base-2 logarithm.
    fn log2(self) -> Self;
    /// Base-10 logarithm.
    fn log10(self) -> Self;
    /// `ln(1 + x)`, accurate near 0.
    fn log1p(self) -> Self;
    /// Sine (radians).
    fn sin(self) -> Self;
    /// Cosine (radians).
    fn cos(self) -> Self;
    /// Tangent (radians).
    fn tan(self) -> Self;
    /// Arcsine.
    fn asin(self) -> Self;
    /// Arccosine.
    fn acos(self) -> Self;
    /// Arctangent.
    fn atan(self) -> Self;
    /// Hyperbolic sine.
    fn sinh(self) -> Self;
    /// Hyperbolic cosine.
    fn cosh(self) -> Self;
    /// Hyperbolic tangent.
    fn tanh(self) -> Self;
    /// Error function.
    fn erf(self) -> Self;
    /// Complementary error function `1 - erf(x)`.
    fn erfc(self) -> Self;
    /// Largest integer not above `x`.
    fn floor(self) -> Self;
    /// Smallest integer not below `x`.
    fn ceil(self) -> Self;
    /// Nearest integer, halves away from zero.
    fn round(self) -> Self;
    /// Integer part (towards zero).
    fn trunc(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// `x^y`.
    fn pow(self, other: Self) -> Self;
    /// `atan2(self, other)`: the angle of the point (`other`, `self`), as `f32::atan2`.
    fn atan2(self, other: Self) -> Self;
    /// `sqrt(x² + y²)` without overflow.
    fn hypot(self, other: Self) -> Self;
    /// The smaller value; a NaN operand is ignored (IEEE `fmin`; the CPU executor puts -0
    /// below +0).
    fn min(self, other: Self) -> Self;
    /// The larger value; a NaN operand is ignored (IEEE `fmax`; the CPU executor puts +0
    /// above -0).
    fn max(self, other: Self) -> Self;
    /// `x`'s magnitude with `y`'s sign.
    fn copysign(self, other: Self) -> Self;
    /// `self * a + b` with one rounding (fused multiply-add).
    fn fma(self, a: Self, b: Self) -> Self;
    /// `self^n` for an integer `n`.
    fn powi(self, n: i32) -> Self;
    /// `(sin(self), cos(self))`.
    fn sin_cos(self) -> (Self, Self);
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// Square root.
#[inline(always)]
pub fn sqrt<F: Float>(x: F) -> F {
    x.sqrt()
}

/// Reciprocal square root `1/sqrt(x)`.
#[inline(always)]
pub fn rsqrt<F: Float>(x: F) -> F {
    x.rsqrt()
}

/// Cube root.
#[inline(always)]
pub fn cbrt<F: Float>(x: F) -> F {
    x.cbrt()
}

/// `e^x`.
#[inline(always)]
pub fn exp<F: Float>(x: F) -> F {
    x.exp()
}

/// `2^x`.
#[inline(always)]
pub fn exp2<F: Float>(x: F) -> F {
    x.exp2()
}

/// `10^x`.
#[inline(always)]
pub fn exp10<F: Float>(x: F) -> F {
    x.exp10()
}

/// `e^x - 1`, accurate near 0.
#[inline(always)]
pub fn expm1<F: Float>(x: F) -> F {
    x.expm1()
}

/// Natural logarithm.
#[inline(always)]
pub fn log<F: Float>(x: F) -> F {
    x.log()
}

/// Base-2 logarithm.
#[inline(always)]
pub fn log2<F: Float>(x: F) -> F {
    x.log2()
}

/// Base-10 logarithm.
#[inline(always)]
pub fn log10<F: Float>(x: F) -> F {
    x.log10()
}

/// `ln(1 + x)`, accurate near 0.
#[inline(always)]
pub fn log1p<F: Float>(x: F) -> F {
    x.log1p()
}

/// Sine (radians).
#[inline(always)]
pub fn sin<F: Float>(x: F) -> F {
    x.sin()
}

/// Cosine (radians).
#[inline(always)]
pub fn cos<F: Float>(x: F) -> F {
    x.cos()
}

/// Tangent (radians).
#[inline(always)]
pub fn tan<F: Float>(x: F) -> F {
    x.tan()
}

/// Arcsine.
#[inline(always)]
pub fn asin<F: Float>(x: F) -> F {
    x.asin()
}

/// Arccosine.
#[inline(always)]
pub fn acos<F: Float>(x: F) -> F {
    x.acos()
}

/// Arctangent.
#[inline(always)]
pub fn atan<F: Float>(x: F) -> F {
    x.atan()
}

/// Hyperbolic sine.
#[inline(always)]
pub fn sinh<F: Float>(x: F) -> F {
    x.sinh()
}

/// Hyperbolic cosine.
#[inline(always)]
pub fn cosh<F: Float>(x: F) -> F {
    x.cosh()
}

/// Hyperbolic tangent.
#[inline(always)]
pub fn tanh<F: Float>(x: F) -> F {
    x.tanh()
}

/// Error function.
#[inline(always)]
pub fn erf<F: Float>(x: F) -> F {
    x.erf()
}

/// Complementary error function `1 - erf(x)`.
#[inline(always)]
pub fn erfc<F: Float>(x: F) -> F {
    x.erfc()
}

/// Largest integer not above `x`.
#[inline(always)]
pub fn floor<F: Float>(x: F) -> F {
    x.floor()
}

/// Smallest integer not below `x`.
#[inline(always)]
pub fn ceil<F: Float>(x: F) -> F {
    x.ceil()
}

/// Nearest integer, halves away from zero.
#[inline(always)]
pub fn round<F: Float>(x: F) -> F {
    x.round()
}

/// Integer part (towards zero).
#[inline(always)]
pub fn trunc<F: Float>(x: F) -> F {
    x.trunc()
}

/// Absolute value.
#[inline(always)]
pub fn abs<F: Float>(x: F) -> F {
    x.abs()
}

/// `x^y`.
#[inline(always)]
pub fn pow<F: Float>(x: F, y: F) -> F {
    Float::pow(x, y)
}

/// `atan2(self, other)`: the angle of the point (`other`, `self`), as `f32::atan2`.
#[inline(always)]
pub fn atan2<F: Float>(x: F, y: F) -> F {
    Float::atan2(x, y)
}

/// `sqrt(x² + y²)` without overflow.
#[inline(always)]
pub fn hypot<F: Float>(x: F, y: F) -> F {
    Float::hypot(x, y)
}

/// The smaller value; a NaN operand is ignored (IEEE `fmin`).
#[inline(always)]
pub fn min<F: Float>(x: F, y: F) -> F {
    Float::min(x, y)
}

/// The larger value; a NaN operand is ignored (IEEE `fmax`).
#[inline(always)]
pub fn max<F: Float>(x: F, y: F) -> F {
    Float::max(x, y)
}

/// `x`'s magnitude with `y`'s sign.
#[inline(always)]
pub fn copysign<F: Float>(x: F, y: F) -> F {
    Float::copysign(x, y)
}

/// `x * a + b` with one rounding (fused multiply-add).
#[inline(always)]
pub fn fma<F: Float>(x: F, a: F, b: F) -> F {
    x.fma(a, b)
}

/// `x^n` for an integer `n`.
#[inline(always)]
pub fn powi<F: Float>(x: F, n: i32) -> F {
    x.powi(n)
}

/// `(sin(x), cos(x))`.
#[inline(always)]
pub fn sin_cos<F: Float>(x: F) -> (F, F) {
    x.sin_cos()
}

// ---------------------------------------------------------------------------------------------
// GPU with libdevice

#[cfg(all(target_arch = "nvptx64", not(oxide_no_libdevice)))]
mod imp {
    use super::Float;

    unsafe extern "C" {
        fn __nv_sqrtf(x: f32) -> f32;
        fn __nv_sqrt(x: f64) -> f64;
        fn __nv_rsqrtf(x: f32) -> f32;
        fn __nv_rsqrt(x: f64) -> f64;
        fn __nv_cbrtf(x: f32) -> f32;
        fn __nv_cbrt(x: f64) -> f64;
        fn __nv_expf(x: f32) -> f32;
        fn __nv_exp(x: f64) -> f64;
        fn __nv_exp2f(x: f32) -> f32;
        fn __nv_exp2(x: f64) -> f64;
        fn __nv_exp10f(x: f32) -> f32;
        fn __nv_exp10(x: f64) -> f64;
        fn __nv_expm1f(x: f32) -> f32;
        fn __nv_expm1(x: f64) -> f64;
        fn __nv_logf(x: f32) -> f32;
        fn __nv_log(x: f64) -> f64;
        fn __nv_log2f(x: f32) -> f32;
        fn __nv_log2(x: f64) -> f64;
        fn __nv_log10f(x: f32) -> f32;
        fn __nv_log10(x: f64) -> f64;
        fn __nv_log1pf(x: f32) -> f32;
        fn __nv_log1p(x: f64) -> f64;
        fn __nv_sinf(x: f32) -> f32;
        fn __nv_sin(x: f64) -> f64;
        fn __nv_cosf(x: f32) -> f32;
        fn __nv_cos(x: f64) -> f64;
        fn __nv_tanf(x: f32) -> f32;
        fn __nv_tan(x: f64) -> f64;
        fn __nv_asinf(x: f32) -> f32;
        fn __nv_asin(x: f64) -> f64;
        fn __nv_acosf(x: f32) -> f32;
        fn __nv_acos(x: f64) -> f64;
        fn __nv_atanf(x: f32) -> f32;
        fn __nv_atan(x: f64) -> f64;
        fn __nv_sinhf(x: f32) -> f32;
        fn __nv_sinh(x: f64) -> f64;
        fn __nv_coshf(x: f32) -> f32;
        fn __nv_cosh(x: f64) -> f64;
        fn __nv_tanhf(x: f32) -> f32;
        fn __nv_tanh(x: f64) -> f64;
        fn __nv_erff(x: f32) -> f32;
        fn __nv_erf(x: f64) -> f64;
        fn __nv_erfcf(x: f32) -> f32;
        fn __nv_erfc(x: f64) -> f64;
        fn __nv_floorf(x: f32) -> f32;
        fn __nv_floor(x: f64) -> f64;
        fn __nv_ceilf(x: f32) -> f32;
        fn __nv_ceil(x: f64) -> f64;
        fn __nv_roundf(x: f32) -> f32;
        fn __nv_round(x: f64) -> f64;
        fn __nv_truncf(x: f32) -> f32;
        fn __nv_trunc(x: f64) -> f64;
        fn __nv_fabsf(x: f32) -> f32;
        fn __nv_fabs(x: f64) -> f64;
        fn __nv_powf(x: f32, y: f32) -> f32;
        fn __nv_pow(x: f64, y: f64) -> f64;
        fn __nv_atan2f(x: f32, y: f32) -> f32;
        fn __nv_atan2(x: f64, y: f64) -> f64;
        fn __nv_hypotf(x: f32, y: f32) -> f32;
        fn __nv_hypot(x: f64, y: f64) -> f64;
        fn __nv_fminf(x: f32, y: f32) -> f32;
        fn __nv_fmin(x: f64, y: f64) -> f64;
        fn __nv_fmaxf(x: f32, y: f32) -> f32;
        fn __nv_fmax(x: f64, y: f64) -> f64;
        fn __nv_copysignf(x: f32, y: f32) -> f32;
        fn __nv_copysign(x: f64, y: f64) -> f64;
        fn __nv_fmaf(x: f32, y: f32, z: f32) -> f32;
        fn __nv_fma(x: f64, y: f64, z: f64) -> f64;
        fn __nv_powif(x: f32, n: i32) -> f32;
        fn __nv_powi(x: f64, n: i32) -> f64;
    }

    /// IEEE (correctly rounded) `f32` square root, as CUDA's default `-prec-sqrt=true`;
    /// libdevice's `__nv_sqrtf` picks `sqrt.approx` unless NVVM reflection says otherwise.
    ///
    /// # Safety
    /// None (`unsafe` only to match the libdevice declarations in `imp!`).
    #[inline(always)]
    unsafe fn sqrt_rn_f32(x: f32) -> f32 {
        let r: f32;
        // SAFETY: a pure arithmetic instruction.
        unsafe {
            core::arch::asm!("sqrt.rn.f32 {r}, {x};", r = out(reg32) r, x = in(reg32) x, options(pure, nomem, nostack))
        };
        r
    }

    macro_rules! imp {
        ($t:ty, $fma:ident, $powi:ident, $($n:ident = $nv:ident),* ; $($n2:ident = $nv2:ident),*) => {
            impl Float for $t {
                $(
                    #[inline(always)]
                    fn $n(self) -> $t {
                        // SAFETY: libdevice math functions are pure and defined for every input.
                        unsafe { $nv(self) }
                    }
                )*
                $(
                    #[inline(always)]
                    fn $n2(self, other: $t) -> $t {
                        // SAFETY: as above.
                        unsafe { $nv2(self, other) }
                    }
                )*
                #[inline(always)]
                fn fma(self, a: $t, b: $t) -> $t {
                    // SAFETY: as above.
                    unsafe { $fma(self, a, b) }
                }
                #[inline(always)]
                fn powi(self, n: i32) -> $t {
                    // SAFETY: as above.
                    unsafe { $powi(self, n) }
                }
                #[inline(always)]
                fn sin_cos(self) -> ($t, $t) {
                    (Float::sin(self), Float::cos(self))
                }
            }
        };
    }
    imp!(f32, __nv_fmaf, __nv_powif, sqrt = sqrt_rn_f32, rsqrt = __nv_rsqrtf, cbrt = __nv_cbrtf, exp = __nv_expf, exp2 = __nv_exp2f, exp10 = __nv_exp10f, expm1 = __nv_expm1f, log = __nv_logf, log2 = __nv_log2f, log10 = __nv_log10f, log1p = __nv_log1pf, sin = __nv_sinf, cos = __nv_cosf, tan = __nv_tanf, asin = __nv_asinf, acos = __nv_acosf, atan = __nv_atanf, sinh = __nv_sinhf, cosh = __nv_coshf, tanh = __nv_tanhf, erf = __nv_erff, erfc = __nv_erfcf, floor = __nv_floorf, ceil = __nv_ceilf, round = __nv_roundf, trunc = __nv_truncf, abs = __nv_fabsf; pow = __nv_powf, atan2 = __nv_atan2f, hypot = __nv_hypotf, min = __nv_fminf, max = __nv_fmaxf, copysign = __nv_copysignf);
    imp!(f64, __nv_fma, __nv_powi, sqrt = __nv_sqrt, rsqrt = __nv_rsqrt, cbrt = __nv_cbrt, exp = __nv_exp, exp2 = __nv_exp2, exp10 = __nv_exp10, expm1 = __nv_expm1, log = __nv_log, log2 = __nv_log2, log10 = __nv_log10, log1p = __nv_log1p, sin = __nv_sin, cos = __nv_cos, tan = __nv_tan, asin = __nv_asin, acos = __nv_acos, atan = __nv_atan, sinh = __nv_sinh, cosh = __nv_cosh, tanh = __nv_tanh, erf = __nv_erf, erfc = __nv_erfc, floor = __nv_floor, ceil = __nv_ceil, round = __nv_round, trunc = __nv_trunc, abs = __nv_fabs; pow = __nv_pow, atan2 = __nv_atan2, hypot = __nv_hypot, min = __nv_fmin, max = __nv_fmax, copysign = __nv_copysign);
}

// ---------------------------------------------------------------------------------------------
// GPU without libdevice: oxide's own `no_std` math (`soft`), in f64; `f32` rounds the result.

#[cfg(all(target_arch = "nvptx64", oxide_no_libdevice))]
mod imp {
    use super::{soft, Float};

    fn rsqrt(x: f64) -> f64 {
        1.0 / soft::sqrt(x)
    }

    macro_rules! imp {
        ($t:ty, $($n:ident = $f:path),* ; $($n2:ident = $f2:path),*) => {
            impl Float for $t {
                $(
                    #[inline(always)]
                    fn $n(self) -> $t {
                        $f(self as f64) as $t
                    }
                )*
                $(
                    #[inline(always)]
                    fn $n2(self, other: $t) -> $t {
                        $f2(self as f64, other as f64) as $t
                    }
                )*
                #[inline(always)]
                fn fma(self, a: $t, b: $t) -> $t {
                    soft::fma(self as f64, a as f64, b as f64) as $t
                }
                #[inline(always)]
                fn powi(self, n: i32) -> $t {
                    soft::powi(self as f64, n) as $t
                }
                #[inline(always)]
                fn sin_cos(self) -> ($t, $t) {
                    let (s, c) = soft::sin_cos(self as f64);
                    (s as $t, c as $t)
                }
            }
        };
    }
    imp!(f32, sqrt = soft::sqrt, rsqrt = rsqrt, cbrt = soft::cbrt, exp = soft::exp, exp2 = soft::exp2, exp10 = soft::exp10, expm1 = soft::expm1, log = soft::log, log2 = soft::log2, log10 = soft::log10, log1p = soft::log1p, sin = soft::sin, cos = soft::cos, tan = soft::tan, asin = soft::asin, acos = soft::acos, atan = soft::atan, sinh = soft::sinh, cosh = soft::cosh, tanh = soft::tanh, erf = soft::erf, erfc = soft::erfc, floor = soft::floor, ceil = soft::ceil, round = soft::round, trunc = soft::trunc, abs = soft::abs; pow = soft::pow, atan2 = soft::atan2, hypot = soft::hypot, min = soft::fmin, max = soft::fmax, copysign = soft::copysign);
    imp!(f64, sqrt = soft::sqrt, rsqrt = rsqrt, cbrt = soft::cbrt, exp = soft::exp, exp2 = soft::exp2, exp10 = soft::exp10, expm1 = soft::expm1, log = soft::log, log2 = soft::log2, log10 = soft::log10, log1p = soft::log1p, sin = soft::sin, cos = soft::cos, tan = soft::tan, asin = soft::asin, acos = soft::acos, atan = soft::atan, sinh = soft::sinh, cosh = soft::cosh, tanh = soft::tanh, erf = soft::erf, erfc = soft::erfc, floor = soft::floor, ceil = soft::ceil, round = soft::round, trunc = soft::trunc, abs = soft::abs; pow = soft::pow, atan2 = soft::atan2, hypot = soft::hypot, min = soft::fmin, max = soft::fmax, copysign = soft::copysign);
}

// ---------------------------------------------------------------------------------------------
// Host: std.

#[cfg(not(target_arch = "nvptx64"))]
mod imp {
    use super::Float;

    /// A NaN result as the GPU writes it. For `f32` every NaN that an arithmetic instruction
    /// (and so libdevice) produces is the canonical `0x7fffffff`, whatever the inputs' payloads;
    /// the host's libm returns `0x7fc00000`, `0xffc00000` or the input's payload (CUDA
    /// Programming Guide, "Floating-Point Standard"). `abs` and `copysign` are left alone;
    /// `min`/`max` return a NaN only for two NaN operands, canonical on the GPU. `f64` results
    /// are left as they are, but for `abs`, which passes a NaN through unchanged on the GPU.
    trait Canon {
        fn canon(self) -> Self;
        /// `abs` as the GPU computes it.
        fn gpu_abs(self) -> Self;
    }

    impl Canon for f32 {
        /// On the bits: LLVM may take any NaN for any other (its NaN payloads are unspecified),
        /// so a float `select` between a NaN and the canonical NaN folds away in release
        /// builds, leaving the host's `0xffc00000`; an integer select keeps them apart.
        #[inline(always)]
        fn canon(self) -> f32 {
            let bits = self.to_bits();
            f32::from_bits(if bits & 0x7fff_ffff > 0x7f80_0000 { 0x7fff_ffff } else { bits })
        }
        #[inline(always)]
        fn gpu_abs(self) -> f32 {
            self.abs()
        }
    }

    impl Canon for f64 {
        #[inline(always)]
        fn canon(self) -> f64 {
            self
        }
        /// The CUDA Programming Guide ("Floating-Point Standard"): double-precision absolute
        /// value passes a NaN through, its sign included, but quiet (the H200 sets the quiet bit
        /// of a signaling NaN: `0x7ff0000000000001` gives `0x7ff8000000000001`).
        #[inline(always)]
        fn gpu_abs(self) -> f64 {
            if self.is_nan() {
                f64::from_bits(self.to_bits() | 1 << 51)
            } else {
                self.abs()
            }
        }
    }

    #[inline(always)]
    fn canon<T: Canon>(x: T) -> T {
        x.canon()
    }

    macro_rules! imp {
        ($t:ty) => {
            impl Float for $t {
                #[inline]
                fn sqrt(self) -> Self {
                    let x = self;
                    canon(x.sqrt())
                }
                #[inline]
                fn rsqrt(self) -> Self {
                    let x = self;
                    canon((1.0 / (x as f64).sqrt()) as Self)
                }
                #[inline]
                fn cbrt(self) -> Self {
                    let x = self;
                    canon(x.cbrt())
                }
                #[inline]
                fn exp(self) -> Self {
                    let x = self;
                    canon(x.exp())
                }
                #[inline]
                fn exp2(self) -> Self {
                    let x = self;
                    canon(x.exp2())
                }
                #[inline]
                fn exp10(self) -> Self {
                    let x = self;
                    // In f64 through pow: `exp(x · ln 10)` would carry the product's rounding
                    // error, which grows with |x| (35 ulp at x = 30 in f32).
                    canon(10f64.powf(x as f64) as Self)
                }
                #[inline]
                fn expm1(self) -> Self {
                    let x = self;
                    canon(x.exp_m1())
                }
                #[inline]
                fn log(self) -> Self {
                    let x = self;
                    canon(x.ln())
                }
                #[inline]
                fn log2(self) -> Self {
                    let x = self;
                    canon(x.log2())
                }
                #[inline]
                fn log10(self) -> Self {
                    let x = self;
                    canon(x.log10())
                }
                #[inline]
                fn log1p(self) -> Self {
                    let x = self;
                    canon(x.ln_1p())
                }
                #[inline]
                fn sin(self) -> Self {
                    let x = self;
                    canon(x.sin())
                }
                #[inline]
                fn cos(self) -> Self {
                    let x = self;
                    canon(x.cos())
                }
                #[inline]
                fn tan(self) -> Self {
                    let x = self;
                    canon(x.tan())
                }
                #[inline]
                fn asin(self) -> Self {
                    let x = self;
                    canon(x.asin())
                }
                #[inline]
                fn acos(self) -> Self {
                    let x = self;
                    canon(x.acos())
                }
                #[inline]
                fn atan(self) -> Self {
                    let x = self;
                    canon(x.atan())
                }
                #[inline]
                fn sinh(self) -> Self {
                    let x = self;
                    canon(x.sinh())
                }
                #[inline]
                fn cosh(self) -> Self {
                    let x = self;
                    canon(x.cosh())
                }
                #[inline]
                fn tanh(self) -> Self {
                    let x = self;
                    canon(x.tanh())
                }
                #[inline]
                fn erf(self) -> Self {
                    let x = self;
                    canon(libm::erf(x as f64) as Self)
                }
                #[inline]
                fn erfc(self) -> Self {
                    let x = self;
                    canon(libm::erfc(x as f64) as Self)
                }
                #[inline]
                fn floor(self) -> Self {
                    let x = self;
                    canon(x.floor())
                }
                #[inline]
                fn ceil(self) -> Self {
                    let x = self;
                    canon(x.ceil())
                }
                #[inline]
                fn round(self) -> Self {
                    let x = self;
                    canon(x.round())
                }
                #[inline]
                fn trunc(self) -> Self {
                    let x = self;
                    canon(x.trunc())
                }
                #[inline]
                fn abs(self) -> Self {
                    self.gpu_abs()
                }
                #[inline]
                fn pow(self, other: Self) -> Self {
                    let (x, y) = (self, other);
                    // IEEE 754 and C's pow, as libdevice has them: x^±0 and 1^y are 1 even for a
                    // signaling NaN, which glibc turns into a NaN.
                    if y == 0.0 || x == 1.0 {
                        return 1.0;
                    }
                    canon(x.powf(y))
                }
                #[inline]
                fn atan2(self, other: Self) -> Self {
                    let (x, y) = (self, other);
                    canon(x.atan2(y))
                }
                #[inline]
                fn hypot(self, other: Self) -> Self {
                    let (x, y) = (self, other);
                    // An infinite side makes +inf even beside a signaling NaN (see `pow`).
                    if x.is_infinite() || y.is_infinite() {
                        return <$t>::INFINITY;
                    }
                    canon(x.hypot(y))
                }
                // PTX `min`/`max` (IEEE 754-2019 minimumNumber/maximumNumber): a NaN operand
                // is ignored, two give a NaN, and -0 is below +0, where std's may return either
                // zero. Equal values have equal bits but for the zeros' signs.
                #[inline]
                fn min(self, other: Self) -> Self {
                    let (x, y) = (self, other);
                    if x == y {
                        <$t>::from_bits(x.to_bits() | y.to_bits())
                    } else {
                        canon(x.min(y))
                    }
                }
                #[inline]
                fn max(self, other: Self) -> Self {
                    let (x, y) = (self, other);
                    if x == y {
                        <$t>::from_bits(x.to_bits() & y.to_bits())
                    } else {
                        canon(x.max(y))
                    }
                }
                #[inline]
                fn copysign(self, other: Self) -> Self {
                    let (x, y) = (self, other);
                    x.copysign(y)
                }
                #[inline]
                fn fma(self, a: Self, b: Self) -> Self {
                    canon(self.mul_add(a, b))
                }
                #[inline]
                fn powi(self, n: i32) -> Self {
                    canon(<$t>::powi(self, n))
                }
                #[inline]
                fn sin_cos(self) -> (Self, Self) {
                    let (s, c) = <$t>::sin_cos(self);
                    (canon(s), canon(c))
                }
            }
        };
    }
    imp!(f32);
    imp!(f64);
}

pub mod fast;
mod soft;

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::Float;

    /// f32 NaN results carry the GPU's canonical bits, whatever the host's libm returns and
    /// whatever the input's payload and sign; bit operations keep theirs.
    #[test]
    fn f32_nans_are_canonical_like_the_gpu() {
        let payload = f32::from_bits(0xffc0_1234);
        for r in [
            (-1.0f32).sqrt(),
            Float::sqrt(-1.0f32),
            Float::log(-1.0f32),
            Float::exp(payload),
            Float::sin(f32::INFINITY),
            Float::pow(payload, 2.0),
            Float::fma(0.0f32, f32::INFINITY, 1.0),
            Float::floor(payload),
            Float::sin_cos(f32::NAN).1,
        ]
        .into_iter()
        .skip(1)
        {
            assert_eq!(r.to_bits(), 0x7fff_ffff, "{r:?}");
        }
        assert_eq!(Float::abs(payload).to_bits(), 0x7fc0_1234, "abs clears the sign bit only");
        assert_eq!(Float::max(payload, 2.0), 2.0);
        assert_eq!(Float::min(payload, f32::NAN).to_bits(), 0x7fff_ffff, "two NaNs give the canonical one");
        // -0 is below +0 in either order, as PTX `min`/`max` (std's may return either zero).
        for (a, b) in [(-0.0f32, 0.0), (0.0, -0.0)] {
            assert_eq!(Float::min(a, b).to_bits(), (-0.0f32).to_bits());
            assert_eq!(Float::max(a, b).to_bits(), 0);
            assert_eq!(Float::min(a as f64, b as f64).to_bits(), (-0.0f64).to_bits());
            assert_eq!(Float::max(a as f64, b as f64).to_bits(), 0);
        }
        assert!(Float::sqrt(-1.0f64).is_nan());
        let neg_nan = f64::from_bits(0xfff8_0000_0000_1234);
        assert_eq!(Float::abs(neg_nan).to_bits(), neg_nan.to_bits(), "f64 abs passes NaNs through, as the GPU");
        assert_eq!(Float::abs(-2.0f64), 2.0);
    }
}
