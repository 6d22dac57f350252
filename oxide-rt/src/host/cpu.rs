//! The CPU executor: runs the same kernels as the GPU, on host threads, with SIMT semantics.
//!
//! # Design
//!
//! * **Blocks in parallel.** One worker OS thread per core pulls block indices from a shared
//!   counter; a block runs start to finish on one worker. Blocks never wait for each other (as
//!   on a GPU, where nothing orders blocks), so this cannot deadlock.
//! * **Threads of a block as fibers, only where needed.** A block's threads can meet at
//!   `sync_threads` and warp collectives, so they must be able to stop in the middle of the
//!   kernel and resume later. One OS thread per simulated thread would cost 1024 kernel threads
//!   per block and a futex round trip per barrier; instead every simulated thread is a
//!   stackful coroutine (`corosensei`) on the block's worker, and a collective operation
//!   suspends the coroutine to the block scheduler ([`fibers`]), which resumes the participants
//!   once all have arrived. A switch costs a few nanoseconds and no locks are needed, since a
//!   block's threads never run at the same time. Stacks are mmap'ed with a guard page, reused
//!   from block to block and launch to launch (a pool per worker, spares kept globally), so
//!   memory stays bounded by workers x block size x the pages a thread actually touches.
//! * **Barrier-free kernels as a plain loop.** Most kernels (saxpy, maps, atomics-only
//!   histograms) never wait for other threads; for them a coroutine per thread is pure
//!   overhead. Which kind a kernel is comes from its PTX, the compiled form of the very same
//!   source: if the entry and every function it calls contain no barrier or warp collective
//!   instruction ([`classify`]), the threads of a block run one after another in a loop that
//!   only updates the thread index. The module's PTX is parsed once, by the first of its kernels
//!   launched, and each kernel's answer is kept (`OnceLock`). Should
//!   the host build of a kernel reach a collective anyway (a `cfg(target_arch)` difference), the
//!   device call panics with a message saying so, which becomes `Err`, instead of deadlocking.
//! * **Per-block shared memory** lives in a `BlockMem` the worker creates for each block: static
//!   declarations are allocated zeroed on first use, keyed by the declaration's address; the
//!   launch's dynamic shared memory is one 16-byte aligned allocation.
//! * **Panics** inside a kernel (in a fiber or not) are caught per block; a panic hook records
//!   their location, and the launch returns `Error::KernelPanic` with `file:line:col`. The other
//!   fibers of that block are unwound (their destructors run) and no more blocks start.

pub(crate) mod checks;
mod classify;
mod fibers;
mod guard;
#[cfg(test)]
mod tensor_tests;
#[cfg(test)]
mod tests;
mod watchdog;

pub use checks::{cpu_checks, set_cpu_checks, set_cpu_watchdog, DEFAULT_WATCHDOG_MS};

use super::{CpuCheck, Error};
use crate::device::cpu::{
    enter_block, enter_cluster, leave_block, set_plain_row, set_plain_thread, BlockMem, ClusterRun,
};
use crate::{Dim3, LaunchConfig};
use corosensei::{Coroutine, CoroutineResult};
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, Once, OnceLock};
use std::time::Duration;
use watchdog::Watchdog;

/// A kernel's `Matrix<T>` argument on the CPU executor, borrowing `data` for as long as the
/// launcher lends it (so a kernel cannot keep its elements past the launch).
///
/// # Safety
/// `shape` is `[cols, rows]` with both at most `u32::MAX` and `rows * cols <= data.len()`
/// (what `check_matrix` verifies).
#[inline(always)]
pub unsafe fn cpu_matrix<T>(data: &[T], shape: [usize; 2]) -> crate::device::Matrix<'_, T> {
    // SAFETY: `data` is a shared borrow of initialised `T`s for the matrix's lifetime, and the caller checked the shape against its length.
    unsafe { crate::device::Matrix::from_raw(data.as_ptr(), data.len(), shape) }
}

/// A raw pointer that generated CPU launchers hand to every block. Sound to share because each
/// simulated thread only touches the element of its own unique `ThreadIndex`.
#[derive(Clone, Copy)]
pub struct SendPtr<T>(pub *mut T);
// SAFETY: see the type's doc — accesses through it are disjoint per simulated thread.
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    /// The pointer. A method (not `.0`) so closures capture the whole `Sync` wrapper.
    #[inline(always)]
    pub fn get(&self) -> *mut T {
        self.0
    }
}

