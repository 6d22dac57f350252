//! NVPTX backend of [`device::mbarrier`](super::mbarrier) and [`device::tma`](super::tma):
//! inline PTX for mbarriers (sm_80 / sm_90), fences and TMA bulk tensor copies (sm_90). Each
//! `asm!` is volatile and a compiler memory barrier, as in `nvptx.rs`.
//!
//! Shared-memory operands arrive as generic addresses (what a `SharedSlice` holds) and are
//! converted with `cvta.to.shared` to the 32-bit shared addresses the instructions take.

use core::arch::asm;

/// # Safety
/// `bar` is an 8-byte aligned mbarrier slot in shared memory.
#[inline(always)]
pub unsafe fn mbarrier_init(bar: *mut u64, count: u32) {
    // SAFETY: guaranteed by the caller; the braces scope the temporaries.
    unsafe {
        asm!(
            "{{ .reg .u64 %oxg; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, {b}; cvt.u32.u64 %oxs, %oxg;",
            "mbarrier.init.shared::cta.b64 [%oxs], {n}; }}",
            b = in(reg64) bar, n = in(reg32) count, options(nostack)
        )
    }
}

/// # Safety
/// `bar` is an initialised mbarrier in shared memory.
#[inline(always)]
pub unsafe fn mbarrier_arrive(bar: *mut u64) {
    // SAFETY: guaranteed by the caller; the state the instruction returns is discarded.
    unsafe {
        asm!(
            "{{ .reg .u64 %oxg, %oxt; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, {b}; cvt.u32.u64 %oxs, %oxg;",
            "mbarrier.arrive.shared.b64 %oxt, [%oxs]; }}",
            b = in(reg64) bar, options(nostack)
        )
    }
}

/// # Safety
/// As [`mbarrier_arrive`].
#[inline(always)]
pub unsafe fn mbarrier_arrive_expect_tx(bar: *mut u64, bytes: u32) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        asm!(
            "{{ .reg .u64 %oxg; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, {b}; cvt.u32.u64 %oxs, %oxg;",
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%oxs], {n}; }}",
            b = in(reg64) bar, n = in(reg32) bytes, options(nostack)
        )
    }
}

/// # Safety
/// As [`mbarrier_arrive`].
#[inline(always)]
pub unsafe fn mbarrier_expect_tx(bar: *mut u64, bytes: u32) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        asm!(
            "{{ .reg .u64 %oxg; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, {b}; cvt.u32.u64 %oxs, %oxg;",
            "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%oxs], {n}; }}",
            b = in(reg64) bar, n = in(reg32) bytes, options(nostack)
        )
    }
}

/// # Safety
/// As [`mbarrier_arrive`].
#[inline(always)]
pub unsafe fn mbarrier_complete_tx(bar: *mut u64, bytes: u32) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        asm!(
            "{{ .reg .u64 %oxg; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, {b}; cvt.u32.u64 %oxs, %oxg;",
            "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%oxs], {n}; }}",
            b = in(reg64) bar, n = in(reg32) bytes, options(nostack)
        )
    }
}

/// # Safety
/// As [`mbarrier_arrive`].
#[inline(always)]
pub unsafe fn mbarrier_try_wait_parity(bar: *mut u64, parity: u32) -> bool {
    let done: u32;
    // SAFETY: guaranteed by the caller; a memory barrier for the compiler, so reads of what the phase guards stay after it.
    unsafe {
        asm!(
            "{{ .reg .u64 %oxg; .reg .u32 %oxs; .reg .pred %oxp; cvta.to.shared.u64 %oxg, {b}; cvt.u32.u64 %oxs, %oxg;",
            "mbarrier.try_wait.parity.shared::cta.b64 %oxp, [%oxs], {p}; selp.u32 {d}, 1, 0, %oxp; }}",
            b = in(reg64) bar, p = in(reg32) parity, d = out(reg32) done, options(nostack)
        )
    }
    done != 0
}

