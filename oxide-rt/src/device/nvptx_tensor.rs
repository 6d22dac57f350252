//! NVPTX backend of [`device::tensor`](super::tensor): inline PTX for `mma.sync`, `ldmatrix`
//! and `cp.async` (sm_80). Like the warp collectives in `nvptx.rs`, each `asm!` is volatile and
//! a compiler memory barrier, and oxide-build marks every function `convergent`.
//!
//! Shared-memory operands arrive as generic addresses (what a `SharedSlice` holds) and are
//! converted with `cvta.to.shared` to the 32-bit shared addresses the instructions take.

use super::tensor::MmaKind;
use core::arch::asm;

/// PTX that sets predicate `%oxw` (and operand `{w}` to 1) when all 32 lanes of the warp execute
/// it together: the `.aligned` collective after it runs under `@%oxw`, so a diverged warp never
/// executes one (PTX leaves that undefined) and the caller panics on `{w} == 0`. Fused into the
/// collective's own `asm!`, the test costs a vote and a compare but no branch before it.
macro_rules! WHOLE_WARP {
    () => {
        ".reg .pred %oxw; .reg .b32 %oxm; activemask.b32 %oxm; setp.eq.b32 %oxw, %oxm, -1; selp.u32 {w}, 1, 0, %oxw; "
    };
}

macro_rules! mma_asm {
    // Tested: runs only under `WHOLE_WARP`.
    ($ptx:literal, $a:ident, $b:ident, $c:ident, true) => {{
        let (d0, d1, d2, d3, whole): (u32, u32, u32, u32, u32);
        // SAFETY: a register-only warp collective, executed only when all 32 lanes reach it together (`WHOLE_WARP`); otherwise D is left unwritten and the caller panics.
        unsafe {
            asm!(
                concat!("{{ ", WHOLE_WARP!(), "@%oxw ", $ptx, " {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{c0}, {c1}, {c2}, {c3}}}; }}"),
                w = out(reg32) whole, d0 = out(reg32) d0, d1 = out(reg32) d1, d2 = out(reg32) d2, d3 = out(reg32) d3,
                a0 = in(reg32) $a[0], a1 = in(reg32) $a[1], a2 = in(reg32) $a[2], a3 = in(reg32) $a[3],
                b0 = in(reg32) $b[0], b1 = in(reg32) $b[1],
                c0 = in(reg32) $c[0], c1 = in(reg32) $c[1], c2 = in(reg32) $c[2], c3 = in(reg32) $c[3],
                options(nostack)
            );
        }
        ([d0, d1, d2, d3], whole != 0)
    }};
    // Untested: the caller has just seen the whole warp (`tensor::mma_sync_grid`).
    ($ptx:literal, $a:ident, $b:ident, $c:ident, false) => {{
        let (d0, d1, d2, d3): (u32, u32, u32, u32);
        // SAFETY: a register-only warp collective; the caller (`tensor::mma_sync_grid`) found all 32 lanes together right before, with no lane-dependent branch since.
        unsafe {
            asm!(
                concat!($ptx, " {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{c0}, {c1}, {c2}, {c3}}};"),
                d0 = out(reg32) d0, d1 = out(reg32) d1, d2 = out(reg32) d2, d3 = out(reg32) d3,
                a0 = in(reg32) $a[0], a1 = in(reg32) $a[1], a2 = in(reg32) $a[2], a3 = in(reg32) $a[3],
                b0 = in(reg32) $b[0], b1 = in(reg32) $b[1],
                c0 = in(reg32) $c[0], c1 = in(reg32) $c[1], c2 = in(reg32) $c[2], c3 = in(reg32) $c[3],
                options(nostack)
            );
        }
        ([d0, d1, d2, d3], true)
    }};
}

/// `mma.sync` of kind `KIND` (an `MmaKind` as `u8`) on raw fragment registers, and whether it
/// ran. `TEST`: only when the whole warp executes it together (otherwise D is undefined);
/// without, the caller has made sure of that.
#[inline(always)]
pub fn mma<const KIND: u8, const TEST: bool>(a: [u32; 4], b: [u32; 2], c: [u32; 4]) -> ([u32; 4], bool) {
    macro_rules! kinds {
        ($t:tt) => {
            if KIND == MmaKind::Bf16 as u8 {
                mma_asm!("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", a, b, c, $t)
            } else if KIND == MmaKind::F16 as u8 {
                mma_asm!("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", a, b, c, $t)
            } else if KIND == MmaKind::Tf32 as u8 {
                mma_asm!("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", a, b, c, $t)
            } else {
                mma_asm!("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", a, b, c, $t)
            }
        };
    }
    if TEST {
        kinds!(true)
    } else {
        kinds!(false)
    }
}

