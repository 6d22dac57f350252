//! Fiber mode: the threads of one block as stackful coroutines on one OS thread, and the block
//! scheduler that resolves barriers and warp collectives.
//!
//! The scheduler runs every ready fiber until it returns or suspends at a collective
//! (`device::cpu::collective`). When no fiber is ready, every live thread waits somewhere, and
//! the scheduler resolves what can complete:
//! * a warp operation, once all live lanes named in its mask wait at the same kind of
//!   operation with the same mask (exited lanes do not take part, as in CUDA);
//! * `active_mask`, with the lanes of the warp that wait there;
//! * the block barrier, once every live thread waits at it (exited threads count as arrived,
//!   like on the hardware).
//!
//! If nothing can complete, the block is deadlocked (CUDA would hang or be undefined); the
//! block fails with a message naming what each thread waits for, instead of hanging.
//!
//! With the checks on (`checks.rs`), what CUDA leaves undefined fails the block instead:
//! * a barrier released while its threads wait at different `sync_threads` calls (source
//!   lines), or while some threads of the block have exited without reaching it (CUDA allows a
//!   barrier in conditional code only when every thread of the block takes the same branch);
//! * a shuffle that reads a lane that does not take part (exited, outside the block, not in the
//!   mask): the GPU returns an undefined value there.

use super::guard;
pub(super) use crate::device::cpu::Yielder;
use crate::device::cpu::{set_thread, shfl_source, switch_block, BlockAborted, BlockMem, Fiber, Op, WarpOp};
use crate::host::CpuCheck;
use crate::Dim3;
use corosensei::stack::{DefaultStack, Stack, StackPointer};
use corosensei::{Coroutine, CoroutineResult};
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Stack size of one simulated thread beyond its kernel's stack frame (from the PTX). Only
/// touched pages use memory (the stack is mmap'ed with a guard page); a GPU thread has 1 KiB of
/// stack by default, and the panic machinery needs a few KiB more. Going past it is an
/// `Error::CpuCheck` (`guard`), not a crash.
pub(super) const STACK_BYTES: usize = 256 * 1024;

/// The stack a simulated thread gets for a kernel whose deepest frame (PTX `.local` depot) is
/// `local_bytes`: the host build of the kernel keeps the same arrays on its stack, twice in an
/// unoptimised build (a temporary and its copy). Rounded up to 64 KiB, so that launches of
/// similar kernels share stacks.
pub(super) fn stack_bytes(local_bytes: u64) -> usize {
    let local = usize::try_from(local_bytes).unwrap_or(usize::MAX / 4);
    (STACK_BYTES + 2 * local).next_multiple_of(64 * 1024)
}

type Payload = Box<dyn Any + Send>;
type Fib = Coroutine<(), (), guard::Return, ColoredStack>;

/// A fiber stack whose top sits a few cache lines below the top of its mapping, a different
/// distance for each stack. Mappings of equal size are aligned alike, so without this the tops
/// of 1024 stacks — the memory a switch touches — would all fall into the same cache sets and
/// evict each other at every switch.
pub(super) struct ColoredStack {
    inner: DefaultStack,
    offset: usize,
    /// Usable bytes (at least what was asked for).
    bytes: usize,
}

/// Step between stack tops: not a power of two, a multiple of the 16-byte stack alignment.
const COLOR_STEP: usize = 176;
const COLORS: usize = 256;

impl ColoredStack {
    pub(super) fn new(bytes: usize) -> std::io::Result<ColoredStack> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let offset = NEXT.fetch_add(1, Ordering::Relaxed) % COLORS * COLOR_STEP;
        Ok(ColoredStack { inner: DefaultStack::new(bytes + COLORS * COLOR_STEP)?, offset, bytes })
    }

    /// The guard page at the bottom of the stack: `DefaultStack`'s limit is the start of its
    /// mapping, whose first page it leaves without access.
    pub(super) fn guard(&self) -> (usize, usize) {
        let limit = self.inner.limit().get();
        (limit, limit + page_size())
    }
}

fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        #[cfg(unix)]
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        #[cfg(not(unix))]
        let page = 4096;
        usize::try_from(page).ok().filter(|p| p.is_power_of_two()).unwrap_or(4096)
    })
}

// The usable range is the inner stack's minus `offset` bytes at the top, and `offset` keeps
// the base 16-byte aligned.
// SAFETY: that range stays above the inner stack's guard page and is at least `bytes` long.
unsafe impl Stack for ColoredStack {
    fn base(&self) -> StackPointer {
        let base = self.inner.base().get() - self.offset;
        StackPointer::new(base).unwrap_or(self.inner.base())
    }