// CUDA's limits on every current GPU, so a launch that fails on the GPU fails on the CPU too.
const MAX_BLOCK: [u32; 3] = [1024, 1024, 64];
const MAX_THREADS: u64 = 1024;
const MAX_GRID: [u32; 3] = [i32::MAX as u32, 65535, 65535];
/// Shared memory per block (static + dynamic, with the opt-in) of sm_90 (H100/H200), the GPU
/// oxide targets first.
pub const MAX_SHARED_PER_BLOCK: u32 = 227 * 1024;

fn check(kernel: &'static str, cfg: &LaunchConfig) -> Result<(), Error> {
    let bad = |reason: String| Err(Error::InvalidLaunch { kernel, reason });
    let (b, g) = (cfg.block, cfg.grid);
    if b.volume() == 0 || g.volume() == 0 {
        return bad(format!("empty launch: grid {g:?}, block {b:?}; every dimension must be at least 1"));
    }
    if b.volume() > MAX_THREADS {
        return bad(format!(
            "block of {} threads ({}x{}x{}) exceeds the limit of {MAX_THREADS} threads per block",
            b.volume(),
            b.x,
            b.y,
            b.z
        ));
    }
    for (i, axis) in ["x", "y", "z"].iter().enumerate() {
        let (bv, gv) = ([b.x, b.y, b.z][i], [g.x, g.y, g.z][i]);
        if bv > MAX_BLOCK[i] {
            return bad(format!("block.{axis} = {bv} exceeds the limit {}", MAX_BLOCK[i]));
        }
        if gv > MAX_GRID[i] {
            return bad(format!("grid.{axis} = {gv} exceeds the limit {}", MAX_GRID[i]));
        }
    }
    super::check_thread_count(kernel, cfg)
}

fn unlinear(i: u64, d: Dim3) -> Dim3 {
    let (x, y) = (d.x as u64, d.y as u64);
    Dim3::new((i % x) as u32, ((i / x) % y) as u32, (i / (x * y)) as u32)
}

thread_local! {
    /// Where the last panic on this thread happened, recorded by our panic hook.
    static PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
    static IN_KERNEL: Cell<bool> = const { Cell::new(false) };
}

/// Installs (once) a panic hook that records the location of panics inside CPU kernels and
/// keeps them quiet — they come back as `Error::KernelPanic` — while other panics print as usual.
fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if IN_KERNEL.with(|k| k.get()) {
                let loc = info.location().map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                PANIC_AT.with(|p| *p.borrow_mut() = loc);
            } else {
                previous(info);
            }
        }));
    });
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".into()
    }
}

/// One `#[kernel]` as the CPU executor sees it: a `static` in every generated CPU launcher. The
/// kernel's PTX (same source) tells the executor whether it uses block/warp collectives.
pub struct CpuKernel {
    name: &'static str,
    module: &'static crate::EmbeddedModule,
    /// Launch bounds: most threads per block, 0 when the kernel declares none.
    max_threads: u32,
    /// `#[kernel(cluster(x, y, z))]`: the blocks of each cluster run together; `[1, 1, 1]`
    /// without.
    cluster: [u32; 3],
    /// Whether the kernel's threads must run as fibers (decided from the PTX on first launch).
    fibers: OnceLock<bool>,
    /// Static shared memory and stack frame, read from the PTX on first launch.
    footprint: OnceLock<classify::Footprint>,
}

impl CpuKernel {
    pub const fn new(module: &'static crate::EmbeddedModule, name: &'static str) -> CpuKernel {
        CpuKernel {
            name,
            module,
            max_threads: 0,
            cluster: [1, 1, 1],
            fibers: OnceLock::new(),
            footprint: OnceLock::new(),
        }
    }

    /// The kernel's cluster shape: each launch runs the blocks of a cluster together, as the
    /// GPU does (their threads meet at cluster barriers and reach each other's shared memory).
    pub const fn with_cluster(mut self, cluster: [u32; 3]) -> CpuKernel {
        self.cluster = cluster;
        self
    }

    fn cluster_dim(&self) -> Dim3 {
        let [x, y, z] = self.cluster;
        Dim3::new(x.max(1), y.max(1), z.max(1))
    }

    /// The kernel's launch bounds: blocks of more than `n` threads are rejected, as the GPU
    /// rejects them for a kernel compiled with `.maxntid n`.
    pub const fn with_max_threads(mut self, n: u32) -> CpuKernel {
        self.max_threads = n;
        self
    }

