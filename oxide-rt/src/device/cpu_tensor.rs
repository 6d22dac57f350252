//! CPU executor side of [`device::tensor`](super::tensor): the warp exchange behind `mma.sync`
//! and `ldmatrix`, and `cp.async` copies that complete at `cp.async.wait_group`.
//!
//! **Exchange.** Each lane writes its operands (up to [`WORDS`] 64-bit words: registers or a
//! row address) into its slot of a per-warp table in the block's memory, then waits at a warp
//! collective of all 32 lanes; once released, each lane reads every slot and computes its own
//! result. The table has two banks used alternately by each lane (its exchange count's
//! parity): a lane can only start exchange `n + 1` after every lane has arrived there, so no
//! one still reads bank `n % 2` when a lane writes exchange `n + 2` into it.
//!
//! **cp.async.** A copy's source is read at issue (the source is a read-only kernel input, so
//! reading it later would give the same bytes) and written to shared memory at the
//! `cp_async_wait` that completes its group — what a thread reading its destination earlier
//! sees on the GPU is undefined, here it is the old value. The race check sees the write both
//! at the issue and at the wait (the GPU may write any time in between), attributed to the
//! `cp_async` call. A copy with nothing to read stores its zeros at once.

use super::cpu::{collective, shared_access, with_block, Op, Site, WarpOp};
use super::racecheck::Access;
use std::collections::VecDeque;
use std::panic::Location;

/// 64-bit words a lane contributes to one exchange.
pub(crate) const WORDS: usize = 8;
pub(crate) type Words = [u64; WORDS];

/// Per block: the exchange tables of its warps and the copies in flight per thread.
#[derive(Default)]
pub(crate) struct TensorState {
    warps: Vec<Option<Box<WarpExchange>>>,
    threads: Vec<AsyncCopies>,
}

struct WarpExchange {
    slots: [[Words; 32]; 2],
    /// Exchanges each lane has started.
    count: [u32; 32],
}

#[derive(Default)]
struct AsyncCopies {
    open: Vec<Copy>,
    committed: VecDeque<Vec<Copy>>,
}

struct Copy {
    dst: *mut u8,
    /// The source bytes read at issue, then zeros up to the copy's size.
    data: [u8; 16],
    bytes: usize,
    site: Site,
}

/// Every lane's `mine` of one warp collective named `what` (its PTX instruction), called at
/// `site`. Panics unless all 32 lanes of the warp take part.
pub(crate) fn warp_exchange(what: &'static str, site: Site, mine: Words) -> [Words; 32] {
    let bank = with_block(|mem, thread| {
        let (warp, lane) = ((thread / 32) as usize, (thread % 32) as usize);
        let mut state = mem.tensor.borrow_mut();
        if state.warps.len() <= warp {
            state.warps.resize_with(warp + 1, || None);
        }
        let table = state.warps[warp]
            .get_or_insert_with(|| Box::new(WarpExchange { slots: [[[0; WORDS]; 32]; 2], count: [0; 32] }));
        let bank = (table.count[lane] & 1) as usize;
        table.count[lane] = table.count[lane].wrapping_add(1);
        table.slots[bank][lane] = mine;
        bank
    });
    let group = collective(what, Op::Warp { mask: u32::MAX, kind: WarpOp::Exchange(what), site }).0;
    if group != u32::MAX {
        panic!(
            "`{what}` at {site} is a collective of all 32 lanes of the warp, but lanes {:#010x} do not take part \
             (exited, or outside a block whose size is not a multiple of 32); on the GPU the result is undefined",
            !group
        );
    }
    with_block(|mem, thread| {
        let state = mem.tensor.borrow();
        match &state.warps[(thread / 32) as usize] {
            Some(table) => table.slots[bank],
            None => unreachable!("the table was created before the exchange"),
        }
    })
}

