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

use crate::device::cpu::{set_thread, shfl_source, BlockAborted, Fiber, Op, WarpOp, Yielder};
use crate::Dim3;
use corosensei::stack::{DefaultStack, Stack, StackPointer};
use corosensei::{Coroutine, CoroutineResult};
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Stack size of one simulated thread. Only touched pages use memory (the stack is mmap'ed
/// with a guard page); a GPU thread has 1 KiB of stack by default, and the panic machinery
/// needs a few KiB more.
pub(super) const STACK_BYTES: usize = 256 * 1024;

type Payload = Box<dyn Any + Send>;
type Fib = Coroutine<(), (), Option<Payload>, ColoredStack>;

/// A fiber stack whose top sits a few cache lines below the top of its mapping, a different
/// distance for each stack. Mappings of equal size are aligned alike, so without this the tops
/// of 1024 stacks — the memory a switch touches — would all fall into the same cache sets and
/// evict each other at every switch.
pub(super) struct ColoredStack {
    inner: DefaultStack,
    offset: usize,
}

/// Step between stack tops: not a power of two, a multiple of the 16-byte stack alignment.
const COLOR_STEP: usize = 176;
const COLORS: usize = 256;

impl ColoredStack {
    fn new() -> std::io::Result<ColoredStack> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let offset = NEXT.fetch_add(1, Ordering::Relaxed) % COLORS * COLOR_STEP;
        Ok(ColoredStack { inner: DefaultStack::new(STACK_BYTES + COLORS * COLOR_STEP)?, offset })
    }
}

// The usable range is the inner stack's minus `offset` bytes at the top, and `offset` keeps
// the base 16-byte aligned.
// SAFETY: that range stays above the inner stack's guard page and is at least STACK_BYTES long.
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

/// One worker's stacks: taken from the shared spares on first need, returned on drop.
#[derive(Default)]
pub(super) struct StackPool {
    stacks: Vec<ColoredStack>,
}

