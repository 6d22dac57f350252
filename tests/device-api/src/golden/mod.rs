//! The golden set: every device-API operation over edge-case and random inputs (fixed seed),
//! run on the GPU and on the CPU executor, with the error bound each operation is held to.
//!
//! The kernels are `kernels::golden_*`, each running the operation its `op` argument selects;
//! the tables here name those operations in the kernels' order and carry their bounds. The GPU
//! test (`tests/gpu.rs`, `golden_agreement_table`) compares the two executors and prints the
//! agreement table; the CPU test (`tests/cpu.rs`, `golden_cpu_against_reference`) holds the CPU
//! executor to the same bounds against plain Rust (`std`) references, so CI checks the CPU side.
//!
//! # Bounds
//!
//! One place for all of them: [`FLOAT_OPS`], [`FAST_OPS`] and the exact-by-construction tables.
//! - Functions backed by libdevice are held to the maximum ulp error CUDA documents for them
//!   (CUDA C++ Programming Guide, "Mathematical Functions", single and double precision), plus
//!   the host's own error ([`Op::host`]: glibc's libm, or oxide's `soft` `erf`/`erfc`).
//! - The `fast` intrinsics are held to CUDA's bounds for `__expf`, `__logf`, `__sinf`, … ("Intrinsic
//!   Functions") or the PTX ISA's for the `.approx` instructions, inside the input domain those
//!   bounds are documented for (normal inputs and results: the instructions flush denormals).
//! - Rounding functions, `abs`, `copysign`, `fma`, `sqrt`, the arithmetic operators,
//!   conversions, warp operations, bit operations and integer atomics are bit-exact; `min` and
//!   `max` too, but for the sign of a zero from `(-0, +0)`, which C's `fmin`/`fmax` leave open
//!   (the CPU executor puts -0 below +0, as IEEE 754-2019).
//! - Float atomic sums may add in any order: `|gpu - cpu| <= 2 (n - 1) eps sum |x|`.
//!
//! NaN against NaN agrees only when the bits agree; payload differences are counted apart
//! ([`Nan`]) and fail only operations marked [`Nan::Same`]: the f32 math functions, whose NaNs
//! are the canonical `0x7fffffff` on both sides (the CUDA Programming Guide, "Floating-Point
//! Standard": every single-precision operation on NaNs gives it), and f64 `abs`, which passes
//! NaNs through unchanged on both. The plain operators and `as` casts on the host keep the x86
//! payloads (a quieted input, or `0xffc00000` for a new NaN); the other f64 NaNs and f32 `abs`
//! and `copysign` have not been compared on a GPU yet: their NaN payloads are reported, not held.
//!
//! Run on a GPU: `OXIDE_REQUIRE_GPU=1 OXIDE_GOLDEN_TABLE=golden.md cargo test -p device-api
//! --test gpu golden` (ci/gpu-check.sh does, writing `<out>/golden.md`).

use crate::kernels::GOLDEN_MATH_OPS;

/// How far the GPU and the CPU may differ on one result, on top of the host's own error
/// ([`Op::host`], in ulp).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// Bit-exact.
    Exact,
    /// Exact but for the sign of a zero, which C's `fmin`/`fmax` (CUDA's `fminf`, 0 ulp) leave
    /// open for `(-0, +0)`.
    ExactZeroSignOpen,
    /// CUDA documents at most this many ulp of error.
    Ulp(u64),
    /// CUDA's `2 + floor(k |x|)` ulp (`__expf`: k = 1.173).
    UlpGrowing(f64),
    /// An absolute error inside `[lo, hi]` (of the first input), else this many ulp.
    AbsIn { abs: f64, lo: f64, hi: f64, ulp: u64 },
    /// A relative error, as ulp of f32: `ceil(r · 2^24)` (an f32 ulp is at least `2^-24` of
    /// the value).
    Rel(f64),
}