    /// Whether this kernel runs its threads as fibers (it has barriers or warp collectives).
    pub fn uses_fibers(&self) -> bool {
        self.cluster_dim().volume() > 1
            || *self.fibers.get_or_init(|| classify::module(self.module.ptx).needs_fibers(self.name))
    }

    /// Bytes of the kernel's static shared arrays per block, as on the GPU (from its PTX).
    pub fn static_shared_bytes(&self) -> u64 {
        self.footprint().static_shared
    }

    fn footprint(&self) -> classify::Footprint {
        *self.footprint.get_or_init(|| classify::module(self.module.ptx).footprint(self.name).unwrap_or_default())
    }
}

/// Runs `thread_body` once per simulated thread of the launch `cfg` (see the module docs), with
/// the checks on or off as [`cpu_checks`] says.
pub fn cpu_launch<F: Fn() + Sync>(kernel: &CpuKernel, cfg: LaunchConfig, thread_body: F) -> Result<(), Error> {
    launch(kernel, cfg, checks::settings()?, thread_body)
}

/// [`cpu_launch`] with the checks of `settings`.
fn launch<F: Fn() + Sync>(
    kernel: &CpuKernel,
    cfg: LaunchConfig,
    settings: checks::Settings,
    thread_body: F,
) -> Result<(), Error> {
    let name = kernel.name;
    check(name, &cfg)?;
    if kernel.max_threads > 0 && cfg.block.volume() > kernel.max_threads as u64 {
        return Err(Error::InvalidLaunch {
            kernel: name,
            reason: format!(
                "block of {} threads ({}x{}x{}) exceeds the kernel's launch bound of {} threads per block",
                cfg.block.volume(),
                cfg.block.x,
                cfg.block.y,
                cfg.block.z,
                kernel.max_threads
            ),
        });
    }
    // The same memory checks as on the GPU, with sm_90's shared memory limit; the sizes come
    // from the kernel's PTX (what ptxas would allocate).
    let footprint = kernel.footprint();
    let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    super::gpu::check_memory(
        name,
        cfg.shared_mem_bytes,
        clamp(footprint.static_shared),
        MAX_SHARED_PER_BLOCK,
        clamp(footprint.local_bytes),
    )?;
    // The launcher refused a grid that is not a whole number of clusters (`check_cluster`).
    let cluster = kernel.cluster_dim();
    let use_fibers = kernel.uses_fibers();
    install_panic_hook();
    // The unit a worker runs at once: a block, or a cluster's blocks together.
    let units = Dim3::new(cfg.grid.x / cluster.x, cfg.grid.y / cluster.y, cfg.grid.z / cluster.z);
    let unit_count = units.volume();
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    let workers = worker_count()?.min(unit_count as usize).max(1);
    let chunk = chunk_blocks(unit_count, workers, cfg.block.volume() * cluster.volume());
    // Threads get stacks sized from the kernel's own frame, with a guard page (`guard`).
    let stack_bytes = if use_fibers {
        fibers::stack_bytes(footprint.local_bytes)
    } else {
        PLAIN_STACK_BYTES + fibers::stack_bytes(footprint.local_bytes)
    };
    let launch = Launch { name, cfg, cluster, checks: settings.checks, stack_bytes, watchdog: settings.watchdog };
    let dog = settings.watchdog.filter(|_| guard::prepare_thread()).map(|limit| Watchdog::new(limit, workers));
    let run_worker = || {
        let _beat = dog.as_ref().map(|d| d.register());
        guard::prepare_thread();
        let mut pool = fibers::StackPool::new(stack_bytes);
        let mut stacks = if use_fibers { Stacks::Fibers(pool) } else { Stacks::Plain(pool.take().ok(), pool) };
        // Workers take `chunk` consecutive units at a time: one shared-counter update (a cache
        // line bouncing between cores) per chunk instead of per block.
        'chunks: loop {
            let first = next.fetch_add(chunk, Ordering::Relaxed);
            if first >= unit_count {
                break;
            }
            let mut unit = unlinear(first, units);
            for _ in first..(first + chunk).min(unit_count) {
                if stop.load(Ordering::Relaxed) {
                    break 'chunks;
                }
                let ran = match cluster.volume() {
                    1 => run_block(&launch, unit, &thread_body, &mut stacks),
                    _ => run_cluster(&launch, unit, &thread_body, &mut stacks),
                };
                if let Err(e) = ran {
                    let mut f = failure.lock().unwrap_or_else(|e| e.into_inner());
                    f.get_or_insert(e);
                    stop.store(true, Ordering::Relaxed); // no more units start
                    next.store(unit_count, Ordering::Relaxed);
                    break 'chunks;
                }
                unit = next_block(unit, units);
            }
        }
        if let Stacks::Plain(stack, pool) = &mut stacks {
            // Kept for the next launch (with the pool's spares), not unmapped.
            if let Some(stack) = stack.take() {
                pool.give(stack);
            }
        }
    };
    std::thread::scope(|s| {
        if let Some(dog) = &dog {
            s.spawn(|| dog.watch());
        }
        for _ in 1..workers {
            s.spawn(run_worker);
        }
        run_worker();
    });
    match failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Stack of the coroutine a worker runs barrier-free blocks on, beyond what a fiber gets: the