    fn limit(&self) -> StackPointer {
        self.inner.limit()
    }

    #[cfg(windows)]
    fn teb_fields(&self) -> corosensei::stack::StackTebFields {
        self.inner.teb_fields()
    }

    #[cfg(windows)]
    fn update_teb_fields(&mut self, stack_limit: usize, guaranteed_stack_bytes: usize) {
        self.inner.update_teb_fields(stack_limit, guaranteed_stack_bytes)
    }
}

/// Stacks kept between launches, so that memory stays bounded by what the largest blocks of
/// concurrent workers needed at once.
static SPARE_STACKS: Mutex<Vec<ColoredStack>> = Mutex::new(Vec::new());
const SPARE_CAP: usize = 8 * 1024;

/// One worker's stacks of at least `bytes` each: taken from the shared spares on first need,
/// returned on drop.
pub(super) struct StackPool {
    stacks: Vec<ColoredStack>,
    bytes: usize,
}

impl StackPool {
    pub(super) fn new(bytes: usize) -> StackPool {
        StackPool { stacks: Vec::new(), bytes }
    }

    /// Gives back a stack taken with [`take`](Self::take) (it goes to the spares on drop).
    pub(super) fn give(&mut self, stack: ColoredStack) {
        self.stacks.push(stack);
    }

    pub(super) fn take(&mut self) -> Result<ColoredStack, String> {
        if let Some(s) = self.stacks.pop() {
            return Ok(s);
        }
        {
            let mut spare = SPARE_STACKS.lock().unwrap_or_else(|e| e.into_inner());
            let mut i = spare.len();
            while i > 0 && self.stacks.len() < 1024 {
                i -= 1;
                if spare[i].bytes >= self.bytes {
                    self.stacks.push(spare.swap_remove(i));
                }
            }
        }
        match self.stacks.pop() {
            Some(s) => Ok(s),
            None => ColoredStack::new(self.bytes).map_err(|e| {
                format!("could not map a {} KiB fiber stack for a simulated thread: {e}", self.bytes / 1024)
            }),
        }
    }
}

impl Drop for StackPool {
    fn drop(&mut self) {
        let mut spare = SPARE_STACKS.lock().unwrap_or_else(|e| e.into_inner());
        let room = SPARE_CAP.saturating_sub(spare.len());
        let n = self.stacks.len().min(room);
        spare.extend(self.stacks.drain(..n));
    }
}

/// How a block run as fibers failed.
pub(super) enum Failure {
    /// A thread panicked; the payload of its panic.
    Panic(Payload),
    /// The executor itself could not continue (deadlock, no memory for stacks).
    Message(String),
    /// A check of the executor failed (see the module docs).
    Check(CpuCheck, String),
    /// The thread of this linear index overflowed its stack, or was stopped by the watchdog
    /// (`stalled`); see `guard`.
    Trapped { thread: usize, stalled: bool },
}

/// Runs all `block` threads of each block of `mems` as fibers of one scheduler: one block, or
/// the blocks of a cluster by rank. The caller has published the block (`enter_block`) or the
/// cluster (`enter_cluster`) and installed the panic hook. A failure names the block's rank.
pub(super) fn run_blocks<F: Fn() + Sync>(
    block: Dim3,
    body: &F,
    pool: &mut StackPool,
    mems: &[&BlockMem],
) -> Result<(), (usize, Failure)> {
    let n = block.volume() as usize * mems.len();
    let fibers: Vec<Fiber> = (0..n).map(|_| Fiber::new()).collect();
    let mut cos: Vec<Option<Fib>> = Vec::with_capacity(n);
    let mut guarded = Vec::with_capacity(n);
    let mut failure = None;
    for fiber in &fibers {
        let stack = match pool.take() {
            Ok(s) => s,
            Err(msg) => {
                failure = Some(Failure::Message(msg));
                break;
            }
        };
        let guard_page = stack.guard();
        let entry = move |y: &Yielder, ()| {
            fiber.yielder.set(y);
            panic::catch_unwind(AssertUnwindSafe(body)).err()
        };
        // Every coroutine is driven to completion (or force-unwound) by `finish` below before
        // this function returns, and none is ever leaked with `mem::forget`.
        // SAFETY: so the closure's borrows of `fibers` and `body` outlive every coroutine.
        let co = unsafe { Coroutine::with_stack_unchecked(stack, entry) };
        guarded.push(guard::Guarded::new(co.trap_handler(), guard_page));
        cos.push(Some(co));
    }
    let mut run = Run { block, fibers: &fibers, cos: &mut cos, pool, blocks: mems.len(), current: 0 };
    let mut failure = failure.map(|f| (0, f));
    guard::armed(&guarded, || {
        if failure.is_none() {
            failure = schedule(&mut run, mems).err();
        }
        finish(&mut run);
    });
    match failure {
        Some(f) => Err(f),
        None => Ok(()),
    }
}

