//! NVPTX backend of the device API: PTX special registers, barriers, warp collectives and the
//! panic handler. The CPU executor's `device::cpu` module provides the same functions.
//!
//! Inline PTX (`asm!`) is `volatile` and, without `nomem`, a compiler memory barrier; the IR
//! stage of oxide-build additionally marks every function `convergent`, so LLVM neither
//! duplicates these collectives into divergent branches nor moves them across control flow.
//! rustc's MIR optimisations may duplicate one into both arms of a branch (jump threading), so
//! every collective here is a form that may be reached through different instructions by
//! different threads: `barrier.sync`/`barrier.red` (not the `.aligned` `bar.sync`/`bar.red`, which
//! require every thread at the same instruction), `bar.warp.sync` and the `*.sync` warp ops
//! (sm_70 and newer allow that; CUDA 13 supports sm_75 and newer).

use super::warp::ShflMode;
use crate::dim::Dim3;
use core::arch::{asm, nvptx};

#[inline(always)]
pub fn thread_idx() -> Dim3 {
    // SAFETY: special-register reads have no preconditions inside a kernel.
    unsafe { Dim3::new(nvptx::_thread_idx_x() as u32, nvptx::_thread_idx_y() as u32, nvptx::_thread_idx_z() as u32) }
}

#[inline(always)]
pub fn block_idx() -> Dim3 {
    // SAFETY: special-register reads have no preconditions inside a kernel.
    unsafe { Dim3::new(nvptx::_block_idx_x() as u32, nvptx::_block_idx_y() as u32, nvptx::_block_idx_z() as u32) }
}

#[inline(always)]
pub fn block_dim() -> Dim3 {
    // SAFETY: special-register reads have no preconditions inside a kernel.
    unsafe { Dim3::new(nvptx::_block_dim_x() as u32, nvptx::_block_dim_y() as u32, nvptx::_block_dim_z() as u32) }
}

#[inline(always)]
pub fn grid_dim() -> Dim3 {
    // SAFETY: special-register reads have no preconditions inside a kernel.
    unsafe { Dim3::new(nvptx::_grid_dim_x() as u32, nvptx::_grid_dim_y() as u32, nvptx::_grid_dim_z() as u32) }
}

// ---------------------------------------------------------------------------------------------
// Barriers and fences

#[inline(always)]
pub fn sync_threads() {
    // SAFETY: `barrier.sync 0` has no operands; CUDA's rule that all threads of the block reach it is documented on `sync::sync_threads`.
    unsafe { asm!("barrier.sync 0;", options(nostack)) }
}

#[inline(always)]
pub fn sync_threads_count(pred: bool) -> u32 {
    let n: u32;
    // SAFETY: `barrier.red.popc` is `barrier.sync 0` that also counts the threads whose predicate is true; same reach rule as `sync_threads`. The braces scope the temporary predicates.
    unsafe {
        asm!(
            "{{ .reg .pred %oxp; setp.ne.u32 %oxp, {p}, 0; barrier.red.popc.u32 {n}, 0, %oxp; }}",
            p = in(reg32) pred as u32,
            n = out(reg32) n,
            options(nostack)
        );
    }
    n
}

#[inline(always)]
pub fn sync_threads_and(pred: bool) -> bool {
    let r: u32;
    // SAFETY: `barrier.red.and.pred`: a block barrier that ANDs the predicates; see above.
    unsafe {
        asm!(
            "{{ .reg .pred %oxp, %oxq; setp.ne.u32 %oxp, {p}, 0; barrier.red.and.pred %oxq, 0, %oxp; selp.u32 {r}, 1, 0, %oxq; }}",
            p = in(reg32) pred as u32,
            r = out(reg32) r,
            options(nostack)
        );
    }
    r != 0
}