/// plain loop is deeper (and a thread that needs a fiber's stack and a bit more should not fail
/// here and pass there).
const PLAIN_STACK_BYTES: usize = 8 << 20;

/// What every block of a launch needs to know.
struct Launch {
    name: &'static str,
    cfg: LaunchConfig,
    /// The kernel's cluster shape (`1x1x1` without clusters).
    cluster: Dim3,
    checks: bool,
    /// Stack of each simulated thread (each fiber, or the plain loop's coroutine).
    stack_bytes: usize,
    watchdog: Option<Duration>,
}

/// What a worker runs its blocks' threads on.
enum Stacks {
    /// A stack per simulated thread.
    Fibers(fibers::StackPool),
    /// One stack for the plain loop, from the pool (given back when the worker is done);
    /// `None` when it could not be mapped (then the loop runs on the worker's own stack,
    /// unguarded).
    Plain(Option<fibers::ColoredStack>, fibers::StackPool),
}

/// Blocks a worker takes at once: about 64K simulated threads, so the shared counter is touched
/// rarely even for tiny blocks, yet at most an eighth of a worker's share, so the workers still
/// finish close together.
fn chunk_blocks(blocks: u64, workers: usize, threads_per_block: u64) -> u64 {
    const THREADS_PER_CHUNK: u64 = 64 * 1024;
    let by_threads = (THREADS_PER_CHUNK / threads_per_block.max(1)).max(1);
    let by_balance = (blocks / (8 * workers as u64).max(1)).max(1);
    by_threads.min(by_balance)
}

/// The block after `b` in linear order (x fastest), as `unlinear(linear(b) + 1, grid)`.
fn next_block(b: Dim3, grid: Dim3) -> Dim3 {
    if b.x + 1 < grid.x {
        Dim3::new(b.x + 1, b.y, b.z)
    } else if b.y + 1 < grid.y {
        Dim3::new(0, b.y + 1, b.z)
    } else {
        Dim3::new(0, 0, b.z + 1)
    }
}

/// Worker threads per launch: `OXIDE_CPU_THREADS` when set, else one per core.
fn worker_count() -> Result<usize, Error> {
    static WORKERS: OnceLock<Result<usize, String>> = OnceLock::new();
    let parsed = WORKERS.get_or_init(|| match std::env::var("OXIDE_CPU_THREADS") {
        Ok(v) if !v.is_empty() => match v.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => {
                Err(format!("OXIDE_CPU_THREADS={v:?} is not a positive number of threads; unset it to use every core"))
            }
        },
        _ => Ok(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)),
    });
    parsed.clone().map_err(Error::Config)
}

fn run_block<F: Fn() + Sync>(
    launch: &Launch,
    block_idx: Dim3,
    thread_body: &F,
    stacks: &mut Stacks,
) -> Result<(), Error> {
    let cfg = &launch.cfg;
    let mem = BlockMem::new(cfg.shared_mem_bytes as usize, launch.checks);
    let base = enter_block(block_idx, cfg.block, cfg.grid, &mem);
    IN_KERNEL.with(|k| k.set(true));
    let result = match stacks {
        Stacks::Fibers(pool) => fibers::run_blocks(cfg.block, thread_body, pool, &[&mem]).map_err(|(_, f)| f),
        Stacks::Plain(stack, _) => plain_on_stack(stack, cfg.block, base, thread_body),
    };
    IN_KERNEL.with(|k| k.set(false));
    leave_block();
    let epoch = mem.epoch.get();
    drop(mem);
    result.map_err(|failure| block_failure(launch, block_idx, epoch, failure))
}