/// The six `ldmatrix` forms, after `$test!()` and under `$pred!()` (the warp test or nothing).
macro_rules! ldmatrix_asm {
    ($test:ident, $pred:ident, $row:ident, $r:ident, $whole:ident) => {
        match (N, TRANS) {
            (1, false) => asm!(
                "{{ .reg .u64 %oxg; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, {p}; cvt.u32.u64 %oxs, %oxg;", $test!(),
                $pred!(), "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {{{r0}}}, [%oxs]; }}",
                w = out(reg32) $whole, p = in(reg64) $row, r0 = out(reg32) $r[0], options(nostack)
            ),
            (2, false) => asm!(
                "{{ .reg .u64 %oxg; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, {p}; cvt.u32.u64 %oxs, %oxg;", $test!(),
                $pred!(), "ldmatrix.sync.aligned.m8n8.x2.shared.b16 {{{r0}, {r1}}}, [%oxs]; }}",
                w = out(reg32) $whole, p = in(reg64) $row, r0 = out(reg32) $r[0], r1 = out(reg32) $r[1], options(nostack)
            ),
            (4, false) => asm!(
                "{{ .reg .u64 %oxg; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, {p}; cvt.u32.u64 %oxs, %oxg;", $test!(),
                $pred!(), "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{r0}, {r1}, {r2}, {r3}}}, [%oxs]; }}",
                w = out(reg32) $whole, p = in(reg64) $row, r0 = out(reg32) $r[0], r1 = out(reg32) $r[1], r2 = out(reg32) $r[2], r3 = out(reg32) $r[3], options(nostack)
            ),
            (1, true) => asm!(
                "{{ .reg .u64 %oxg; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, {p}; cvt.u32.u64 %oxs, %oxg;", $test!(),
                $pred!(), "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {{{r0}}}, [%oxs]; }}",
                w = out(reg32) $whole, p = in(reg64) $row, r0 = out(reg32) $r[0], options(nostack)
            ),
            (2, true) => asm!(
                "{{ .reg .u64 %oxg; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, {p}; cvt.u32.u64 %oxs, %oxg;", $test!(),
                $pred!(), "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {{{r0}, {r1}}}, [%oxs]; }}",
                w = out(reg32) $whole, p = in(reg64) $row, r0 = out(reg32) $r[0], r1 = out(reg32) $r[1], options(nostack)
            ),
            _ => asm!(
                "{{ .reg .u64 %oxg; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, {p}; cvt.u32.u64 %oxs, %oxg;", $test!(),
                $pred!(), "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{{r0}, {r1}, {r2}, {r3}}}, [%oxs]; }}",
                w = out(reg32) $whole, p = in(reg64) $row, r0 = out(reg32) $r[0], r1 = out(reg32) $r[1], r2 = out(reg32) $r[2], r3 = out(reg32) $r[3], options(nostack)
            ),
        }
    };
}
macro_rules! WHOLE_WARP_PRED {
    () => {
        "@%oxw "
    };
}
macro_rules! NO_TEST {
    () => {
        "mov.u32 {w}, 1; "
    };
}
macro_rules! NO_PRED {
    () => {
        ""
    };
}

/// `ldmatrix` of `N` matrices (`TRANS`: `.trans`); `row` is this lane's 16-byte row in shared
/// memory (generic address, checked by the caller), and whether it ran. `TEST`: only when the
/// whole warp executes it together (otherwise the registers are 0); without, the caller has
/// made sure of that.
#[inline(always)]
pub fn ldmatrix<const N: usize, const TRANS: bool, const TEST: bool>(
    row: *const u8,
    _checked: bool,
) -> ([u32; N], bool) {
    let (mut r, whole): ([u32; N], u32);
    r = [0; N];
    if TEST {
        // SAFETY: `row` is a 16-byte aligned, in-bounds row of shared memory (checked by `tensor::ldmatrix`); the `ldmatrix` runs only when all 32 lanes reach it together (`WHOLE_WARP`), otherwise the caller panics. The braces scope the temporaries.
        unsafe { ldmatrix_asm!(WHOLE_WARP, WHOLE_WARP_PRED, row, r, whole) }
    } else {
        // SAFETY: as above, except that the caller (`tensor`'s tile loaders) found all 32 lanes together right before, with no lane-dependent branch since.
        unsafe { ldmatrix_asm!(NO_TEST, NO_PRED, row, r, whole) }
    }
    (r, whole != 0)
}

/// Whether generic address `p` points into global memory (`isspacep.global`).
#[inline(always)]
fn is_global(p: *const u8) -> bool {
    let r: u32;
    // SAFETY: `isspacep` only inspects the address.
    unsafe {
        asm!(
            "{{ .reg .pred %oxp; isspacep.global %oxp, {p}; selp.u32 {r}, 1, 0, %oxp; }}",
            p = in(reg64) p, r = out(reg32) r, options(nostack, nomem, pure)
        )
    };
    r != 0
}