/// The fibers of the blocks run together (block by block, in rank order) and what running them
/// needs.
struct Run<'a, 'f> {
    block: Dim3,
    fibers: &'f [Fiber],
    cos: &'a mut [Option<Fib>],
    pool: &'a mut StackPool,
    /// How many blocks, and the rank of the block published as the running one.
    blocks: usize,
    current: usize,
}

fn schedule(run: &mut Run, mems: &[&BlockMem]) -> Result<(), (usize, Failure)> {
    let (block, fibers) = (run.block, run.fibers);
    let per_block = block.volume() as usize;
    // Stack of ready threads; popped from the end, so thread 0 runs first.
    let mut ready: Vec<usize> = (0..fibers.len()).rev().collect();
    let mut live = fibers.len();
    let mut cluster_phases = 0;
    loop {
        while let Some(i) = ready.pop() {
            if let Some(payload) = resume(run, i) {
                return Err((
                    i / per_block,
                    match guard::trapped(payload.as_ref()) {
                        Some(stalled) => Failure::Trapped { thread: i % per_block, stalled },
                        None => Failure::Panic(payload),
                    },
                ));
            }
            if fibers[i].op.get() == Op::Done {
                live -= 1;
            }
        }
        if live == 0 {
            return Ok(());
        }
        for (rank, mem) in mems.iter().enumerate() {
            let first = rank * per_block;
            resolve(block, &fibers[first..first + per_block], first, &mut ready, mem).map_err(|f| (rank, f))?;
        }
        resolve_cluster(fibers, &mut cluster_phases, &mut ready, mems);
        if ready.is_empty() {
            return Err((0, Failure::Message(deadlock(block, fibers))));
        }
    }
}

/// Completes the cluster barrier phases every thread that has not returned has arrived at,
/// and releases the threads waiting for them. Threads that returned do not take part (PTX:
/// "non-exited threads"), so a block may leave before a barrier the others take. A completed
/// phase orders what came before it in every block, as a block barrier does.
fn resolve_cluster(fibers: &[Fiber], done: &mut u32, ready: &mut Vec<usize>, mems: &[&BlockMem]) {
    let live = fibers.iter().filter(|f| f.op.get() != Op::Done);
    let Some(arrived) = live.map(|f| f.cluster_arrivals.get()).min() else { return };
    if arrived > *done {
        let phases = arrived - *done;
        *done = arrived;
        for mem in mems {
            mem.epoch.set(mem.epoch.get().wrapping_add(phases));
            mem.cluster_epoch.set(mem.cluster_epoch.get().wrapping_add(phases));
        }
    }
    for (i, f) in fibers.iter().enumerate().rev() {
        if let Op::ClusterWait { phase, .. } = f.op.get() {
            if phase < *done {
                f.result.set((0, 0));
                f.op.set(Op::Running);
                ready.push(i);
            }
        }
    }
}

/// Runs fiber `i` until it suspends or returns; `Some(payload)` when it panicked or was
/// trapped (`guard`).
fn resume(run: &mut Run, i: usize) -> Option<Payload> {
    let co = run.cos[i].as_mut()?;
    let fiber = &run.fibers[i];
    fiber.op.set(Op::Running);
    let mut t = i;
    if run.blocks > 1 {
        let per_block = run.block.volume() as usize;
        let rank = i / per_block;
        t = i % per_block;
        if rank != run.current {
            switch_block(rank);
            run.current = rank;
        }
    }
    set_thread(super::unlinear(t as u64, run.block), t as u32, fiber);
    match co.resume(()) {
        CoroutineResult::Yield(()) => None,
        CoroutineResult::Return(result) => {
            fiber.op.set(Op::Done);
            if let Some(co) = run.cos[i].take() {
                run.pool.stacks.push(co.into_stack());
            }
            result.filter(|p| !p.is::<BlockAborted>())
        }
    }
}