#[inline(always)]
pub fn sync_threads_or(pred: bool) -> bool {
    let r: u32;
    // SAFETY: `barrier.red.or.pred`: a block barrier that ORs the predicates; see above.
    unsafe {
        asm!(
            "{{ .reg .pred %oxp, %oxq; setp.ne.u32 %oxp, {p}, 0; barrier.red.or.pred %oxq, 0, %oxp; selp.u32 {r}, 1, 0, %oxq; }}",
            p = in(reg32) pred as u32,
            r = out(reg32) r,
            options(nostack)
        );
    }
    r != 0
}

#[inline(always)]
#[track_caller]
pub fn sync_warp(mask: u32) {
    check_member(mask);
    // SAFETY: `bar.warp.sync` waits for the lanes in `mask`; each of them must execute it with the same mask (documented on `sync::sync_warp`).
    unsafe { asm!("bar.warp.sync {m};", m = in(reg32) mask, options(nostack)) }
}

#[inline(always)]
pub fn fence_block() {
    // SAFETY: a memory fence has no preconditions.
    unsafe { asm!("membar.cta;", options(nostack)) }
}

#[inline(always)]
pub fn fence_device() {
    // SAFETY: a memory fence has no preconditions.
    unsafe { asm!("membar.gl;", options(nostack)) }
}

#[inline(always)]
pub fn fence_system() {
    // SAFETY: a memory fence has no preconditions.
    unsafe { asm!("membar.sys;", options(nostack)) }
}

// ---------------------------------------------------------------------------------------------
// Warps

#[inline(always)]
pub fn lane_id() -> u32 {
    let r: u32;
    // SAFETY: special-register read.
    unsafe { asm!("mov.u32 {r}, %laneid;", r = out(reg32) r, options(nostack, nomem, pure)) }
    r
}

/// Panics unless the calling lane is in `mask`: PTX leaves a `.sync` warp operation whose
/// member mask omits the executing lane undefined. Free for the constant masks kernels
/// usually pass (`(1 << lane) & FULL_MASK` is never zero, and the lane read is pure).
#[inline(always)]
#[track_caller]
fn check_member(mask: u32) {
    if mask & (1u32 << (lane_id() & 31)) == 0 {
        panic!("warp operation with a mask that does not include the calling lane");
    }
}

/// The warp's index within its block (linear thread index / 32), as CUDA code computes it;
/// `%warpid` is a hardware slot number that can change during execution, so it is not used.
#[inline(always)]
pub fn warp_id() -> u32 {
    let (t, d) = (thread_idx(), block_dim());
    (t.x + d.x * (t.y + d.y * t.z)) / 32
}

#[inline(always)]
pub fn active_mask() -> u32 {
    let r: u32;
    // SAFETY: `activemask` only reads which lanes execute it.
    unsafe { asm!("activemask.b32 {r};", r = out(reg32) r, options(nostack)) }
    r
}

#[inline(always)]
#[track_caller]
pub fn shfl_u32(mode: ShflMode, mask: u32, value: u32, lane_or_delta: u32, width: u32) -> u32 {
    // A width CUDA does not define is a kernel panic at the caller's line, as on the CPU executor
    // (not garbage); for the constant widths kernels pass, the check folds away.
    if !(width.is_power_of_two() && width <= 32) {
        panic!("shuffle width is not a power of two between 1 and 32");
    }
    check_member(mask);
    shfl_member(mode, mask, value, lane_or_delta, width)
}