#[inline(always)]
pub fn fence_mbarrier_init() {
    // SAFETY: a fence; no operands.
    unsafe { asm!("fence.mbarrier_init.release.cluster;", options(nostack)) }
}

#[inline(always)]
pub fn fence_proxy_async() {
    // SAFETY: a fence; no operands.
    unsafe { asm!("fence.proxy.async.shared::cta;", options(nostack)) }
}

/// `cp.async.bulk.tensor.Dd` load of the box at `coords` of the tensor map at generic address
/// `map` into shared `dst`, completing `bar`'s transaction bytes.
///
/// # Safety
/// `map` is the generic address of a tensor map in param space whose box fits `dst`; `dst` is
/// 128-byte aligned shared memory; `bar` is an initialised mbarrier in shared memory; `D` is
/// the map's rank (1..=5) and the length of `coords`.
#[inline(always)]
pub unsafe fn tma_load<const D: usize>(dst: *mut u8, map: u64, coords: [i32; D], bar: *mut u64) {
    let c = |i: usize| if i < D { coords[i] } else { 0 };
    // SAFETY: guaranteed by the caller; the braces scope the temporaries.
    unsafe {
        macro_rules! load {
            ($dim:literal, $coords:literal, $($ci:ident $n:literal),*) => {
                asm!(
                    "{{ .reg .u64 %oxg, %oxh; .reg .u32 %oxs, %oxb; cvta.to.shared.u64 %oxg, {d}; cvt.u32.u64 %oxs, %oxg;",
                    "cvta.to.shared.u64 %oxh, {b}; cvt.u32.u64 %oxb, %oxh;",
                    concat!("cp.async.bulk.tensor.", $dim, ".shared::cluster.global.mbarrier::complete_tx::bytes [%oxs], [{m}, ", $coords, "], [%oxb]; }}"),
                    d = in(reg64) dst, b = in(reg64) bar, m = in(reg64) map,
                    $($ci = in(reg32) c($n),)*
                    options(nostack)
                )
            };
        }
        match D {
            1 => load!("1d", "{{{c0}}}", c0 0),
            2 => load!("2d", "{{{c0}, {c1}}}", c0 0, c1 1),
            3 => load!("3d", "{{{c0}, {c1}, {c2}}}", c0 0, c1 1, c2 2),
            4 => load!("4d", "{{{c0}, {c1}, {c2}, {c3}}}", c0 0, c1 1, c2 2, c3 3),
            _ => load!("5d", "{{{c0}, {c1}, {c2}, {c3}, {c4}}}", c0 0, c1 1, c2 2, c3 3, c4 4),
        }
    }
}

/// `cp.async.bulk.tensor.Dd` store of shared `src` to the box at `coords` of the tensor map at
/// `map`, in this thread's current bulk group.
///
/// # Safety
/// `map` as in [`tma_load`]; `src` is 128-byte aligned shared memory holding the whole box.
#[inline(always)]
pub unsafe fn tma_store<const D: usize>(src: *const u8, map: u64, coords: [i32; D]) {
    let c = |i: usize| if i < D { coords[i] } else { 0 };
    // SAFETY: guaranteed by the caller; the braces scope the temporaries.
    unsafe {
        macro_rules! store {
            ($dim:literal, $coords:literal, $($ci:ident $n:literal),*) => {
                asm!(
                    "{{ .reg .u64 %oxg; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, {s}; cvt.u32.u64 %oxs, %oxg;",
                    concat!("cp.async.bulk.tensor.", $dim, ".global.shared::cta.bulk_group [{m}, ", $coords, "], [%oxs]; }}"),
                    s = in(reg64) src, m = in(reg64) map,
                    $($ci = in(reg32) c($n),)*
                    options(nostack)
                )
            };
        }
        match D {
            1 => store!("1d", "{{{c0}}}", c0 0),
            2 => store!("2d", "{{{c0}, {c1}}}", c0 0, c1 1),
            3 => store!("3d", "{{{c0}, {c1}, {c2}}}", c0 0, c1 1, c2 2),
            4 => store!("4d", "{{{c0}, {c1}, {c2}, {c3}}}", c0 0, c1 1, c2 2, c3 3),
            _ => store!("5d", "{{{c0}, {c1}, {c2}, {c3}, {c4}}}", c0 0, c1 1, c2 2, c3 3, c4 4),
        }
    }
}