impl Bound {
    /// Whether `got` is close enough to `want`: `x` is the first input, `ulp` their distance,
    /// `host` the host's own error in ulp.
    fn admits(self, host: u64, x: f64, want: f64, got: f64, ulp: u64) -> bool {
        match self {
            Bound::Exact => ulp == 0,
            Bound::ExactZeroSignOpen => ulp == 0 || (want == 0.0 && got == 0.0),
            Bound::Ulp(n) => ulp <= n + host,
            Bound::UlpGrowing(k) => ulp <= 2 + (k * x.abs()).floor() as u64 + host,
            Bound::AbsIn { abs, lo, hi, ulp: n } => {
                ulp <= n + host || (lo <= x && x <= hi && (got - want).abs() <= abs)
            }
            Bound::Rel(r) => ulp <= (r * (1u64 << 24) as f64).ceil() as u64 + host,
        }
    }

    fn describe(self, host: u64) -> String {
        let host = if host == 0 { String::new() } else { format!(" + {host} (host)") };
        match self {
            Bound::Exact => "exact".into(),
            Bound::ExactZeroSignOpen => "exact, ±0 open".into(),
            Bound::Ulp(n) => format!("{n} ulp{host}"),
            Bound::UlpGrowing(k) => format!("2 + ⌊{k}·\\|x\\|⌋ ulp{host}"),
            Bound::AbsIn { abs, lo, hi, ulp } => {
                format!("abs 2^{:.2} on [{lo:.3}, {hi:.3}], else {ulp} ulp{host}", abs.log2())
            }
            Bound::Rel(r) => format!("rel 2^{:.2}{host}", r.log2()),
        }
    }
}

/// What a NaN against a NaN of other bits counts as.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Nan {
    /// A violation: both sides produce the same NaN bits.
    Same,
    /// Reported, allowed: the host keeps payloads the GPU canonicalises.
    PayloadMayDiffer,
}

/// One operation of the golden set.
#[derive(Clone, Copy, Debug)]
pub struct Op {
    pub name: &'static str,
    pub bound: Bound,
    pub nan: Nan,
    /// The host implementation's own error in ulp, allowed on top of `bound`: 1 for glibc's
    /// functions (f32 and f64) unless measured higher (glibc 2.36 against 120-bit mpmath:
    /// f64 cbrt 3, tanh 2, erfc 2), 0 for exact operations.
    pub host: u64,
}

impl Op {
    /// The bound as the table prints it.
    pub fn describe(&self) -> String {
        self.bound.describe(self.host) + if self.nan == Nan::Same { "" } else { "; NaN payloads may differ" }
    }

    /// Whether `got` is within this operation's bound of `want` (`x`: the first input, `ulp`:
    /// their distance).
    pub fn admits(&self, x: f64, want: f64, got: f64, ulp: u64) -> bool {
        self.bound.admits(self.host, x, want, got, ulp)
    }

    const fn with_host(self, host: u64) -> Op {
        Op { host, ..self }
    }

    const fn nan_may_differ(self) -> Op {
        Op { nan: Nan::PayloadMayDiffer, ..self }
    }
}

/// An operation whose NaNs must agree bit for bit; 1 ulp of host error unless exact.
const fn op(name: &'static str, bound: Bound) -> Op {
    let host = match bound {
        Bound::Exact | Bound::ExactZeroSignOpen => 0,
        _ => 1,
    };
    Op { name, bound, nan: Nan::Same, host }
}

/// An operation whose NaN payloads may differ (reported apart).
const fn op_nan(name: &'static str, bound: Bound) -> Op {
    op(name, bound).nan_may_differ()
}

use Bound::{Exact, ExactZeroSignOpen, Ulp};

