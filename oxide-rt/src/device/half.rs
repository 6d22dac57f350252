//! 16-bit floats, TF32 and 8-bit floats: [`Bf16`], [`F16`], [`Tf32`], [`E4M3`] and [`E5M2`], the
//! element types of the tensor-core operations ([`tensor`](super::tensor),
//! [`wgmma`](super::wgmma)).
//!
//! Each is a `#[repr(transparent)]` wrapper of its bits, so a `&[Bf16]` kernel input is a
//! `CudaSlice<Bf16>` on the host and holds exactly what PyTorch's `torch.bfloat16` (or CUDA's
//! `__nv_bfloat16`) holds. Conversions are done in software, identically on the GPU and on the
//! CPU executor: from `f32` they round to nearest, ties to even ([`Tf32`]: ties away from zero,
//! as `cvt.rna.tf32.f32`; the 8-bit floats saturate to their largest finite value, as
//! `cvt.rn.satfinite.{e4m3,e5m2}x2.f32`); to `f32` they are exact.

/// bfloat16: 1 sign bit, 8 exponent bits, 7 mantissa bits (the upper half of an `f32`).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Bf16(pub u16);

/// IEEE 754 binary16: 1 sign bit, 5 exponent bits, 10 mantissa bits.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct F16(pub u16);

/// TensorFloat-32: an `f32` whose low 13 mantissa bits are zero (8 exponent bits, 10 mantissa
/// bits), the input type of `mma.sync.m16n8k8.tf32`.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Tf32(pub u32);

/// FP8 E4M3 (the OCP "FN" variant, PyTorch's `torch.float8_e4m3fn`, CUDA's `__nv_fp8_e4m3`): 1
/// sign bit, 4 exponent bits (bias 7), 3 mantissa bits; no infinities, NaN is `S.1111.111`, the
/// largest finite value 448.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct E4M3(pub u8);

/// FP8 E5M2 (PyTorch's `torch.float8_e5m2`, CUDA's `__nv_fp8_e5m2`): 1 sign bit, 5 exponent bits
/// (bias 15), 2 mantissa bits, IEEE-style infinities and NaNs; the largest finite value 57344.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct E5M2(pub u8);

impl Bf16 {
    /// `x` rounded to the nearest bfloat16 (ties to even); NaN stays NaN.
    #[inline(always)]
    pub const fn from_f32(x: f32) -> Bf16 {
        let bits = x.to_bits();
        if x.is_nan() {
            return Bf16(((bits >> 16) as u16) | 0x40);
        }
        let round = 0x7fff + ((bits >> 16) & 1);
        Bf16((bits.wrapping_add(round) >> 16) as u16)
    }

    /// The exact `f32` value.
    #[inline(always)]
    pub const fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }

    /// The raw bits.
    #[inline(always)]
    pub const fn to_bits(self) -> u16 {
        self.0
    }
}

impl F16 {
    /// `x` rounded to the nearest binary16 (ties to even): overflow gives ±infinity, tiny values
    /// subnormals or ±0; NaN stays NaN.
    #[inline(always)]
    pub const fn from_f32(x: f32) -> F16 {
        let bits = x.to_bits();
        let sign = ((bits >> 16) & 0x8000) as u16;
        let exp = ((bits >> 23) & 0xff) as i32;
        let man = bits & 0x7f_ffff;
        if exp == 0xff {
            // Infinity, or NaN with a quiet bit so it stays NaN after the shift.
            let nan = if man != 0 { 0x200 } else { 0 };
            return F16(sign | 0x7c00 | nan | (man >> 13) as u16);
        }
        let e = exp - 127 + 15;
        if e >= 0x1f {
            return F16(sign | 0x7c00);
        }
        if e <= 0 {
            // Subnormal (or zero): the mantissa with its implicit bit, shifted right by 14 - e.
            if e < -10 {
                return F16(sign);
            }
            let full = man | 0x80_0000;
            let shift = (14 - e) as u32;
            let half = 1u32 << (shift - 1);
            let rest = full & ((1u32 << shift) - 1);
            let mut v = full >> shift;
            if rest > half || (rest == half && v & 1 == 1) {
                v += 1;
            }
            return F16(sign | v as u16);
        }
        let rest = man & 0x1fff;
        let mut v = ((e as u32) << 10) | (man >> 13);
        if rest > 0x1000 || (rest == 0x1000 && v & 1 == 1) {
            // A carry into the exponent is right, up to infinity.
            v += 1;
        }
        F16(sign | v as u16)
    }