#[inline(always)]
pub fn tma_store_commit() {
    // SAFETY: closes this thread's bulk group; no operands.
    unsafe { asm!("cp.async.bulk.commit_group;", options(nostack)) }
}

#[inline(always)]
pub fn tma_store_wait<const N: u32>() {
    // SAFETY: waits for this thread's bulk groups; a memory barrier for the compiler.
    unsafe { asm!("cp.async.bulk.wait_group {n};", n = const N, options(nostack)) }
}

#[inline(always)]
pub fn tma_store_wait_read<const N: u32>() {
    // SAFETY: as `tma_store_wait`.
    unsafe { asm!("cp.async.bulk.wait_group.read {n};", n = const N, options(nostack)) }
}

/// The generic address of kernel parameter `param` (a PTX symbol of the running `.entry`).
#[macro_export]
#[doc(hidden)]
macro_rules! __oxide_param_address {
    ($export:literal, $index:expr) => {{
        let a: u64;
        // SAFETY: reads the address of one of the running kernel's own parameters; `cvta.param` turns it into a generic address, valid for the whole launch.
        unsafe {
            ::core::arch::asm!(
                concat!("mov.b64 {a}, ", $export, "_param_{i};\n\tcvta.param.u64 {a}, {a};"),
                a = out(reg64) a, i = const $index, options(nostack, nomem, pure)
            )
        };
        a
    }};
}

/// The cluster special registers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ClusterReg {
    CtaRank,
    NCtaRank,
    ClusterId,
    ClusterNCtaId,
    ClusterCtaId,
    NClusterId,
}

#[inline(always)]
pub fn cluster_reg(r: ClusterReg) -> crate::dim::Dim3 {
    macro_rules! read {
        ($x:literal, $y:literal, $z:literal) => {{
            let (x, y, z): (u32, u32, u32);
            // SAFETY: special-register reads; no operands, no memory.
            unsafe {
                asm!(concat!("mov.u32 {x}, ", $x, ";\n\tmov.u32 {y}, ", $y, ";\n\tmov.u32 {z}, ", $z, ";"),
                    x = out(reg32) x, y = out(reg32) y, z = out(reg32) z, options(nostack, nomem, pure))
            };
            crate::dim::Dim3::new(x, y, z)
        }};
        ($x:literal) => {{
            let x: u32;
            // SAFETY: a special-register read; no operands, no memory.
            unsafe { asm!(concat!("mov.u32 {x}, ", $x, ";"), x = out(reg32) x, options(nostack, nomem, pure)) };
            crate::dim::Dim3::new(x, 1, 1)
        }};
    }
    match r {
        ClusterReg::CtaRank => read!("%cluster_ctarank"),
        ClusterReg::NCtaRank => read!("%cluster_nctarank"),
        ClusterReg::ClusterId => read!("%clusterid.x", "%clusterid.y", "%clusterid.z"),
        ClusterReg::ClusterNCtaId => read!("%cluster_nctaid.x", "%cluster_nctaid.y", "%cluster_nctaid.z"),
        ClusterReg::ClusterCtaId => read!("%cluster_ctaid.x", "%cluster_ctaid.y", "%cluster_ctaid.z"),
        ClusterReg::NClusterId => read!("%nclusterid.x", "%nclusterid.y", "%nclusterid.z"),
    }
}

#[inline(always)]
pub fn cluster_arrive() {
    // SAFETY: a cluster barrier arrival (non-`.aligned`: threads may reach it through different instructions); the reach rule is documented on `cluster::sync`. A memory barrier for the compiler.
    unsafe { asm!("barrier.cluster.arrive.release;", options(nostack)) }
}