/// `ldmatrix` of `N` 8x8 matrices of 16-bit elements (`TRANS`: transposed), this lane's row
/// at `row` (16 bytes in the running block's shared memory, checked by the caller).
#[track_caller]
pub(crate) fn ldmatrix<const N: usize, const TRANS: bool>(row: *const u8, checked: bool) -> [u32; N] {
    let site = Location::caller();
    let what = match (N, TRANS) {
        (1, false) => "ldmatrix.x1",
        (2, false) => "ldmatrix.x2",
        (4, false) => "ldmatrix.x4",
        (1, true) => "ldmatrix.x1.trans",
        (2, true) => "ldmatrix.x2.trans",
        _ => "ldmatrix.x4.trans",
    };
    let mut mine = [0u64; WORDS];
    mine[0] = row as u64;
    let rows = warp_exchange(what, site, mine);
    let lane = super::thread::lane_id() as usize;
    let (g, t) = (lane / 4, lane % 4);
    // Bytes `at..at + n` of the row that lane `src` passed (in bounds: each row is 16 bytes).
    let read = |src: usize, at: usize, n: usize| -> u32 {
        let p = (rows[src][0] as *const u8).wrapping_add(at);
        if checked {
            shared_access(p, n, Access::Read, site);
        }
        let mut v = [0u8; 4];
        // SAFETY: lane `src` passed the start of a 16-byte row of its block's shared memory, checked in bounds of a live view; `at + n <= 16`, and the block (this one: same warp) is still running.
        unsafe { std::ptr::copy_nonoverlapping(p, v.as_mut_ptr(), n) };
        u32::from_le_bytes(v)
    };
    std::array::from_fn(|j| {
        if TRANS {
            // Elements `g` of rows `2t` and `2t + 1` of matrix `j`.
            read(8 * j + 2 * t, 2 * g, 2) | read(8 * j + 2 * t + 1, 2 * g, 2) << 16
        } else {
            // Elements `2t`, `2t + 1` of row `g` of matrix `j`.
            read(8 * j + g, 4 * t, 4)
        }
    })
}

/// Queues a copy of `src_bytes` bytes from `src`, then zeros, to the `bytes` at `dst`.
///
/// # Safety
/// `src..src + src_bytes` is readable, `dst..dst + bytes` is in the running block's shared
/// memory, and `src_bytes <= bytes <= 16`.
#[track_caller]
pub(crate) unsafe fn cp_async(dst: *mut u8, src: *const u8, bytes: usize, src_bytes: usize) {
    let mut data = [0u8; 16];
    // SAFETY: the caller guarantees `src_bytes` readable bytes at `src`, and `src_bytes <= 16`.
    unsafe { std::ptr::copy_nonoverlapping(src, data.as_mut_ptr(), src_bytes) };
    let copy = Copy { dst, data, bytes, site: Location::caller() };
    // The GPU may write the destination any time from now to the wait: the race check sees a
    // write here and another at the wait.
    shared_access(dst, bytes, Access::Write, copy.site);
    with_block(|mem, thread| {
        let mut state = mem.tensor.borrow_mut();
        let thread = thread as usize;
        if state.threads.len() <= thread {
            state.threads.resize_with(thread + 1, AsyncCopies::default);
        }
        state.threads[thread].open.push(copy);
    });
}

/// [`cp_async`] to `dst + offset` of all `bytes` from `src` when `read`, of zeros otherwise
/// (the GPU's form takes the view's start and an offset, so its shared address is computed
/// once).
///
/// # Safety
/// `dst + offset .. + bytes` is in the running block's shared memory, `bytes <= 16`, and
/// when `read`, `src..src + bytes` is readable.
#[track_caller]
pub(crate) unsafe fn cp_async_global(dst: *mut u8, offset: usize, src: *const u8, bytes: usize, read: bool) {
    let src_bytes = if read { bytes } else { 0 };
    // SAFETY: the caller's guarantees; with nothing to read, no byte of `src` is touched (a copy of 0 bytes from a non-null pointer).
    unsafe { cp_async(dst.add(offset), src, bytes, src_bytes) }
}

/// Stores `bytes` zeros at `dst` at once (a copy with nothing to read).
///
/// # Safety
/// `dst..dst + bytes` is in the running block's shared memory.
#[track_caller]
pub(crate) unsafe fn cp_async_zero(dst: *mut u8, bytes: usize) {
    shared_access(dst, bytes, Access::Write, Location::caller());
    // SAFETY: guaranteed by the caller.
    unsafe { std::ptr::write_bytes(dst, 0, bytes) }
}

pub(crate) fn cp_async_commit() {
    with_block(|mem, thread| {
        let mut state = mem.tensor.borrow_mut();
        let thread = thread as usize;
        if state.threads.len() <= thread {
            state.threads.resize_with(thread + 1, AsyncCopies::default);
        }
        let copies = &mut state.threads[thread];
        let group = std::mem::take(&mut copies.open);
        copies.committed.push_back(group);
    });
}

pub(crate) fn cp_async_wait<const N: u32>() {
    let done: Vec<Copy> = with_block(|mem, thread| {
        let mut state = mem.tensor.borrow_mut();
        let Some(copies) = state.threads.get_mut(thread as usize) else { return Vec::new() };
        let mut done = Vec::new();
        while copies.committed.len() > N as usize {
            done.extend(copies.committed.pop_front().unwrap_or_default());
        }
        done
    });
    for c in done {
        shared_access(c.dst, c.bytes, Access::Write, c.site);
        // SAFETY: `cp_async`'s caller guaranteed `dst..dst + bytes` in this block's shared memory, which lives until the block ends (this thread still runs in it), and `bytes <= 16`.
        unsafe { std::ptr::copy_nonoverlapping(c.data.as_ptr(), c.dst, c.bytes) };
    }
}