    /// The exact `f32` value.
    #[inline(always)]
    pub const fn to_f32(self) -> f32 {
        let h = self.0 as u32;
        let sign = (h & 0x8000) << 16;
        let exp = (h >> 10) & 0x1f;
        let man = h & 0x3ff;
        let bits = if exp == 0x1f {
            sign | 0x7f80_0000 | (man << 13)
        } else if exp != 0 {
            sign | ((exp + 127 - 15) << 23) | (man << 13)
        } else if man == 0 {
            sign
        } else {
            // Subnormal: normalise the mantissa.
            let lead = man.leading_zeros() - 22; // zeros above bit 9 of the 10-bit field
            let m = (man << (lead + 1)) & 0x3ff;
            sign | ((127 - 15 - lead) << 23) | (m << 13)
        };
        f32::from_bits(bits)
    }

    /// The raw bits.
    #[inline(always)]
    pub const fn to_bits(self) -> u16 {
        self.0
    }
}

impl Tf32 {
    /// `x` rounded to the nearest TF32 (ties away from zero, as `cvt.rna.tf32.f32`); NaN and
    /// infinities stay as they are.
    #[inline(always)]
    pub const fn from_f32(x: f32) -> Tf32 {
        let bits = x.to_bits();
        if (bits & 0x7f80_0000) == 0x7f80_0000 {
            return Tf32(bits);
        }
        Tf32(bits.wrapping_add(0x1000) & !0x1fff)
    }

    /// The exact `f32` value (the low 13 mantissa bits cleared, as the tensor cores read it).
    #[inline(always)]
    pub const fn to_f32(self) -> f32 {
        f32::from_bits(self.0 & !0x1fff)
    }
}

/// `x` rounded to nearest (ties to even) in an 8-bit float with `m` mantissa bits and exponent
/// bias `bias`: magnitudes past `max` (the largest finite encoding, sign bit clear) and
/// infinities give `max`, NaN gives `nan`.
#[inline(always)]
const fn fp8_from_f32(x: f32, m: u32, bias: i32, max: u32, nan: u8) -> u8 {
    let bits = x.to_bits();
    let sign = ((bits >> 24) & 0x80) as u8;
    if x.is_nan() {
        return sign | nan;
    }
    let exp = ((bits >> 23) & 0xff) as i32;
    if exp == 0xff {
        return sign | max as u8;
    }
    let man = bits & 0x7f_ffff;
    let e = exp - 127 + bias;
    let (mut v, rest, half) = if e <= 0 {
        // Subnormal in the target (f32 subnormals are far below its smallest step): the
        // mantissa with its implicit bit, in units of the target's smallest step.
        let shift = (24 - m as i32 - e) as u32;
        if exp == 0 || shift > 24 {
            return sign;
        }
        let full = man | 0x80_0000;
        (full >> shift, full & ((1 << shift) - 1), 1u32 << (shift - 1))
    } else {
        let shift = 23 - m;
        (((e as u32) << m) | (man >> shift), man & ((1 << shift) - 1), 1u32 << (shift - 1))
    };
    if rest > half || (rest == half && v & 1 == 1) {
        // A carry into the exponent is right.
        v += 1;
    }
    if v > max {
        v = max;
    }
    sign | v as u8
}

/// The exact `f32` value of 8-bit float `b` with `m` mantissa bits and bias `bias`; `nan` and
/// `inf` tell whether `b` is a NaN or an infinity of its format.
#[inline(always)]
const fn fp8_to_f32(b: u8, m: u32, bias: i32, nan: bool, inf: bool) -> f32 {
    let sign = ((b & 0x80) as u32) << 24;
    if nan {
        return f32::from_bits(sign | 0x7fc0_0000);
    }
    if inf {
        return f32::from_bits(sign | 0x7f80_0000);
    }
    let exp = ((b & 0x7f) >> m) as i32;
    let man = (b as u32) & ((1 << m) - 1);
    let bits = if exp != 0 {
        sign | (((exp - bias + 127) as u32) << 23) | (man << (23 - m))
    } else if man == 0 {
        sign
    } else {
        // Subnormal: man * 2^(1 - bias - m), normalised.
        let lead = 31 - man.leading_zeros(); // the highest set bit
        let frac = (man ^ (1 << lead)) << (23 - lead);
        sign | (((1 - bias - m as i32 + lead as i32 + 127) as u32) << 23) | frac
    };
    f32::from_bits(bits)
}

impl E4M3 {
    /// The largest finite value.
    pub const MAX: f32 = 448.0;

    /// `x` rounded to the nearest E4M3 (ties to even); beyond ±448 (infinities included) it
    /// saturates to ±448; NaN stays NaN.
    #[inline(always)]
    pub const fn from_f32(x: f32) -> E4M3 {
        E4M3(fp8_from_f32(x, 3, 7, 0x7e, 0x7f))
    }