#[inline(always)]
pub fn cluster_wait() {
    // SAFETY: as `cluster_arrive`.
    unsafe { asm!("barrier.cluster.wait.acquire;", options(nostack)) }
}

/// A `cluster(..)` kernel block's exit state: `[0]` an mbarrier that every thread of the cluster
/// arrives on once it is done with this block's shared memory, `[1]` (low word) how many of this
/// block's threads have reached the exit.
#[unsafe(link_section = "oxide.shared")]
static mut CLUSTER_EXIT: core::mem::MaybeUninit<[u64; 2]> = core::mem::MaybeUninit::zeroed();

/// The start of every `cluster(..)` kernel: thread 0 sets up the block's exit state, then a
/// cluster barrier, so no thread arrives on another block's exit barrier before it is set up.
#[inline(always)]
pub fn cluster_enter() {
    let (bar, done) = cluster_exit_state();
    if super::thread::thread_rank() == 0 {
        let threads = super::nvptx::block_dim();
        // SAFETY: thread 0 alone writes the block's exit state, before the barrier below publishes it; `bar` is this block's 8-byte aligned shared slot.
        unsafe {
            mbarrier_init(bar, cluster_reg(ClusterReg::NCtaRank).x * threads.x * threads.y * threads.z);
            done.write_volatile(0);
        }
        fence_mbarrier_init();
    }
    cluster_arrive();
    cluster_wait();
}

/// The end of every `cluster(..)` kernel, reached by each thread once it has left the body
/// (early returns too). A block's shared memory lives while any of its threads does, and
/// another block may reach it until that block's threads are done, whatever cluster barriers
/// they did or did not take on the way (a block that returns early takes none). So each thread
/// tells every block of the cluster it is done (a release arrival on that block's exit
/// mbarrier); the last thread of each block to get here then stays until every thread of the
/// cluster has said so, taking part in cluster barriers meanwhile, so that blocks still in
/// their body can complete theirs (`barrier.cluster` waits only for threads that have not
/// exited); the block's other threads exit at once, as they would without clusters.
#[inline(always)]
pub fn cluster_exit() {
    let (bar, done) = cluster_exit_state();
    let ranks = cluster_reg(ClusterReg::NCtaRank).x;
    for rank in 0..ranks {
        // SAFETY: `bar` is this block's exit mbarrier, initialised by `cluster_enter` before the cluster barrier every thread passed on entry; `rank < %cluster_nctarank`, so the mapped address is the same mbarrier of a block of this cluster, which lives until this arrival (and every other thread's) completes it. The state result is discarded (`_`).
        unsafe {
            asm!(
                "{{ .reg .u64 %oxg; .reg .u32 %oxs, %oxr; cvta.to.shared.u64 %oxg, {b}; cvt.u32.u64 %oxs, %oxg;",
                "mapa.shared::cluster.u32 %oxr, %oxs, {r};",
                "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%oxr]; }}",
                b = in(reg64) bar, r = in(reg32) rank, options(nostack)
            )
        }
    }
    let threads = super::nvptx::block_dim();
    let before: u32;
    // SAFETY: `done` is this block's shared counter, zeroed by `cluster_enter`; an atomic add.
    unsafe {
        asm!(
            "{{ .reg .u64 %oxg; .reg .u32 %oxs; cvta.to.shared.u64 %oxg, {c}; cvt.u32.u64 %oxs, %oxg;",
            "atom.shared.add.u32 {o}, [%oxs], 1; }}",
            c = in(reg64) done, o = out(reg32) before, options(nostack)
        )
    }
    if before + 1 != threads.x * threads.y * threads.z {
        return;
    }
    loop {
        // SAFETY: as above; waits (acquire, cluster scope) for phase 0, the only one the exit barrier has, so every access to this block's memory by any thread of the cluster happens before this thread, the block's last, exits.
        let complete = unsafe { exit_wait(bar) };
        if complete {
            break;
        }
        cluster_arrive();
        cluster_wait();
    }
}

