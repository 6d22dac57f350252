//! 16-bit floats and TF32: [`Bf16`], [`F16`] and [`Tf32`], the element types of the tensor-core
//! operations ([`tensor`](super::tensor)).
//!
//! Each is a `#[repr(transparent)]` wrapper of its bits, so a `&[Bf16]` kernel input is a
//! `CudaSlice<Bf16>` on the host and holds exactly what PyTorch's `torch.bfloat16` (or CUDA's
//! `__nv_bfloat16`) holds. Conversions are done in software, identically on the GPU and on the
//! CPU executor: from `f32` they round to nearest, ties to even ([`Tf32`]: ties away from zero,
//! as `cvt.rna.tf32.f32`); to `f32` they are exact.

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
float_traits!(Bf16, F16, Tf32);

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
}
