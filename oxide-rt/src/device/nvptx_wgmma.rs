//! NVPTX backend of [`device::wgmma`](super::wgmma): inline PTX for `wgmma` (bf16, f16, e4m3, e5m2), shared-space addresses and the 16-bit pair conversions
//! (sm_90a). Each `asm!` is volatile and a compiler memory barrier (`wgmma` reads shared
//! memory); oxide-build marks every function `convergent`.
//!
//! The accumulator's `N / 2` registers are operands `{0}`..: positional, so one macro writes
//! each shape's operand list from the list of indices. `wait_group` names them too (in a PTX
//! comment), so the compiler sees the registers change at the wait and keeps every read of
//! them after it.

use core::arch::asm;

/// The shared-space address of generic address `p` (in the shared window).
#[inline(always)]
pub fn shared_addr(p: *const u8) -> u32 {
    let r: u32;
    // SAFETY: `cvta.to.shared` only converts the address; nothing is accessed.
    unsafe {
        asm!(
            "{{ .reg .u64 %oxg; cvta.to.shared.u64 %oxg, {p}; cvt.u32.u64 {r}, %oxg; }}",
            p = in(reg64) p, r = out(reg32) r, options(nostack, nomem, pure)
        )
    };
    r
}

/// One `wgmma.mma_async` of width `$n` on element type `$ty` (depth `$k`); `$tail` holds the
/// transpose operands, which only the 16-bit types take.
macro_rules! wgmma {
    ($d:ident, $a:ident, $b:ident, $s:ident, $n:literal, $ty:literal, $k:literal, $tail:literal, [$($i:literal)*]) => {
        // SAFETY: a warpgroup collective every thread of the warpgroup executes with the same descriptors (the rule on `wgmma::WgRunning::mma_async`), which `KMajor::desc` built from in-bounds, aligned shared memory; it writes only the accumulator registers.
        unsafe {
            asm!(
                concat!("{{ .reg .pred %oxp; setp.ne.b32 %oxp, {s}, 0;\n\t",
                    "wgmma.mma_async.sync.aligned.m64n", $n, $k, ".f32.", $ty, ".", $ty, " {{{0}" $(, ", {", $i, "}")*,
                    "}}, {a}, {b}, %oxp, 1, 1", $tail, "; }}"),
                inout(reg32) $d[0], $(inout(reg32) $d[$i],)*
                a = in(reg64) $a, b = in(reg64) $b, s = in(reg32) $s, options(nostack)
            )
        }
    };
}

macro_rules! shape {
    ($mma:ident, $wait:ident, $n:literal, [$($i:literal)*]) => {
        /// `wgmma.mma_async` of this shape on bf16 (`kind` 0), f16 (1), e4m3 (2) or e5m2 (3)
        /// descriptors (`WgmmaElem::KIND`); FP8 takes no transpose operands.
        #[inline(always)]
        pub fn $mma(kind: u8, d: &mut [u32; $n / 2], a: u64, b: u64, scale_d: u32) {
            match kind {
                0 => wgmma!(d, a, b, scale_d, $n, "bf16", "k16", ", 0, 0", [$($i)*]),
                1 => wgmma!(d, a, b, scale_d, $n, "f16", "k16", ", 0, 0", [$($i)*]),
                2 => wgmma!(d, a, b, scale_d, $n, "e4m3", "k32", "", [$($i)*]),
                _ => wgmma!(d, a, b, scale_d, $n, "e5m2", "k32", "", [$($i)*]),
            }
        }

        /// `wgmma.wait_group.sync.aligned N`, the accumulator's registers passed through.
        #[inline(always)]
        pub fn $wait<const N: u32>(d: &mut [u32; $n / 2]) {
            // SAFETY: waits for this warpgroup's wgmma groups; the registers are only named in a comment.
            unsafe {
                asm!(
                    concat!("wgmma.wait_group.sync.aligned {n};\n\t// oxide: accumulator {0}" $(, " {", $i, "}")*),
                    inout(reg32) d[0], $(inout(reg32) d[$i],)*
                    n = const N, options(nostack)
                )
            }
        }
    };
}

shape!(mma_n64, wait_n64, 64, [1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31]);
shape!(mma_n128, wait_n128, 128, [1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63]);
shape!(mma_n256, wait_n256, 256, [1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127]);

/// `[x, y]` as bf16 bits (`cvt.rn.bf16x2.f32` puts its first source in the high half).
#[inline(always)]
pub fn cvt_bf16x2(x: f32, y: f32) -> [u16; 2] {
    let d: u32;
    // SAFETY: a register-only conversion.
    unsafe {
        asm!("cvt.rn.bf16x2.f32 {d}, {y}, {x};", d = out(reg32) d, x = in(reg32) x.to_bits(), y = in(reg32) y.to_bits(), options(nostack, nomem, pure))
    };
    [d as u16, (d >> 16) as u16]
}

/// `[x, y]` as f16 bits (`cvt.rn.f16x2.f32`, first source in the high half).
#[inline(always)]
pub fn cvt_f16x2(x: f32, y: f32) -> [u16; 2] {
    let d: u32;
    // SAFETY: a register-only conversion.
    unsafe {
        asm!("cvt.rn.f16x2.f32 {d}, {y}, {x};", d = out(reg32) d, x = in(reg32) x.to_bits(), y = in(reg32) y.to_bits(), options(nostack, nomem, pure))
    };
    [d as u16, (d >> 16) as u16]
}

#[inline(always)]
pub fn fence() {
    // SAFETY: orders register and shared-memory accesses for the wgmmas that follow; no operands.
    unsafe { asm!("wgmma.fence.sync.aligned;", options(nostack)) }
}

#[inline(always)]
pub fn commit_group() {
    // SAFETY: closes this warpgroup's group of pending wgmmas; no operands.
    unsafe { asm!("wgmma.commit_group.sync.aligned;", options(nostack)) }
}