/// `kernels::golden_math`'s operations: `(f32 op, f64 op)` with CUDA's documented ulp bounds.
/// f64 NaN payloads may differ: the CPU leaves f64 NaNs as the host makes them (quieted input
/// payloads, `0xfff8000000000000` for new ones), unchecked against the GPU so far.
pub const FLOAT_OPS: [(Op, Op); GOLDEN_MATH_OPS as usize] = [
    (op("sqrt", Exact), op_nan("sqrt", Exact)),
    (op("rsqrt", Ulp(2)), op_nan("rsqrt", Ulp(1))),
    (op("cbrt", Ulp(1)), op_nan("cbrt", Ulp(1)).with_host(3)),
    (op("exp", Ulp(2)), op_nan("exp", Ulp(1))),
    (op("exp2", Ulp(2)), op_nan("exp2", Ulp(1))),
    (op("exp10", Ulp(2)), op_nan("exp10", Ulp(1))),
    (op("expm1", Ulp(1)), op_nan("expm1", Ulp(1))),
    (op("log", Ulp(1)), op_nan("log", Ulp(1))),
    (op("log2", Ulp(1)), op_nan("log2", Ulp(1))),
    (op("log10", Ulp(2)), op_nan("log10", Ulp(1))),
    (op("log1p", Ulp(1)), op_nan("log1p", Ulp(1))),
    (op("sin", Ulp(2)), op_nan("sin", Ulp(2))),
    (op("cos", Ulp(2)), op_nan("cos", Ulp(2))),
    (op("tan", Ulp(4)), op_nan("tan", Ulp(2))),
    (op("asin", Ulp(2)), op_nan("asin", Ulp(2))),
    (op("acos", Ulp(2)), op_nan("acos", Ulp(2))),
    (op("atan", Ulp(2)), op_nan("atan", Ulp(2))),
    (op("sinh", Ulp(3)), op_nan("sinh", Ulp(2)).with_host(2)),
    (op("cosh", Ulp(2)), op_nan("cosh", Ulp(1)).with_host(2)),
    (op("tanh", Ulp(2)), op_nan("tanh", Ulp(1)).with_host(2)),
    (op("erf", Ulp(2)), op_nan("erf", Ulp(2))),
    (op("erfc", Ulp(4)), op_nan("erfc", Ulp(5)).with_host(2)),
    (op("floor", Exact), op_nan("floor", Exact)),
    (op("ceil", Exact), op_nan("ceil", Exact)),
    (op("round", Exact), op_nan("round", Exact)),
    (op("trunc", Exact), op_nan("trunc", Exact)),
    // f32 abs and copysign: whether the GPU keeps a NaN's payload has not been seen yet (the
    // CPU keeps it). f64 abs passes NaNs through with their sign, quieted (measured on the H200;
    // the CPU does the same).
    (op_nan("abs", Exact), op("abs", Exact)),
    // f32 pow: 4 ulp (CUDA). It measured 15 on the H200 while llc fused libdevice's own
    // multiplies and adds (`--fp-contract=fast`); since only the kernels' code is fused
    // (`oxide-build/src/ir/contractable_ops.rs`) it is 1.
    (op("pow", Ulp(4)), op_nan("pow", Ulp(2))),
    (op("atan2", Ulp(3)), op_nan("atan2", Ulp(2))),
    (op("hypot", Ulp(3)), op_nan("hypot", Ulp(2))),
    // Two f32 NaNs give the canonical one (PTX `min`/`max`, and every f32 operation on NaNs).
    (op("min", ExactZeroSignOpen), op_nan("min", ExactZeroSignOpen)),
    (op("max", ExactZeroSignOpen), op_nan("max", ExactZeroSignOpen)),
    (op_nan("copysign", Exact), op_nan("copysign", Exact)),
    (op("fma", Exact), op_nan("fma", Exact)),
    // libdevice's powi squares and multiplies as compiler-builtins' `__powisf2` does (the same
    // products, so bit-exact in practice); CUDA documents no bound for it, pow's is used.
    (op("powi", Ulp(4)), op_nan("powi", Ulp(2))),
    (op("sin_cos.0", Ulp(2)), op_nan("sin_cos.0", Ulp(2))),
    (op("sin_cos.1", Ulp(2)), op_nan("sin_cos.1", Ulp(2))),
    (op_nan("x + y", Exact), op_nan("x + y", Exact)),
    (op_nan("x - y", Exact), op_nan("x - y", Exact)),
    (op_nan("x * y", Exact), op_nan("x * y", Exact)),
    (op_nan("x / y", Exact), op_nan("x / y", Exact)),
    // f64 negation passes a NaN through unchanged on the GPU (CUDA Programming Guide); the
    // host flips its sign.
    (op_nan("-x", Exact), op_nan("-x", Exact)),
];