/// Runs the blocks of cluster `cluster_idx` (in the grid of clusters) together: their threads
/// are fibers of one scheduler, which completes cluster barriers across them, and every
/// block's shared memory lives until the last thread of the cluster has returned.
fn run_cluster<F: Fn() + Sync>(
    launch: &Launch,
    cluster_idx: Dim3,
    thread_body: &F,
    stacks: &mut Stacks,
) -> Result<(), Error> {
    let (cfg, dims) = (&launch.cfg, launch.cluster);
    let Stacks::Fibers(pool) = stacks else {
        return Err(Error::KernelPanic {
            kernel: launch.name,
            message: "a cluster kernel ran without fibers (the executor's own error)".into(),
            location: None,
        });
    };
    let ranks = dims.volume() as u32;
    let mems: Vec<BlockMem> = (0..ranks).map(|_| BlockMem::new(cfg.shared_mem_bytes as usize, launch.checks)).collect();
    let origin = Dim3::new(cluster_idx.x * dims.x, cluster_idx.y * dims.y, cluster_idx.z * dims.z);
    let block_of = |rank: u32| {
        let p = unlinear(rank as u64, dims);
        Dim3::new(origin.x + p.x, origin.y + p.y, origin.z + p.z)
    };
    let mut run = ClusterRun {
        dims,
        idx: cluster_idx,
        grid: Dim3::new(cfg.grid.x / dims.x, cfg.grid.y / dims.y, cfg.grid.z / dims.z),
        blocks: Vec::with_capacity(ranks as usize),
    };
    for (rank, mem) in mems.iter().enumerate() {
        mem.rank.set(rank as u32);
        let idx = block_of(rank as u32);
        let base = enter_block(idx, cfg.block, cfg.grid, mem);
        run.blocks.push((idx, base, mem as *const BlockMem));
    }
    // Rank 0 runs first; the scheduler switches blocks as their fibers take turns.
    enter_block(block_of(0), cfg.block, cfg.grid, &mems[0]);
    enter_cluster(&run);
    IN_KERNEL.with(|k| k.set(true));
    let refs: Vec<&BlockMem> = mems.iter().collect();
    let result = fibers::run_blocks(cfg.block, thread_body, pool, &refs);
    IN_KERNEL.with(|k| k.set(false));
    leave_block();
    let epochs: Vec<u32> = mems.iter().map(|m| m.epoch.get()).collect();
    drop(refs);
    drop(mems);
    result.map_err(|(rank, failure)| block_failure(launch, block_of(rank as u32), epochs[rank], failure))
}

/// The launch's error for `failure` of the block `block_idx` (barrier epoch `epoch`).
fn block_failure(launch: &Launch, block_idx: Dim3, epoch: u32, failure: fibers::Failure) -> Error {
    let (kernel, cfg) = (launch.name, &launch.cfg);
    let in_block = |report: String| {
        let b = block_idx;
        format!("in block ({},{},{}), {report}", b.x, b.y, b.z)
    };
    match failure {
        fibers::Failure::Panic(payload) => match payload.downcast::<checks::CheckFailure>() {
            Ok(failed) => Error::CpuCheck { kernel, check: failed.check, report: in_block(failed.report) },
            Err(payload) => Error::KernelPanic {
                kernel,
                message: panic_message(payload.as_ref()),
                location: PANIC_AT.with(|p| p.borrow_mut().take()),
            },
        },
        fibers::Failure::Message(message) => Error::KernelPanic { kernel, message, location: None },
        fibers::Failure::Check(check, report) => Error::CpuCheck { kernel, check, report: in_block(report) },
        fibers::Failure::Trapped { thread, stalled } => {
            let who = fibers::thread_name(cfg.block, thread);
            let (check, report) = if stalled {
                let limit = launch.watchdog.map_or(0, |d| d.as_millis());
                (
                    CpuCheck::Watchdog,
                    format!(
                        "{who} ran for {limit} ms without reaching a barrier, a warp operation or its end \
                         (barrier epoch {epoch}){}; a spin-wait on a flag that another thread of the block sets \
                         never ends on the CPU executor, which runs the other thread only when this one waits \
                         (and on the GPU such a wait is undefined without a barrier) — set \
                         OXIDE_CPU_WATCHDOG_MS to allow more time",
                        spinning_at(guard::take_stall_trace())
                    ),
                )
            } else {
                (
                    CpuCheck::StackOverflow,
                    format!(
                        "{who} overflowed its {} KiB stack (barrier epoch {epoch}): unbounded or deep \
                         recursion, or large local arrays (a GPU thread has 1 KiB of stack by default, at \
                         most {} KiB)",
                        launch.stack_bytes / 1024,
                        super::MAX_LOCAL_PER_THREAD / 1024
                    ),
                )
            };
            Error::CpuCheck { kernel, check, report: in_block(report) }
        }
    }
}