/// [`shfl_u32`] for callers whose lane is in `mask` by construction (`active_mask()`), with a
/// width that is a power of two up to 32.
#[inline(always)]
fn shfl_member(mode: ShflMode, mask: u32, value: u32, lane_or_delta: u32, width: u32) -> u32 {
    // CUDA's encoding of the segment width: the high byte masks lanes to the segment, the low
    // bits clamp the source lane (0 for `up`, 31 otherwise).
    let seg = (32u32.wrapping_sub(width) & 31) << 8;
    let r: u32;
    // SAFETY: `shfl.sync` with a member mask; every lane in `mask` must execute the same shuffle (documented on the `warp` functions). Lanes outside the segment read their own value.
    unsafe {
        match mode {
            ShflMode::Idx => {
                asm!("shfl.sync.idx.b32 {r}, {v}, {l}, {c}, {m};", r = out(reg32) r, v = in(reg32) value, l = in(reg32) lane_or_delta, c = in(reg32) seg | 31, m = in(reg32) mask, options(nostack))
            }
            ShflMode::Up => {
                asm!("shfl.sync.up.b32 {r}, {v}, {l}, {c}, {m};", r = out(reg32) r, v = in(reg32) value, l = in(reg32) lane_or_delta, c = in(reg32) seg, m = in(reg32) mask, options(nostack))
            }
            ShflMode::Down => {
                asm!("shfl.sync.down.b32 {r}, {v}, {l}, {c}, {m};", r = out(reg32) r, v = in(reg32) value, l = in(reg32) lane_or_delta, c = in(reg32) seg | 31, m = in(reg32) mask, options(nostack))
            }
            ShflMode::Xor => {
                asm!("shfl.sync.bfly.b32 {r}, {v}, {l}, {c}, {m};", r = out(reg32) r, v = in(reg32) value, l = in(reg32) lane_or_delta, c = in(reg32) seg | 31, m = in(reg32) mask, options(nostack))
            }
        }
    }
    r
}

#[inline(always)]
#[track_caller]
pub fn vote_all(mask: u32, pred: bool) -> bool {
    check_member(mask);
    let r: u32;
    // SAFETY: `vote.sync` over the lanes in `mask`, which must all execute it.
    unsafe {
        asm!(
            "{{ .reg .pred %oxp, %oxq; setp.ne.u32 %oxp, {p}, 0; vote.sync.all.pred %oxq, %oxp, {m}; selp.u32 {r}, 1, 0, %oxq; }}",
            p = in(reg32) pred as u32, m = in(reg32) mask, r = out(reg32) r, options(nostack)
        );
    }
    r != 0
}

#[inline(always)]
#[track_caller]
pub fn vote_any(mask: u32, pred: bool) -> bool {
    check_member(mask);
    let r: u32;
    // SAFETY: as `vote_all`.
    unsafe {
        asm!(
            "{{ .reg .pred %oxp, %oxq; setp.ne.u32 %oxp, {p}, 0; vote.sync.any.pred %oxq, %oxp, {m}; selp.u32 {r}, 1, 0, %oxq; }}",
            p = in(reg32) pred as u32, m = in(reg32) mask, r = out(reg32) r, options(nostack)
        );
    }
    r != 0
}

#[inline(always)]
#[track_caller]
pub fn vote_ballot(mask: u32, pred: bool) -> u32 {
    check_member(mask);
    let r: u32;
    // SAFETY: as `vote_all`.
    unsafe {
        asm!(
            "{{ .reg .pred %oxp; setp.ne.u32 %oxp, {p}, 0; vote.sync.ballot.b32 {r}, %oxp, {m}; }}",
            p = in(reg32) pred as u32, m = in(reg32) mask, r = out(reg32) r, options(nostack)
        );
    }
    r
}

// ---------------------------------------------------------------------------------------------
// Shared memory

unsafe extern "C" {
    /// The dynamic shared memory window; the IR stage turns this declaration into
    /// `.extern .shared .align 16 .b8 __oxide_dynamic_shared[]`.
    static mut __oxide_dynamic_shared: [u8; 0];
}

#[inline(always)]
pub fn dynamic_shared() -> (*mut u8, usize) {
    let bytes: u32;
    // SAFETY: special-register read: the dynamic shared memory size of this launch.
    unsafe { asm!("mov.u32 {r}, %dynamic_smem_size;", r = out(reg32) bytes, options(nostack, nomem, pure)) }
    // The address is taken, never read here, so the extern static is not accessed.
    (&raw mut __oxide_dynamic_shared as *mut u8, bytes as usize)
}