impl StackPool {
    fn take(&mut self) -> Result<ColoredStack, String> {
        if let Some(s) = self.stacks.pop() {
            return Ok(s);
        }
        {
            let mut spare = SPARE_STACKS.lock().unwrap_or_else(|e| e.into_inner());
            let keep = spare.len().saturating_sub(1024);
            self.stacks.extend(spare.drain(keep..));
        }
        match self.stacks.pop() {
            Some(s) => Ok(s),
            None => ColoredStack::new().map_err(|e| {
                format!("could not map a {} KiB fiber stack for a simulated thread: {e}", STACK_BYTES / 1024)
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
}

/// Runs all `block` threads of one block as fibers. The caller has published the block with
/// `enter_block` and installed the panic hook.
pub(super) fn run_block<F: Fn() + Sync>(block: Dim3, body: &F, pool: &mut StackPool) -> Result<(), Failure> {
    let n = block.volume() as usize;
    let fibers: Vec<Fiber> = (0..n).map(|_| Fiber::new()).collect();
    let mut cos: Vec<Option<Fib>> = Vec::with_capacity(n);
    let mut failure = None;
    for fiber in &fibers {
        let stack = match pool.take() {
            Ok(s) => s,
            Err(msg) => {
                failure = Some(Failure::Message(msg));
                break;
            }
        };
        let entry = move |y: &Yielder, ()| {
            fiber.yielder.set(y);
            panic::catch_unwind(AssertUnwindSafe(body)).err()
        };
        // Every coroutine is driven to completion (or force-unwound) by `finish` below before
        // this function returns, and none is ever leaked with `mem::forget`.
        // SAFETY: so the closure's borrows of `fibers` and `body` outlive every coroutine.
        cos.push(Some(unsafe { Coroutine::with_stack_unchecked(stack, entry) }));
    }
    if failure.is_none() {
        failure = schedule(block, &fibers, &mut cos, pool).err();
    }
    finish(block, &fibers, &mut cos, pool);
    match failure {
        Some(f) => Err(f),
        None => Ok(()),
    }
}

fn schedule(block: Dim3, fibers: &[Fiber], cos: &mut [Option<Fib>], pool: &mut StackPool) -> Result<(), Failure> {
    let n = fibers.len();
    // Stack of ready threads; popped from the end, so thread 0 runs first.
    let mut ready: Vec<usize> = (0..n).rev().collect();
    let mut live = n;
    loop {
        while let Some(i) = ready.pop() {
            if let Some(payload) = resume(block, i, fibers, cos, pool) {
                return Err(Failure::Panic(payload));
            }
            if fibers[i].op.get() == Op::Done {
                live -= 1;
            }
        }
        if live == 0 {
            return Ok(());
        }
        resolve(fibers, &mut ready);
        if ready.is_empty() {
            return Err(Failure::Message(deadlock(block, fibers)));
        }
    }
}

/// Runs fiber `i` until it suspends or returns; `Some(payload)` when it panicked.
fn resume(block: Dim3, i: usize, fibers: &[Fiber], cos: &mut [Option<Fib>], pool: &mut StackPool) -> Option<Payload> {
    let co = cos[i].as_mut()?;
    fibers[i].op.set(Op::Running);
    set_thread(super::unlinear(i as u64, block), i as u32, &fibers[i]);
    match co.resume(()) {
        CoroutineResult::Yield(()) => None,
        CoroutineResult::Return(result) => {
            fibers[i].op.set(Op::Done);
            if let Some(co) = cos[i].take() {
                pool.stacks.push(co.into_stack());
            }
            result.filter(|p| !p.is::<BlockAborted>())
        }
    }
}

/// Tears down what is left of a block: unwinds suspended fibers (so their destructors run and
/// their stacks can be reused) and drops fibers that never started.
fn finish(block: Dim3, fibers: &[Fiber], cos: &mut [Option<Fib>], pool: &mut StackPool) {
    for i in 0..cos.len() {
        let Some(co) = cos[i].as_mut() else { continue };
        if co.started() {
            fibers[i].abort.set(true);
            // A kernel that swallows the abort unwind and waits again gets resumed a few times,
            // then force-unwound.
            for _ in 0..4 {
                if cos[i].is_none() {
                    break;
                }
                let _ = resume(block, i, fibers, cos, pool);
            }
        }
        if let Some(mut co) = cos[i].take() {
            co.force_unwind();
            if co.done() {
                pool.stacks.push(co.into_stack());
            }
        }
    }
}

/// Completes every collective that can complete; pushes the released threads onto `ready`.
fn resolve(fibers: &[Fiber], ready: &mut Vec<usize>) {
    let n = fibers.len();
    let release = |i: usize, value: u32, aux: u32, ready: &mut Vec<usize>| {
        fibers[i].result.set((value, aux));
        fibers[i].op.set(Op::Running);
        ready.push(i);
    };
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
            let Op::Warp { mask, kind } = op(l) else { continue };
            if handled & (1 << l) != 0 {
                continue;
            }
            let group = mask & live;
            let complete =
                bits(group).all(|m| matches!(op(m), Op::Warp { mask: mm, kind: k } if mm == mask && k.same_kind(kind)));
            if !complete {
                handled |= 1 << l;
                continue;
            }
            handled |= group;
            let ballot = bits(group).fold(0u32, |acc, m| match op(m) {
                Op::Warp { kind: WarpOp::All(p) | WarpOp::Any(p) | WarpOp::Ballot(p), .. } if p => acc | 1 << m,
                _ => acc,
            });
            let results: Vec<(u32, u32)> = bits(group)
                .map(|m| {
                    let Op::Warp { kind, .. } = op(m) else { return (m, 0) };
                    let value = match kind {
                        WarpOp::Sync => 0,
                        WarpOp::All(_) => (ballot == group) as u32,
                        WarpOp::Any(_) => (ballot != 0) as u32,
                        WarpOp::Ballot(_) => ballot,
                        WarpOp::Shfl { mode, value, arg, width } => match shfl_source(mode, m, arg, width) {
                            // Reading a lane that does not take part is undefined in CUDA; the
                            // caller's own value is as good as any.
                            Some(src) if src < 32 && group & (1 << src) != 0 => match op(src) {
                                Op::Warp { kind: WarpOp::Shfl { value: v, .. }, .. } => v,
                                _ => value,
                            },
                            _ => value,
                        },
                    };
                    (m, value)
                })
                .collect();
            for (m, value) in results {
                release(base + m as usize, value, 0, ready);
            }
        }
    }
    if !ready.is_empty() {
        return;
    }
    // The barrier: every live thread must wait at it.
    let mut waiting = 0u32;
    let mut count = 0u32;
    for f in fibers {
        match f.op.get() {
            Op::Done => {}
            Op::Barrier { pred } => {
                waiting += 1;
                count += pred as u32;
            }
            _ => return,
        }
    }
    if waiting > 0 {
        for i in (0..n).rev() {
            if matches!(fibers[i].op.get(), Op::Barrier { .. }) {
                release(i, count, waiting, ready);
            }
        }
    }
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
    let waits: Vec<String> = groups
        .iter()
        .map(|(what, count, first)| {
            let t = super::unlinear(*first as u64, block);
            format!(
                "{count} thread(s) wait at {what}, the first ({},{},{}) (warp {}, lane {})",
                t.x,
                t.y,
                t.z,
                first / 32,
                first % 32
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