/// `, spinning at <frames of the kernel>` from the backtrace the stall handler took, or nothing:
/// the first frames that are not the handler's, the standard library's or the executor's.
fn spinning_at(trace: Option<std::backtrace::Backtrace>) -> String {
    const INTERNAL: &[&str] = &[
        "std::",
        "core::",
        "alloc::",
        "corosensei::",
        "__rust",
        "<unknown>",
        "oxide_rt::host::cpu::guard",
        "oxide_rt::host::cpu::fibers",
        "oxide_rt::host::cpu::plain",
    ];
    let Some(trace) = trace else { return String::new() };
    // `Backtrace`'s text: a line `N: function` per frame, then `at file:line:col` when known.
    let text = trace.to_string();
    let mut frames: Vec<(&str, Option<&str>)> = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(place) = line.strip_prefix("at ") {
            if let Some(last) = frames.last_mut() {
                last.1 = Some(place);
            }
        } else if let Some((_, function)) = line.split_once(": ") {
            frames.push((function, None));
        }
    }
    let internal = |f: &str| INTERNAL.iter().any(|p| f.starts_with(p)) || f.contains(" as core::");
    let kernel: Vec<String> = frames
        .iter()
        .skip_while(|(f, _)| internal(f))
        .take_while(|(f, _)| !internal(f)) // back in the executor, below the kernel
        .take(3)
        .map(|(f, place)| match place {
            Some(place) => format!("{f} at {place}"),
            None => format!("{f} (no line for this instruction)"),
        })
        .collect();
    if kernel.is_empty() {
        return String::new();
    }
    format!(", spinning at {}", kernel.join(", called from "))
}

/// Runs a barrier-free block on the worker's plain-loop stack (guarded: see `guard`).
fn plain_on_stack<F: Fn() + Sync>(
    stack: &mut Option<fibers::ColoredStack>,
    block: Dim3,
    base: usize,
    thread_body: &F,
) -> Result<(), fibers::Failure> {
    let run = || panic::catch_unwind(AssertUnwindSafe(|| plain_block_call(block, base, thread_body))).err();
    let Some(s) = stack.take() else { return run().map_or(Ok(()), |p| Err(fibers::Failure::Panic(p))) };
    let guard_page = s.guard();
    // The coroutine never suspends (a collective in plain mode panics), and it is resumed until
    // it returns, or dropped (which unwinds it), before this function returns.
    // SAFETY: so its borrows of `thread_body` outlive it.
    let mut co: Coroutine<(), (), guard::Return, fibers::ColoredStack> =
        unsafe { Coroutine::with_stack_unchecked(s, move |_: &fibers::Yielder, ()| run()) };
    let guarded = [guard::Guarded::new(co.trap_handler(), guard_page)];
    let outcome = guard::armed(&guarded, || co.resume(()));
    let payload = match outcome {
        CoroutineResult::Return(payload) => {
            *stack = Some(co.into_stack());
            payload
        }
        CoroutineResult::Yield(()) => {
            drop(co);
            Some(Box::new("the plain loop of a barrier-free kernel suspended") as Box<dyn std::any::Any + Send>)
        }
    };
    match payload {
        None => Ok(()),
        Some(p) => match guard::trapped(p.as_ref()) {
            Some(stalled) => {
                Err(fibers::Failure::Trapped { thread: crate::device::cpu::current_linear() as usize, stalled })
            }
            None => Err(fibers::Failure::Panic(p)),
        },
    }
}

/// [`plain_block`] behind a call boundary: inside the coroutine's closure, the kernel's closure
/// is reached through pointers LLVM knows nothing about, and it would reload every captured
/// value at every thread; as a `&F` parameter it is known not to change (saxpy: 2x faster).
#[inline(never)]
fn plain_block_call<F: Fn()>(block: Dim3, base: usize, thread_body: &F) {
    plain_block(block, base, thread_body)
}

/// The threads of a barrier-free block, one after another; `base` is the launch index of the
/// block's first thread (the linear thread index in the block advances with `x` fastest).
#[inline(always)]
fn plain_block<F: Fn()>(block: Dim3, base: usize, thread_body: &F) {
    let mut global = base;
    for z in 0..block.z {
        for y in 0..block.y {
            set_plain_row(y, z);
            for x in 0..block.x {
                set_plain_thread(x, global);
                thread_body();
                global = global.wrapping_add(1);
            }
        }
    }
}