// ---------------------------------------------------------------------------------------------
// Panics

/// Where the host wants panic records: the device address of a mapped, page-locked
/// [`PanicRecord`](super::panic_record::PanicRecord), written by the host after the module is
/// loaded (`host::panic`). Null when the host installed none: then a panic traps.
#[unsafe(no_mangle)]
#[used]
static mut __oxide_panic_buffer: *mut super::panic_record::PanicRecord = core::ptr::null_mut();

/// Tells the optimiser that launch dimensions beyond `DIMS` are unused: extents 1, indices 0.
/// The special-register reads are pure, so later reads (in `thread::index()` and friends)
/// fold to constants and the index math shrinks to what nvcc emits for the same geometry.
///
/// # Safety
/// Every launch of the kernel has `grid` and `block` extents of 1 beyond `DIMS` (the
/// generated launchers check this before launching).
#[inline(always)]
pub unsafe fn assume_dims<const DIMS: u8>() {
    let (t, b, bd, gd) = (thread_idx(), block_idx(), block_dim(), grid_dim());
    // SAFETY: guaranteed by the caller, see above.
    unsafe {
        if DIMS < 3 {
            core::hint::assert_unchecked(t.z == 0 && b.z == 0 && bd.z == 1 && gd.z == 1);
        }
        if DIMS < 2 {
            core::hint::assert_unchecked(t.y == 0 && b.y == 0 && bd.y == 1 && gd.y == 1);
        }
    }
}

/// Every launch of the kernel has blocks of exactly `X x Y x Z` threads (the generated
/// launchers check this before launching, and the driver enforces the PTX's `.reqntid`).
#[inline(always)]
pub unsafe fn assume_block<const X: u32, const Y: u32, const Z: u32>() {
    let (t, bd) = (thread_idx(), block_dim());
    // SAFETY: guaranteed by the caller, see above; thread indices are below the block's extents.
    unsafe { core::hint::assert_unchecked(bd.x == X && bd.y == Y && bd.z == Z && t.x < X && t.y < Y && t.z < Z) };
}

/// Every launch of the kernel has at most `MAX` threads per block (`launch_bounds(MAX, ..)`:
/// the generated launchers check this before launching, and the driver enforces the PTX's
/// `.maxntid`), so no extent exceeds `MAX` and every thread index is below it.
#[inline(always)]
pub unsafe fn assume_max_threads<const MAX: u32>() {
    let (t, bd) = (thread_idx(), block_dim());
    // SAFETY: guaranteed by the caller, see above.
    unsafe {
        core::hint::assert_unchecked(bd.x <= MAX && bd.y <= MAX && bd.z <= MAX && t.x < MAX && t.y < MAX && t.z < MAX)
    };
}