/// Tears down what is left of a block: unwinds suspended fibers (so their destructors run and
/// their stacks can be reused) and drops fibers that never started.
fn finish(run: &mut Run) {
    for i in 0..run.cos.len() {
        let Some(co) = run.cos[i].as_mut() else { continue };
        if co.started() {
            run.fibers[i].abort.set(true);
            // A kernel that swallows the abort unwind and waits again gets resumed a few times,
            // then force-unwound.
            for _ in 0..4 {
                if run.cos[i].is_none() {
                    break;
                }
                let _ = resume(run, i);
            }
        }
        if let Some(mut co) = run.cos[i].take() {
            co.force_unwind();
            if co.done() {
                run.pool.stacks.push(co.into_stack());
            }
        }
    }
}

/// Completes every collective of one block (its threads are `fibers`, the scheduler's threads
/// `first..`) that can complete; pushes the released threads onto `ready`.
fn resolve(block: Dim3, fibers: &[Fiber], first: usize, ready: &mut Vec<usize>, mem: &BlockMem) -> Result<(), Failure> {
    let n = fibers.len();
    let release = |i: usize, value: u32, aux: u32, ready: &mut Vec<usize>| {
        fibers[i].result.set((value, aux));
        fibers[i].op.set(Op::Running);
        ready.push(first + i);
    };
    // Waits on mbarriers whose phase another thread has completed.
    for i in (0..n).rev() {
        if let Op::MbarrierWait { addr, parity, .. } = fibers[i].op.get() {
            if crate::device::cpu_hopper::phase_done(&mem.hopper.borrow(), addr, parity) {
                release(i, 1, 0, ready);
            }
        }
    }
    for base in (0..n).step_by(32) {
        let lanes = (n - base).min(32);
        let op = |l: u32| fibers[base + l as usize].op.get();
        let mut live = 0u32;
        let mut at_activemask = 0u32;
        for l in 0..lanes as u32 {
            match op(l) {
                Op::Done => {}
                Op::ActiveMask => {
                    live |= 1 << l;
                    at_activemask |= 1 << l;
                }
                _ => live |= 1 << l,
            }
        }
        for l in bits(at_activemask) {
            release(base + l as usize, at_activemask, 0, ready);
        }
        let mut handled = 0u32;
        for l in 0..lanes as u32 {
            let Op::Warp { mask, kind, .. } = op(l) else { continue };
            if handled & (1 << l) != 0 {
                continue;
            }
            let group = mask & live;
            let complete = bits(group)
                .all(|m| matches!(op(m), Op::Warp { mask: mm, kind: k, .. } if mm == mask && k.same_kind(kind)));
            if !complete {
                handled |= 1 << l;
                continue;
            }
            handled |= group;
            let ballot = bits(group).fold(0u32, |acc, m| match op(m) {
                Op::Warp { kind: WarpOp::All(p) | WarpOp::Any(p) | WarpOp::Ballot(p), .. } if p => acc | 1 << m,
                _ => acc,
            });
            let mut results: Vec<(u32, u32)> = Vec::with_capacity(group.count_ones() as usize);
            for m in bits(group) {
                let Op::Warp { kind, site, .. } = op(m) else { continue };
                let value = match kind {
                    WarpOp::Sync => 0,
                    // The lanes that take part: the caller fails unless they are all 32.
                    WarpOp::Exchange(_) => group,
                    WarpOp::All(_) => (ballot == group) as u32,
                    WarpOp::Any(_) => (ballot != 0) as u32,
                    WarpOp::Ballot(_) => ballot,
                    WarpOp::Shfl { mode, value, arg, width } => match shfl_source(mode, m, arg, width) {
                        Some(src) if src < 32 && group & (1 << src) != 0 => match op(src) {
                            Op::Warp { kind: WarpOp::Shfl { value: v, .. }, .. } => v,
                            _ => value,
                        },
                        // Reading a lane that does not take part is undefined in CUDA (the GPU
                        // returns garbage or zeros); unchecked, the caller's own value is as
                        // good as any.
                        Some(src) if mem.checks && src < 32 => {
                            let why = if src as usize >= lanes {
                                format!("does not exist (the block has {n} threads)")
                            } else if mask & (1 << src) == 0 {
                                format!("is not in the mask {mask:#010x}")
                            } else {
                                "has exited".to_string()
                            };
                            return Err(Failure::Check(
                                CpuCheck::WarpLane,
                                format!(
                                    "{} read lane {src} with a shuffle ({mode:?}, operand {arg}, width {width}) at \
                                     {site}, but lane {src} of warp {} {why}; the GPU returns an undefined value \
                                     there (barrier epoch {})",
                                    thread_name(block, base + m as usize),
                                    base / 32,
                                    mem.epoch.get()
                                ),
                            ));
                        }
                        _ => value,
                    },
                };
                results.push((m, value));
            }
            if matches!(kind, WarpOp::Sync) {
                let syncs = &mem.warp_syncs[base / 32];
                syncs.set(syncs.get().wrapping_add(1));
            }
            for (m, value) in results {
                release(base + m as usize, value, 0, ready);
            }
        }
    }
    if !ready.is_empty() {
        return Ok(());
    }
    // The barrier: every live thread must wait at it.
    let mut waiting = 0u32;
    let mut count = 0u32;
    // The first waiting thread, one waiting at another call, one that has exited.
    let (mut first, mut other, mut exited) = (None, None, None);
    for (i, f) in fibers.iter().enumerate() {
        match f.op.get() {
            Op::Done => {
                exited.get_or_insert(i);
            }
            Op::Barrier { pred, site } => {
                waiting += 1;
                count += pred as u32;
                match first {
                    None => first = Some((i, site)),
                    Some((_, s)) if s != site && other.is_none() => other = Some((i, site)),
                    _ => {}
                }
            }
            _ => return Ok(()),
        }
    }
    if let (true, Some((i, site))) = (mem.checks, first) {
        let epoch = mem.epoch.get();
        if let Some((j, other_site)) = other {
            return Err(Failure::Check(
                CpuCheck::BarrierDivergence,
                format!(
                    "{} waits at sync_threads at {site} while {} waits at sync_threads at {other_site} \
                     (barrier epoch {epoch}); every thread of a block must reach the same barrier (CUDA \
                     leaves this undefined)",
                    thread_name(block, i),
                    thread_name(block, j),
                ),
            ));
        }
        if let Some(j) = exited {
            return Err(Failure::Check(
                CpuCheck::BarrierDivergence,
                format!(
                    "{} waits at sync_threads at {site}, but {} has exited without reaching it \
                     (barrier epoch {epoch}, {waiting} of {n} threads waiting); a barrier in code that only \
                     some threads of the block run is undefined in CUDA: move the early return after the \
                     barrier, or let every thread reach it",
                    thread_name(block, i),
                    thread_name(block, j),
                ),
            ));
        }
    }
    if waiting > 0 {
        mem.epoch.set(mem.epoch.get().wrapping_add(1));
        for i in (0..n).rev() {
            if matches!(fibers[i].op.get(), Op::Barrier { .. }) {
                release(i, count, waiting, ready);
            }
        }
    }
    Ok(())
}