const PI: f64 = std::f64::consts::PI;

/// `kernels::golden_fast`'s operations (f32), with the documented bounds and the input domain
/// they hold on (`FAST_DOMAINS`).
pub const FAST_OPS: [Op; 12] = [
    // PTX ISA `ex2.approx`: 2 ulp over the full range.
    op_nan("fast::exp2", Ulp(2)),
    // CUDA `__log2f`: absolute 2^-22 on [0.5, 2], else 2 ulp.
    op_nan("fast::log2", Bound::AbsIn { abs: 2.384185791015625e-7, lo: 0.5, hi: 2.0, ulp: 2 }),
    // CUDA `__sinf` / `__cosf`: absolute 2^-21.41 / 2^-21.19 on [-pi, pi].
    op_nan("fast::sin", Bound::AbsIn { abs: 3.5908301e-7, lo: -PI, hi: PI, ulp: 2 }),
    op_nan("fast::cos", Bound::AbsIn { abs: 4.1804312e-7, lo: -PI, hi: PI, ulp: 2 }),
    // PTX ISA `rsqrt.approx.f32`: relative 2^-22.9; `rcp.approx.f32`: 1 ulp.
    op_nan("fast::rsqrt", Bound::Rel(1.2781e-7)),
    op_nan("fast::rcp", Ulp(1)),
    // PTX ISA `tanh.approx.f32`: relative 2^-10.987.
    op_nan("fast::tanh", Bound::Rel(4.96e-4)),
    // CUDA `__expf`: 2 + floor(1.173 |x|) ulp; `__logf`: absolute 2^-21.41 on [0.5, 2], else 3 ulp.
    op_nan("fast::exp", Bound::UlpGrowing(1.173)),
    op_nan("fast::log", Bound::AbsIn { abs: 3.5908301e-7, lo: 0.5, hi: 2.0, ulp: 3 }),
    // CUDA `__tanf` = `__sinf / __cosf`: on |x| <= pi/4, cos >= 0.7 scales both absolute errors.
    op_nan("fast::tan", Bound::AbsIn { abs: 1.3e-6, lo: -PI / 4.0, hi: PI / 4.0, ulp: 4 }),
    // CUDA `__fdividef`: 2 ulp for 2^-126 <= |y| <= 2^126.
    op_nan("fast::div", Ulp(2)),
    // CUDA `__powf` = exp2(y · __log2f(x)): for x in [0.5, 2] and |y| <= 8, ln 2 (8 · 2^-22 + the
    // product's 2^-21) + ex2's 2 ulp.
    op_nan("fast::pow", Bound::Rel(2.5e-6)),
];

/// The input domain of each fast operation: `(a range, b range)`, on which its bound holds
/// (normal inputs and results: the `.approx.ftz` instructions flush denormals).
pub const FAST_DOMAINS: [((f64, f64), (f64, f64)); 12] = [
    ((-125.0, 127.0), (1.0, 1.0)),
    ((1.2e-38, 3.0e38), (1.0, 1.0)),
    ((-PI, PI), (1.0, 1.0)),
    ((-PI, PI), (1.0, 1.0)),
    ((1.2e-38, 3.0e38), (1.0, 1.0)),
    ((1.2e-38, 8.0e37), (1.0, 1.0)),
    ((-20.0, 20.0), (1.0, 1.0)),
    ((-87.0, 88.0), (1.0, 1.0)),
    ((1.2e-38, 3.0e38), (1.0, 1.0)),
    ((-PI / 4.0, PI / 4.0), (1.0, 1.0)),
    ((-1e30, 1e30), (1.2e-38, 8.0e37)),
    ((0.5, 2.0), (-8.0, 8.0)),
];