/// The body of the `#[panic_handler]` that oxide-build generates in every device crate.
///
/// `MESSAGE` chooses whether the panic message is formatted on the device. Formatting pulls
/// `core::fmt` (with indirect calls) into the module, and ptxas then sizes every kernel's
/// registers for it (saxpy: 56 instead of 12 registers); without it only the location is
/// recorded and the Arguments are optimised away. oxide-build turns messages on for debug
/// builds and off for release builds (`Build::panic_messages`).
#[inline(always)]
pub fn handle_panic<const MESSAGE: bool>(info: &core::panic::PanicInfo<'_>) -> ! {
    // A volatile read: the IR stage internalizes this global, and LLVM must not fold a global
    // the device code never stores to into its null initializer.
    // SAFETY: reading a pointer-sized global of this module.
    let rec = unsafe { core::ptr::read_volatile(&raw const __oxide_panic_buffer) };
    if !rec.is_null() {
        let (g, b) = (grid_dim(), block_dim());
        let launch = super::panic_record::Geometry {
            grid: [g.x, g.y, g.z],
            block: [b.x, b.y, b.z],
            dynamic_shared: dynamic_shared().1 as u32,
        };
        // SAFETY: the host points the global at a live, mapped `PanicRecord` before any launch of this module, and `record` writes it only after winning its `state` flag.
        unsafe { super::panic_record::record::<MESSAGE>(rec, info, thread_idx(), block_idx(), launch) };
        // Make the record visible to the host before the thread ends.
        fence_system();
        // Only this thread stops: barriers stop waiting for an exited thread, the launch
        // completes and the context stays usable (a `trap` is a device fault, which on current
        // drivers poisons the GPU for the whole process). The host reports the record.
        // SAFETY: `exit` ends the thread; nothing after it runs, as `options(noreturn)` says.
        unsafe { core::arch::asm!("exit;", options(noreturn, nostack)) }
    }
    // No record to report through (PTX loaded without oxide's host runtime): abort the launch
    // so the failure is not silent.
    // SAFETY: `trap` aborts the kernel; the host sees a launch failure.
    unsafe { nvptx::trap() }
}

// ---------------------------------------------------------------------------------------------
// Claims

/// One claim on `counter` for [`DisjointAppend::push`](super::DisjointAppend::push): the lanes
/// pushing together make one atomic add of their number, and each takes its rank among them.
#[inline(always)]
pub fn append_claim(counter: &core::sync::atomic::AtomicU64) -> u64 {
    use super::atomic::{AtomicInt, Scope};
    let mask = active_mask();
    let lane = lane_id();
    let leader = mask.trailing_zeros();
    let mut base = 0u64;
    if lane == leader {
        base = counter.atomic_add(u64::from(mask.count_ones()), Scope::Device);
    }
    // Every lane of `mask` runs this code, so each reaches the shuffles.
    let lo = shfl_member(ShflMode::Idx, mask, base as u32, leader, 32);
    let hi = shfl_member(ShflMode::Idx, mask, (base >> 32) as u32, leader, 32);
    let below = mask & ((1u32 << lane) - 1);
    (u64::from(lo) | u64::from(hi) << 32).wrapping_add(u64::from(below.count_ones()))
}

// ---------------------------------------------------------------------------------------------
// Vector reads of read-only global memory (`Matrix::chunk_or`)

/// The 16 bytes at `p`, one `ld.global.nc.v4.b32`. An asm read, not a load of a 16-byte type:
/// LLVM splits such a load into its fields, and merges them with the element-by-element path
/// beside it, losing the vector.
///
/// # Safety
/// `p` is 16-byte aligned global memory with 16 readable bytes that nothing writes during the
/// launch.
#[inline(always)]
pub(crate) unsafe fn read_global_16(p: *const u8) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: `p` is aligned, global, readable and not written during the launch (caller), so the non-coherent read sees its value; `readonly`: the asm writes no memory.
    unsafe {
        asm!("ld.global.nc.v4.b32 {{{a}, {b}, {c}, {d}}}, [{p}];", p = in(reg64) p, a = out(reg32) a,
             b = out(reg32) b, c = out(reg32) c, d = out(reg32) d, options(nostack, pure, readonly))
    }
    [a, b, c, d]
}

/// The 8 bytes at `p`, one `ld.global.nc.v2.b32`, as [`read_global_16`].
///
/// # Safety
/// As [`read_global_16`], for 8 bytes aligned to 8.
#[inline(always)]
pub(crate) unsafe fn read_global_8(p: *const u8) -> [u32; 2] {
    let (a, b): (u32, u32);
    // SAFETY: as in `read_global_16`.
    unsafe {
        asm!("ld.global.nc.v2.b32 {{{a}, {b}}}, [{p}];", p = in(reg64) p, a = out(reg32) a, b = out(reg32) b,
             options(nostack, pure, readonly))
    }
    [a, b]
}