/// The generic addresses of this block's exit mbarrier and exit counter.
#[inline(always)]
fn cluster_exit_state() -> (*mut u64, *mut u32) {
    let base = core::ptr::addr_of_mut!(CLUSTER_EXIT) as *mut u64;
    (base, base.wrapping_add(1) as *mut u32)
}

/// One `try_wait` (acquire, cluster scope) for phase 0 of the exit mbarrier `bar`.
///
/// # Safety
/// `bar` is this block's initialised exit mbarrier.
#[inline(always)]
unsafe fn exit_wait(bar: *mut u64) -> bool {
    let done: u32;
    // SAFETY: guaranteed by the caller; a memory barrier for the compiler.
    unsafe {
        asm!(
            "{{ .reg .u64 %oxg; .reg .u32 %oxs; .reg .pred %oxp; cvta.to.shared.u64 %oxg, {b}; cvt.u32.u64 %oxs, %oxg;",
            "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %oxp, [%oxs], 0; selp.u32 {d}, 1, 0, %oxp; }}",
            b = in(reg64) bar, d = out(reg32) done, options(nostack)
        )
    }
    done != 0
}

/// The generic address of `local` (generic, shared) in the block of rank `rank`.
///
/// # Safety
/// `local` is in this block's shared memory and `rank < %cluster_nctarank`.
#[inline(always)]
pub unsafe fn mapa(local: *mut u8, rank: u32) -> *mut u8 {
    let r: *mut u8;
    // SAFETY: guaranteed by the caller; computes an address, touches no memory.
    unsafe {
        asm!("mapa.u64 {r}, {a}, {b};", r = out(reg64) r, a = in(reg64) local, b = in(reg32) rank, options(nostack, nomem, pure))
    };
    r
}

#[inline(always)]
pub fn elect_sync() -> bool {
    let e: u32;
    // SAFETY: a warp collective over every lane (the rule on `specialize::elect_sync`); registers only.
    unsafe {
        asm!(
            "{{ .reg .pred %oxp; elect.sync _|%oxp, 0xffffffff; selp.u32 {e}, 1, 0, %oxp; }}",
            e = out(reg32) e, options(nostack)
        )
    };
    e != 0
}

/// A barrier of the 128 threads of warpgroup `wg` (`barrier.red.and.pred` on named barrier
/// `1 + wg`) that ANDs their predicates.
#[inline(always)]
pub fn warpgroup_all(wg: u32, pred: bool) -> bool {
    let r: u32;
    // SAFETY: a named barrier (1..=8: a block has at most 8 warpgroups, and barrier 0 is `sync_threads`') of the 128 threads of one warpgroup, which all reach it (the rule on `specialize::warpgroup_registers`); the braces scope the temporary predicates.
    unsafe {
        asm!(
            "{{ .reg .pred %oxp, %oxq; setp.ne.u32 %oxp, {p}, 0; barrier.red.and.pred %oxq, {id}, 128, %oxp; selp.u32 {r}, 1, 0, %oxq; }}",
            id = in(reg32) 1 + wg,
            p = in(reg32) pred as u32,
            r = out(reg32) r,
            options(nostack)
        );
    }
    r != 0
}

/// # Safety
/// The rule on `specialize::setmaxnreg_inc`: every thread of the warpgroup executes this same
/// call, its warps whole, with a warpgroup barrier since the last `setmaxnreg`.
#[inline(always)]
pub unsafe fn setmaxnreg<const N: u32, const INC: bool>() {
    // SAFETY: the caller keeps the warpgroup rule (this function's contract); `N` is checked by the caller.
    unsafe {
        if INC {
            asm!("setmaxnreg.inc.sync.aligned.u32 {n};", n = const N, options(nostack))
        } else {
            asm!("setmaxnreg.dec.sync.aligned.u32 {n};", n = const N, options(nostack))
        }
    }
}