/// `thread (x,y,z) (warp w, lane l)` for the thread of linear index `i` in the block.
pub(crate) fn thread_name(block: Dim3, i: usize) -> String {
    let t = super::unlinear(i as u64, block);
    format!("thread ({},{},{}) (warp {}, lane {})", t.x, t.y, t.z, i / 32, i % 32)
}

fn bits(mask: u32) -> impl Iterator<Item = u32> {
    (0..32).filter(move |b| mask & (1 << b) != 0)
}

fn deadlock(block: Dim3, fibers: &[Fiber]) -> String {
    // Group the waiting threads by what they wait at: (what, how many, first thread).
    let mut groups: Vec<(String, usize, usize)> = Vec::new();
    for (i, f) in fibers.iter().enumerate() {
        let op = f.op.get();
        if op == Op::Done {
            continue;
        }
        let what = op.describe();
        match groups.iter_mut().find(|g| g.0 == what) {
            Some(g) => g.1 += 1,
            None => groups.push((what, 1, i)),
        }
    }
    let per_block = block.volume() as usize;
    let clustered = fibers.len() > per_block;
    let waits: Vec<String> = groups
        .iter()
        .map(|(what, count, first)| {
            let (rank, i) = (first / per_block, first % per_block);
            let t = super::unlinear(i as u64, block);
            let of = if clustered { format!(" of cluster rank {rank}") } else { String::new() };
            format!(
                "{count} thread(s) wait at {what}, the first ({},{},{}) (warp {}, lane {}){of}",
                t.x,
                t.y,
                t.z,
                i / 32,
                i % 32
            )
        })
        .collect();
    format!(
        "deadlock: the threads of the block wait at collective operations that cannot complete \
         (a barrier not reached by every thread, or a warp operation whose mask names lanes that \
         are elsewhere; on a GPU this hangs or is undefined): {}",
        waits.join("; ")
    )
}