    /// The exact `f32` value.
    #[inline(always)]
    pub const fn to_f32(self) -> f32 {
        fp8_to_f32(self.0, 3, 7, self.0 & 0x7f == 0x7f, false)
    }

    /// The raw bits.
    #[inline(always)]
    pub const fn to_bits(self) -> u8 {
        self.0
    }
}

impl E5M2 {
    /// The largest finite value.
    pub const MAX: f32 = 57344.0;

    /// `x` rounded to the nearest E5M2 (ties to even); beyond ±57344 (infinities included) it
    /// saturates to ±57344; NaN stays NaN.
    #[inline(always)]
    pub const fn from_f32(x: f32) -> E5M2 {
        E5M2(fp8_from_f32(x, 2, 15, 0x7b, 0x7e))
    }

    /// The exact `f32` value.
    #[inline(always)]
    pub const fn to_f32(self) -> f32 {
        fp8_to_f32(self.0, 2, 15, self.0 & 0x7f > 0x7c, self.0 & 0x7f == 0x7c)
    }

    /// The raw bits.
    #[inline(always)]
    pub const fn to_bits(self) -> u8 {
        self.0
    }
}

macro_rules! float_traits {
    ($($t:ident),*) => {$(
        impl From<$t> for f32 {
            #[inline(always)]
            fn from(v: $t) -> f32 {
                v.to_f32()
            }
        }
        impl From<f32> for $t {
            #[inline(always)]
            fn from(v: f32) -> $t {
                $t::from_f32(v)
            }
        }
        impl core::fmt::Debug for $t {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Debug::fmt(&self.to_f32(), f)
            }
        }
        impl core::fmt::Display for $t {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Display::fmt(&self.to_f32(), f)
            }
        }
        // SAFETY: a transparent wrapper of an integer: plain data, every bit pattern valid, the same layout on the host and nvptx64, no interior mutability.
        unsafe impl crate::KernelArg for $t {}
        // SAFETY: `#[repr(transparent)]` over an integer, which cudarc passes by value; any bits are a valid value.
        #[cfg(not(target_arch = "nvptx64"))]
        unsafe impl cudarc::driver::DeviceRepr for $t {}
        // SAFETY: all-zero bits are +0.0.
        #[cfg(not(target_arch = "nvptx64"))]
        unsafe impl cudarc::driver::ValidAsZeroBits for $t {}
    )*};
}
float_traits!(Bf16, F16, Tf32, E4M3, E5M2);

#[cfg(test)]
mod tests {
    use super::*;

    /// Nearest representable value by brute force over every 16-bit pattern (ties: even bits).
    fn nearest<T: Copy>(x: f32, all: &[(u16, f32)], make: impl Fn(u16) -> T) -> T {
        let mut best = all[0];
        for &(b, v) in all {
            let (d, bd) = ((v as f64 - x as f64).abs(), (best.1 as f64 - x as f64).abs());
            if d < bd || (d == bd && b & 1 == 0 && best.0 & 1 == 1) {
                best = (b, v);
            }
        }
        make(best.0)
    }

    #[test]
    fn f16_to_f32_matches_the_definition() {
        for h in 0..=u16::MAX {
            let (s, e, m) = ((h >> 15) as i32, ((h >> 10) & 0x1f) as i32, (h & 0x3ff) as f64);
            let v = F16(h).to_f32();
            let sign = if s == 1 { -1.0 } else { 1.0 };
            match e {
                0x1f if m == 0.0 => assert_eq!(v as f64, sign * f64::INFINITY),
                0x1f => assert!(v.is_nan()),
                0 => assert_eq!(v as f64, sign * m / 1024.0 * 2f64.powi(-14), "{h:#x}"),
                _ => assert_eq!(v as f64, sign * (1.0 + m / 1024.0) * 2f64.powi(e - 15), "{h:#x}"),
            }
        }
    }

