//! CUDA's fast, approximate `f32` intrinsics (`__expf`, `__logf`, `__sinf`, …): single PTX
//! `.approx` instructions with flush-to-zero of denormals. Errors are a few ulp near 0 and grow
//! with the argument (e.g. `sin`/`cos` are meant for |x| ≲ π·100); use the [`math`](super)
//! functions when accuracy matters. On the host these are the accurate `std` functions.

#[cfg(target_arch = "nvptx64")]
macro_rules! approx {
    ($(#[$doc:meta])* $name:ident, $insn:literal) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name(x: f32) -> f32 {
            let r: f32;
            // SAFETY: a pure arithmetic instruction.
            unsafe { core::arch::asm!(concat!($insn, " {r}, {x};"), r = out(reg32) r, x = in(reg32) x, options(pure, nomem, nostack)) }
            r
        }
    };
}

#[cfg(not(target_arch = "nvptx64"))]
macro_rules! approx {
    ($(#[$doc:meta])* $name:ident, $insn:literal, $host:expr) => {
        $(#[$doc])*
        #[inline]
        pub fn $name(x: f32) -> f32 {
            let f: fn(f32) -> f32 = $host;
            f(x)
        }
    };
}

macro_rules! fast_fns {
    ($($(#[$doc:meta])* $name:ident = $insn:literal, $host:expr;)*) => {$(
        #[cfg(target_arch = "nvptx64")]
        approx!($(#[$doc])* $name, $insn);
        #[cfg(not(target_arch = "nvptx64"))]
        approx!($(#[$doc])* $name, $insn, $host);
    )*};
}

fast_fns! {
    /// `2^x` (PTX `ex2.approx.ftz.f32`, CUDA `exp2f` fast path).
    exp2 = "ex2.approx.ftz.f32", |x| x.exp2();
    /// `log2(x)` (PTX `lg2.approx.ftz.f32`, CUDA `__log2f`).
    log2 = "lg2.approx.ftz.f32", |x| x.log2();
    /// `sin(x)` (PTX `sin.approx.ftz.f32`, CUDA `__sinf`).
    sin = "sin.approx.ftz.f32", |x| x.sin();
    /// `cos(x)` (PTX `cos.approx.ftz.f32`, CUDA `__cosf`).
    cos = "cos.approx.ftz.f32", |x| x.cos();
    /// `1/sqrt(x)` (PTX `rsqrt.approx.ftz.f32`, CUDA `rsqrtf` fast path).
    rsqrt = "rsqrt.approx.ftz.f32", |x| 1.0 / x.sqrt();
    /// `1/x` (PTX `rcp.approx.ftz.f32`, CUDA `__frcp_rn`'s fast cousin).
    rcp = "rcp.approx.ftz.f32", |x| 1.0 / x;
    /// `tanh(x)` (PTX `tanh.approx.f32`, sm_75+).
    tanh = "tanh.approx.f32", |x| x.tanh();
}

/// `e^x` as `2^(x·log2 e)` (CUDA `__expf`).
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    exp2(x * core::f32::consts::LOG2_E)
}

/// `ln(x)` as `log2(x)·ln 2` (CUDA `__logf`).
#[inline(always)]
pub fn log(x: f32) -> f32 {
    log2(x) * core::f32::consts::LN_2
}

/// `tan(x)` as `sin/cos` (CUDA `__tanf`).
#[inline(always)]
pub fn tan(x: f32) -> f32 {
    sin(x) / cos(x)
}

/// `x/y` via the reciprocal (CUDA `__fdividef`).
#[inline(always)]
pub fn div(x: f32, y: f32) -> f32 {
    x * rcp(y)
}

/// `x^y` as `2^(y·log2 x)` for `x > 0` (CUDA `__powf`).
#[inline(always)]
pub fn pow(x: f32, y: f32) -> f32 {
    exp2(y * log2(x))
}