/// `kernels::golden_conv`'s conversions; all bit-exact (Rust's saturating `as` everywhere).
pub const CONV_OPS: [Op; 26] = [
    op("f32 as i8", Exact),
    op("f32 as u8", Exact),
    op("f32 as i16", Exact),
    op("f32 as u16", Exact),
    op("f32 as i32", Exact),
    op("f32 as u32", Exact),
    op("f32 as i64", Exact),
    op("f32 as u64", Exact),
    op("f64 as i8", Exact),
    op("f64 as u8", Exact),
    op("f64 as i16", Exact),
    op("f64 as u16", Exact),
    op("f64 as i32", Exact),
    op("f64 as u32", Exact),
    op("f64 as i64", Exact),
    op("f64 as u64", Exact),
    op_nan("f32 as f64", Exact),
    op_nan("f64 as f32", Exact),
    op("i32 as f32", Exact),
    op("u32 as f32", Exact),
    op("i64 as f32", Exact),
    op("u64 as f32", Exact),
    op("i32 as f64", Exact),
    op("u32 as f64", Exact),
    op("i64 as f64", Exact),
    op("u64 as f64", Exact),
];

/// `kernels::golden_warp`'s operations; all bit-exact.
pub const WARP_OPS: [&str; 23] = [
    "shfl idx u32",
    "shfl up u32",
    "shfl down u32",
    "shfl xor u32",
    "shfl idx u64",
    "shfl up u64",
    "shfl down u64",
    "shfl xor u64",
    "shfl idx f32",
    "shfl up f32",
    "shfl down f32",
    "shfl xor f32",
    "shfl idx f64",
    "shfl up f64",
    "shfl down f64",
    "shfl xor f64",
    "ballot",
    "all",
    "any",
    "ballot/all/any, partial mask",
    "reduce_add_u32",
    "reduce_add_f32",
    "active_mask",
];

/// `kernels::golden_bits`' operations; all bit-exact.
pub const BIT_OPS: [&str; 24] = [
    "popc u32",
    "clz u32",
    "brev u32",
    "ffs u32",
    "popc i32",
    "clz i32",
    "brev i32",
    "ffs i32",
    "popc u64",
    "clz u64",
    "brev u64",
    "ffs u64",
    "popc i64",
    "clz i64",
    "brev i64",
    "ffs i64",
    "trailing_zeros u32",
    "trailing_zeros u64",
    "rotate_left u32",
    "swap_bytes u64",
    "wrapping_shl u32",
    "wrapping_shr i32",
    "wrapping_shr u64",
    "mul_hi u32",
];

/// The integer accumulators of `kernels::golden_atomics`: `(name, array, slot)` with arrays
/// 0 = u32, 1 = i32, 2 = u64, 3 = i64; all bit-exact (every order gives the same result).
pub const ATOMIC_INT_OPS: [(&str, usize, usize); 20] = [
    ("atomic_add u32", 0, 0),
    ("atomic_min u32", 0, 1),
    ("atomic_max u32", 0, 2),
    ("atomic_and u32", 0, 3),
    ("shared atomic_add u32, then global", 0, 4),
    ("atomic_or u32", 0, 5),
    ("atomic_xor u32", 0, 6),
    ("atomic_add i32", 1, 0),
    ("atomic_min i32", 1, 1),
    ("atomic_max i32", 1, 2),
    ("atomic_add u64", 2, 0),
    ("atomic_min u64", 2, 1),
    ("atomic_max u64", 2, 2),
    ("atomic_and u64", 2, 3),
    ("atomic_or u64", 2, 4),
    ("atomic_xor u64", 2, 5),
    ("atomic_sub u64", 2, 6),
    ("atomic_add i64", 3, 0),
    ("atomic_min i64", 3, 1),
    ("atomic_max i64", 3, 2),
];

/// Slots of each accumulator array of `golden_atomics` (u32, i32, u64, i64, f32, f64).
pub const ATOMIC_SLOTS: [usize; 6] = [7, 3, 7, 3, 2, 1];

/// Threads per `golden_atomics` launch, and launches (each with new inputs).
pub const ATOMIC_THREADS: usize = 4096;
pub const ATOMIC_ROUNDS: usize = 16;

/// Warps per `golden_warp` launch: every (width, parameter) pair twice.
pub const WARP_WARPS: usize = 96;

/// Random inputs per operation, besides the edge cases.
pub const RANDOM: usize = 2048;

mod compare;
mod exec;
mod inputs;
mod reference;

pub use compare::*;
pub use exec::*;
pub use inputs::*;
pub use reference::Reference;