    #[test]
    fn f32_to_f16_and_bf16_round_to_nearest_even() {
        let finite16: Vec<(u16, f32)> =
            (0..=u16::MAX).map(|h| (h, F16(h).to_f32())).filter(|(_, v)| v.is_finite()).collect();
        let finite_bf: Vec<(u16, f32)> =
            (0..=u16::MAX).map(|h| (h, Bf16(h).to_f32())).filter(|(_, v)| v.is_finite()).collect();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut samples = vec![0.0f32, -0.0, 1.0, 65504.0, 65519.0, 6.1e-5, 5.96e-8, 2.98e-8, 1.0 + 1.0 / 2048.0];
        for _ in 0..300 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let exp = (state >> 40) % 40;
            let v = f32::from_bits(((state as u32) & 0x807f_ffff) | (((exp as u32) + 100) << 23));
            samples.push(v);
        }
        for x in samples {
            if x.abs() < 65504.0 {
                assert_eq!(F16::from_f32(x).to_f32(), nearest(x, &finite16, F16).to_f32(), "f16 of {x:e}");
            }
            assert_eq!(Bf16::from_f32(x).to_f32(), nearest(x, &finite_bf, Bf16).to_f32(), "bf16 of {x:e}");
            assert_eq!(Bf16::from_f32(x).to_f32().to_bits() & 0xffff, 0);
            let t = Tf32::from_f32(x).to_f32();
            assert!((t as f64 - x as f64).abs() <= (x.abs() as f64) * 2f64.powi(-11), "tf32 of {x:e}: {t:e}");
        }
        assert_eq!(F16::from_f32(1e6).to_f32(), f32::INFINITY);
        assert!(F16::from_f32(f32::NAN).to_f32().is_nan());
        assert!(Bf16::from_f32(f32::NAN).to_f32().is_nan());
    }

    /// Every 8-bit pattern against the format's definition: `(-1)^s 2^(e - bias) (1 + m / 2^M)`,
    /// subnormals `2^(1 - bias) m / 2^M`, and the special values.
    #[test]
    fn fp8_to_f32_matches_the_definition() {
        for b in 0..=u8::MAX {
            let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
            let (e, m) = (((b >> 3) & 0xf) as i32, (b & 7) as f64);
            let v = E4M3(b).to_f32();
            match e {
                0xf if m == 7.0 => assert!(v.is_nan(), "e4m3 {b:#x}"),
                0 => assert_eq!(v as f64, sign * m / 8.0 * 2f64.powi(-6), "e4m3 {b:#x}"),
                _ => assert_eq!(v as f64, sign * (1.0 + m / 8.0) * 2f64.powi(e - 7), "e4m3 {b:#x}"),
            }
            let (e, m) = (((b >> 2) & 0x1f) as i32, (b & 3) as f64);
            let v = E5M2(b).to_f32();
            match e {
                0x1f if m == 0.0 => assert_eq!(v as f64, sign * f64::INFINITY, "e5m2 {b:#x}"),
                0x1f => assert!(v.is_nan(), "e5m2 {b:#x}"),
                0 => assert_eq!(v as f64, sign * m / 4.0 * 2f64.powi(-14), "e5m2 {b:#x}"),
                _ => assert_eq!(v as f64, sign * (1.0 + m / 4.0) * 2f64.powi(e - 15), "e5m2 {b:#x}"),
            }
        }
        assert_eq!(E4M3(0x7e).to_f32(), E4M3::MAX);
        assert_eq!(E5M2(0x7b).to_f32(), E5M2::MAX);
    }

    /// Rounding to the nearest finite value (ties to the even pattern) by brute force over every
    /// finite pattern, at every value halfway between neighbours and around them; saturation.
    #[test]
    fn f32_to_fp8_rounds_to_nearest_even_and_saturates() {
        fn check(name: &str, to: fn(f32) -> u8, back: fn(u8) -> f32, max: f32) {
            let finite: Vec<(u16, f32)> =
                (0..=255u16).map(|b| (b, back(b as u8))).filter(|(_, v)| v.is_finite()).collect();
            let mut values: Vec<f32> = finite.iter().map(|p| p.1).collect();
            values.sort_by(f32::total_cmp);
            let mut samples = vec![0.0f32, 1e-30, -1e-30, 3.0e-3, 0.1, 1.0 / 3.0, 7.77];
            for w in values.windows(2).filter(|w| w[0] != w[1]) {
                let mid = ((w[0] as f64 + w[1] as f64) / 2.0) as f32;
                if mid == 0.0 {
                    continue;
                }
                samples.extend([mid, f32::from_bits(mid.to_bits() + 1), f32::from_bits(mid.to_bits() - 1)]);
            }
            for x in samples.into_iter().filter(|x| x.abs() <= max) {
                let want = nearest(x, &finite, |b| b);
                assert_eq!(back(to(x)), back(want as u8), "{name} of {x:e}");
            }
            for x in [max * 1.01, 1e30, f32::INFINITY] {
                assert_eq!(back(to(x)), max, "{name} of {x:e}");
                assert_eq!(back(to(-x)), -max, "{name} of -{x:e}");
            }
            assert!(back(to(f32::NAN)).is_nan(), "{name} of NaN");
        }
        check("e4m3", |x| E4M3::from_f32(x).0, |b| E4M3(b).to_f32(), E4M3::MAX);
        check("e5m2", |x| E5M2::from_f32(x).0, |b| E5M2(b).to_f32(), E5M2::MAX);
    }
}