/// `cp.async` of `bytes` (4, 8 or 16) to shared `dst` from global `src`, of which `src_bytes`
/// are read and the rest zero-filled.
///
/// # Safety
/// `dst..dst + bytes` is in-bounds shared memory aligned to `bytes`; `src..src + src_bytes` is
/// readable and `src` aligned to `bytes`; `src_bytes <= bytes`.
#[inline(always)]
#[track_caller]
pub unsafe fn cp_async(dst: *mut u8, src: *const u8, bytes: usize, src_bytes: usize) {
    if !is_global(src) {
        not_global();
    }
    let n = src_bytes as u32;
    // SAFETY: the caller's guarantees above, and `src` is a global address (checked); the braces scope the temporaries.
    unsafe {
        match bytes {
            16 => asm!(
                "{{ .reg .u64 %oxg, %oxq; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, {d}; cvt.u32.u64 %oxs, %oxg;",
                "cvta.to.global.u64 %oxq, {s}; cp.async.cg.shared.global [%oxs], [%oxq], 16, {n}; }}",
                d = in(reg64) dst, s = in(reg64) src, n = in(reg32) n, options(nostack)
            ),
            8 => asm!(
                "{{ .reg .u64 %oxg, %oxq; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, {d}; cvt.u32.u64 %oxs, %oxg;",
                "cvta.to.global.u64 %oxq, {s}; cp.async.ca.shared.global [%oxs], [%oxq], 8, {n}; }}",
                d = in(reg64) dst, s = in(reg64) src, n = in(reg32) n, options(nostack)
            ),
            _ => asm!(
                "{{ .reg .u64 %oxg, %oxq; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, {d}; cvt.u32.u64 %oxs, %oxg;",
                "cvta.to.global.u64 %oxq, {s}; cp.async.ca.shared.global [%oxs], [%oxq], 4, {n}; }}",
                d = in(reg64) dst, s = in(reg64) src, n = in(reg32) n, options(nostack)
            ),
        }
    }
}

/// The shared-space address of generic address `p` (`cvta.to.shared`), as `cp.async` takes
/// it: pure, so the optimiser computes it once for a view's start and adds offsets after.
#[inline(always)]
fn shared_addr(p: *mut u8) -> u32 {
    let r: u32;
    // SAFETY: `cvta` only converts the address; nothing is accessed.
    unsafe {
        asm!(
            "{{ .reg .u64 %oxg; cvta.to.shared.u64 %oxg, {p}; cvt.u32.u64 {r}, %oxg; }}",
            p = in(reg64) p, r = out(reg32) r, options(nostack, nomem, pure)
        )
    };
    r
}

/// `cp.async` of `bytes` (4, 8 or 16) to shared `dst + offset` from `src` when `read`, of
/// zeros otherwise (a source size of 0: `src` is not accessed), with no address space test.
/// (Not the `ignore-src` operand: it needs PTX 7.5, and sm_80 builds emit older PTX.)
///
/// # Safety
/// `dst + offset .. + bytes` is in-bounds shared memory aligned to `bytes`; when `read`,
/// `src..src + bytes` is readable global memory aligned to `bytes`.
#[inline(always)]
pub unsafe fn cp_async_global(dst: *mut u8, offset: usize, src: *const u8, bytes: usize, read: bool) {
    let d = shared_addr(dst).wrapping_add(offset as u32);
    let n = if read { bytes as u32 } else { 0 };
    // SAFETY: the caller's guarantees above; the braces scope the temporary.
    unsafe {
        match bytes {
            16 => asm!(
                "{{ .reg .u64 %oxq; cvta.to.global.u64 %oxq, {s}; cp.async.cg.shared.global [{d}], [%oxq], 16, {n}; }}",
                d = in(reg32) d, s = in(reg64) src, n = in(reg32) n, options(nostack)
            ),
            8 => asm!(
                "{{ .reg .u64 %oxq; cvta.to.global.u64 %oxq, {s}; cp.async.ca.shared.global [{d}], [%oxq], 8, {n}; }}",
                d = in(reg32) d, s = in(reg64) src, n = in(reg32) n, options(nostack)
            ),
            _ => asm!(
                "{{ .reg .u64 %oxq; cvta.to.global.u64 %oxq, {s}; cp.async.ca.shared.global [{d}], [%oxq], 4, {n}; }}",
                d = in(reg32) d, s = in(reg64) src, n = in(reg32) n, options(nostack)
            ),
        }
    }
}

/// The zeros of a copy with nothing to read: plain stores of `bytes` zero bytes at `dst`.
///
/// # Safety
/// `dst..dst + bytes` is in-bounds shared memory.
#[inline(always)]
pub unsafe fn cp_async_zero(dst: *mut u8, bytes: usize) {
    // SAFETY: guaranteed by the caller.
    unsafe { core::ptr::write_bytes(dst, 0, bytes) }
}

#[cold]
#[inline(never)]
#[track_caller]
fn not_global() -> ! {
    panic!("cp_async source is not in global memory; pass a kernel's &[T] input (or a part of one)")
}

#[inline(always)]
pub fn cp_async_commit() {
    // SAFETY: closes this thread's group of pending copies; no operands.
    unsafe { asm!("cp.async.commit_group;", options(nostack)) }
}

#[inline(always)]
pub fn cp_async_wait<const N: u32>() {
    // SAFETY: waits for this thread's copies; a memory barrier for the compiler, so reads of the destinations stay after it.
    unsafe { asm!("cp.async.wait_group {n};", n = const N, options(nostack)) }
}
