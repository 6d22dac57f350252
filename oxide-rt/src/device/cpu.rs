//! Host backend of the device API: what a kernel's device calls do when the kernels module is
//! compiled for the host and run by the CPU executor (`host::cpu`).
//!
//! The executor publishes the running simulated thread through a per-OS-thread context
//! ([`CTX`]): indices, the block's shared memory ([`BlockMem`]) and, for kernels that run as
//! fibers, the thread's [`Fiber`] slot. A collective operation (barrier, shuffle, vote, ...)
//! writes its request into the slot and suspends the fiber; the block scheduler
//! (`host::cpu::fibers`) resumes it once every participant has arrived, with the result in the
//! slot. All threads of a block run on one OS thread, so none of this needs locks.

use crate::device::racecheck::{Access, Accessor, Races};
use crate::device::warp::ShflMode;
use crate::dim::Dim3;
use std::alloc::{self, Layout};
use std::cell::{Cell, RefCell};
use std::panic::Location;
use std::ptr::{self, NonNull};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};

/// The fiber yielder type of the CPU executor (resume input, yield output: nothing; results
/// travel through the [`Fiber`] slot).
pub(crate) type Yielder = corosensei::Yielder<(), ()>;

/// Where in the kernel's source a collective operation was called.
pub(crate) type Site = &'static Location<'static>;

/// A collective operation a simulated thread waits at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Op {
    /// Running, or ready to run.
    Running,
    /// Returned from the kernel.
    Done,
    /// `bar.sync` / `bar.red` with this thread's predicate, called at `site`.
    Barrier { pred: bool, site: Site },
    /// A `*.sync` warp operation over the lanes in `mask`, called at `site`.
    Warp { mask: u32, kind: WarpOp, site: Site },
    /// `activemask`.
    ActiveMask,
    /// `mbarrier.try_wait.parity` on the barrier at `addr` for a phase that has not completed.
    MbarrierWait { addr: usize, parity: u32, site: Site },
    /// `barrier.cluster.wait` for cluster barrier phase `phase` (counted from 0), called at `site`.
    ClusterWait { phase: u32, site: Site },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum WarpOp {
    Sync,
    All(bool),
    Any(bool),
    Ballot(bool),
    Shfl {
        mode: ShflMode,
        value: u32,
        arg: u32,
        width: u32,
    },
    /// A tensor-core collective (`mma.sync`, `ldmatrix`) of all 32 lanes, named by its PTX
    /// instruction; its operands travel through the block's `cpu_tensor` exchange.
    Exchange(&'static str),
}

impl WarpOp {
    /// Lanes of one group must execute the same kind of operation (their operands may differ);
    /// tensor-core collectives the same instruction, since their exchanged words mean different
    /// things (registers or row addresses).
    pub(crate) fn same_kind(self, other: WarpOp) -> bool {
        match (self, other) {
            (WarpOp::Exchange(a), WarpOp::Exchange(b)) => a == b,
            _ => core::mem::discriminant(&self) == core::mem::discriminant(&other),
        }
    }
}

impl Op {
    pub(crate) fn describe(self) -> String {
        match self {
            Op::Running => "running".into(),
            Op::Done => "exited".into(),
            Op::Barrier { site, .. } => format!("sync_threads at {site}"),
            Op::ActiveMask => "active_mask".into(),
            Op::MbarrierWait { addr, parity, site } => {
                format!("mbarrier wait for parity {parity} (barrier at {addr:#x}) at {site}")
            }
            Op::ClusterWait { phase, site } => format!("cluster barrier wait (phase {phase}) at {site}"),
            Op::Warp { mask, kind, site } => {
                let name = match kind {
                    WarpOp::Sync => "sync_warp",
                    WarpOp::All(_) => "vote_all",
                    WarpOp::Any(_) => "vote_any",
                    WarpOp::Ballot(_) => "vote_ballot",
                    WarpOp::Shfl { .. } => "shfl",
                    WarpOp::Exchange(what) => what,
                };
                format!("{name}(mask {mask:#010x}) at {site}")
            }
        }
    }
}

/// One simulated thread's mailbox to the block scheduler.
pub(crate) struct Fiber {
    pub(crate) op: Cell<Op>,
    /// The result of the last collective: (value, participants).
    pub(crate) result: Cell<(u32, u32)>,
    pub(crate) yielder: Cell<*const Yielder>,
    /// Set when the block is being torn down (another thread panicked): the fiber unwinds.
    pub(crate) abort: Cell<bool>,
    /// Cluster barrier arrivals so far (`cluster::arrive`).
    pub(crate) cluster_arrivals: Cell<u32>,
}

impl Fiber {
    pub(crate) fn new() -> Fiber {
        Fiber {
            op: Cell::new(Op::Running),
            result: Cell::new((0, 0)),
            yielder: Cell::new(ptr::null()),
            abort: Cell::new(false),
            cluster_arrivals: Cell::new(0),
        }
    }
}

/// Unwind payload used to tear down the fibers of a failed block; never reported.
pub(crate) struct BlockAborted;

/// One `static` shared declaration's storage in a block: the declaration's key, the storage,
/// its layout, and where it is declared.
struct Static {
    key: *const u8,
    ptr: NonNull<u8>,
    layout: Layout,
    declared: Site,
}

/// Where a pointer lies in a block's shared memory: the static declaration it belongs to
/// (`None` for the dynamic window) and the offset in it.
type Located = (Option<(*const u8, Layout, Site)>, usize);

/// Shared memory of one block: one zeroed allocation per `static` shared declaration (created on
/// first use) and the launch's dynamic shared memory.
pub(crate) struct BlockMem {
    /// Unique over the process: shared-memory views remember it (see `SharedSlice`).
    id: u64,
    statics: RefCell<Vec<Static>>,
    dynamic: Option<(NonNull<u8>, Layout)>,
    /// The executor's checks are on for this launch.
    pub(crate) checks: bool,
    /// Block barriers completed so far (the barrier epoch); a cluster barrier counts too.
    pub(crate) epoch: Cell<u32>,
    /// Cluster barriers completed so far by the block's cluster (one block without clusters).
    pub(crate) cluster_epoch: Cell<u32>,
    /// The block's rank in its cluster (0 without clusters).
    pub(crate) rank: Cell<u32>,
    /// `sync_warp`s completed so far, per warp of the block.
    pub(crate) warp_syncs: [Cell<u32>; 32],
    /// The shadow of every shared allocation, when the checks are on.
    races: RefCell<Races>,
    /// Operand exchange of the tensor-core collectives and pending `cp.async` copies.
    pub(crate) tensor: RefCell<crate::device::cpu_tensor::TensorState>,
    /// The block's mbarriers.
    pub(crate) hopper: RefCell<crate::device::cpu_hopper::HopperState>,
}

const DYNAMIC_ALIGN: usize = 16;

impl BlockMem {
    pub(crate) fn new(dynamic_bytes: usize, checks: bool) -> BlockMem {
        let dynamic = (dynamic_bytes > 0).then(|| {
            // 16 is a power of two and the size is at most the GPU limit (checked at launch).
            let layout = Layout::from_size_align(dynamic_bytes, DYNAMIC_ALIGN).unwrap_or(Layout::new::<u128>());
            (zeroed(layout), layout)
        });
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let mut races = Races::default();
        if let (true, Some((p, layout))) = (checks, dynamic) {
            races.add(p.as_ptr(), layout.size(), None);
        }
        BlockMem {
            id,
            statics: RefCell::new(Vec::new()),
            dynamic,
            checks,
            epoch: Cell::new(0),
            cluster_epoch: Cell::new(0),
            rank: Cell::new(0),
            warp_syncs: std::array::from_fn(|_| Cell::new(0)),
            races: RefCell::new(races),
            tensor: RefCell::new(Default::default()),
            hopper: RefCell::new(Default::default()),
        }
    }

    fn static_ptr(&self, key: *const u8, bytes: usize, align: usize, declared: Site) -> *mut u8 {
        let mut statics = self.statics.borrow_mut();
        if let Some(Static { ptr: p, layout: l, .. }) = statics.iter().find(|st| st.key == key) {
            // One declaration always asks for the same size; anything else would hand out a
            // view longer than the storage (only a direct call of the hidden entry point can).
            if l.size() < bytes || l.align() < align {
                panic!(
                    "shared memory declaration asked for {bytes} bytes (alignment {align}) but has {} (alignment {})",
                    l.size(),
                    l.align()
                );
            }
            return p.as_ptr();
        }
        let layout = match Layout::from_size_align(bytes.max(1), align.max(1)) {
            Ok(l) => l,
            Err(_) => panic!("shared memory declaration of {bytes} bytes with alignment {align} is not a valid layout"),
        };
        let p = zeroed(layout);
        statics.push(Static { key, ptr: p, layout, declared });
        if self.checks {
            self.races.borrow_mut().add(p.as_ptr(), layout.size(), Some(declared));
        }
        p.as_ptr()
    }
}

fn zeroed(layout: Layout) -> NonNull<u8> {
    // SAFETY: `layout` has a non-zero size (callers pass at least 1 byte).
    let p = unsafe { alloc::alloc_zeroed(layout) };
    match NonNull::new(p) {
        Some(p) => p,
        None => alloc::handle_alloc_error(layout),
    }
}

impl BlockMem {
    /// Where `p` lies in this block's shared memory: the declaration it belongs to (`None` for
    /// the dynamic window) and the offset in it.
    fn locate(&self, p: *const u8) -> Option<Located> {
        let a = p as usize;
        let within = |start: NonNull<u8>, len: usize| a.checked_sub(start.as_ptr() as usize).filter(|off| *off < len);
        for st in self.statics.borrow().iter() {
            if let Some(off) = within(st.ptr, st.layout.size()) {
                return Some((Some((st.key, st.layout, st.declared)), off));
            }
        }
        let (start, layout) = self.dynamic?;
        within(start, layout.size()).map(|off| (None, off))
    }

    /// Whether `p` lies in this block's shared memory.
    pub(crate) fn owns(&self, p: *const u8) -> bool {
        self.locate(p).is_some()
    }
}

impl Drop for BlockMem {
    fn drop(&mut self) {
        for Static { ptr: p, layout, .. } in self.statics.get_mut().drain(..) {
            // SAFETY: allocated by `zeroed` with this layout, freed once.
            unsafe { alloc::dealloc(p.as_ptr(), layout) }
        }
        if let Some((p, layout)) = self.dynamic.take() {
            // SAFETY: as above.
            unsafe { alloc::dealloc(p.as_ptr(), layout) }
        }
    }
}

/// The per-OS-thread view of the simulated thread that runs now.
///
/// The plain loop (barrier-free kernels) writes only what changes from one thread to the next:
/// `thread_x` and `global` per thread, `thread_y`/`thread_z` per row. The thread's linear index
/// in the block is not stored; it is `global - block_base`.
struct Ctx {
    thread_x: Cell<u32>,
    thread_y: Cell<u32>,
    thread_z: Cell<u32>,
    /// The thread's index in the whole launch (what `thread::index()` returns):
    /// `block_base + linear index in the block`. Atomic (relaxed loads and stores are plain
    /// moves) because the watchdog reads it from another thread, as the sign of progress.
    global: AtomicUsize,
    /// A block runs on this OS thread now (for the watchdog).
    busy: AtomicBool,
    /// Linear index of the block in the grid times the threads per block.
    block_base: Cell<usize>,
    block_idx: Cell<Dim3>,
    block_dim: Cell<Dim3>,
    grid_dim: Cell<Dim3>,
    /// Null outside a launch.
    mem: Cell<*const BlockMem>,
    /// Null when the kernel runs as a plain loop (no collectives allowed).
    fiber: Cell<*const Fiber>,
    /// The cluster whose blocks run on this OS thread now; null without clusters.
    cluster: Cell<*const ClusterRun>,
}

/// The blocks of one thread-block cluster, which the executor runs together (their threads are
/// fibers of one scheduler, `host::cpu::fibers`).
pub(crate) struct ClusterRun {
    /// The cluster's shape in blocks, its index in the grid of clusters, and that grid.
    pub(crate) dims: Dim3,
    pub(crate) idx: Dim3,
    pub(crate) grid: Dim3,
    /// By rank: the block's index in the grid, the launch index of its first thread, and its
    /// shared memory, which lives until the whole cluster has finished.
    pub(crate) blocks: Vec<(Dim3, usize, *const BlockMem)>,
}

const ZERO: Dim3 = Dim3::new(0, 0, 0);

thread_local! {
    static CTX: Ctx = const {
        Ctx {
            thread_x: Cell::new(0),
            thread_y: Cell::new(0),
            thread_z: Cell::new(0),
            global: AtomicUsize::new(0),
            busy: AtomicBool::new(false),
            block_base: Cell::new(0),
            block_idx: Cell::new(ZERO),
            block_dim: Cell::new(ZERO),
            grid_dim: Cell::new(ZERO),
            mem: Cell::new(ptr::null()),
            fiber: Cell::new(ptr::null()),
            cluster: Cell::new(ptr::null()),
        }
    };
}

/// Publishes the block this OS thread runs now. `mem` must stay alive until [`leave_block`].
/// Returns the launch index of the block's first thread (see [`set_plain_thread`]).
pub(crate) fn enter_block(block_idx: Dim3, block_dim: Dim3, grid_dim: Dim3, mem: &BlockMem) -> usize {
    // `thread::index()` on the GPU: block * per_block + in_block, in usize. Wrapping, as a
    // release build computes it; only launches of more than 2^64 threads could wrap.
    let (b, gd) = (block_idx, grid_dim);
    let block = (gd.y as usize).wrapping_mul(b.z as usize).wrapping_add(b.y as usize);
    let block = (gd.x as usize).wrapping_mul(block).wrapping_add(b.x as usize);
    let base = block.wrapping_mul(block_dim.volume() as usize);
    CTX.with(|c| {
        c.block_idx.set(block_idx);
        c.block_dim.set(block_dim);
        c.grid_dim.set(grid_dim);
        c.block_base.set(base);
        c.global.store(base, Relaxed);
        c.mem.set(mem);
        c.fiber.set(ptr::null());
        c.busy.store(true, Relaxed);
    });
    base
}

/// Where the watchdog reads this OS thread's progress: the running thread's launch index, and
/// whether a block runs. Both live as long as the OS thread.
pub(crate) fn progress() -> (*const AtomicUsize, *const AtomicBool) {
    CTX.with(|c| (&c.global as *const AtomicUsize, &c.busy as *const AtomicBool))
}

/// Linear index in its block of the simulated thread that runs now.
pub(crate) fn current_linear() -> u32 {
    CTX.with(linear)
}

/// Publishes the cluster whose blocks run next (after [`enter_block`] of one of them); `run`
/// must stay alive until [`leave_block`].
pub(crate) fn enter_cluster(run: &ClusterRun) {
    CTX.with(|c| c.cluster.set(run));
}

/// Makes block `rank` of the published cluster the running one (its index, first thread and
/// shared memory), as fibers of several blocks take turns.
pub(crate) fn switch_block(rank: usize) {
    CTX.with(|c| {
        // SAFETY: `enter_cluster` published a run that outlives the cluster's fibers, and the blocks' memory with it.
        let run = unsafe { &*c.cluster.get() };
        let (idx, base, mem) = run.blocks[rank];
        c.block_idx.set(idx);
        c.block_base.set(base);
        c.mem.set(mem);
    });
}

/// The running thread's cluster: (shape, index in the grid of clusters, that grid, the block's
/// rank); `None` without clusters.
pub(crate) fn cluster() -> Option<(Dim3, Dim3, Dim3, u32)> {
    in_launch(|c| {
        let run = c.cluster.get();
        // SAFETY: as in `switch_block`; the memory is the running block's.
        (!run.is_null()).then(|| unsafe { ((*run).dims, (*run).idx, (*run).grid, (*c.mem.get()).rank.get()) })
    })
}

/// The address in block `rank`'s shared memory of what `local` is in the running block's (the
/// same declaration, made there on first use, or the same offset of the dynamic window).
/// Panics when `rank` is not a block of the cluster or `local` is not the running block's shared
/// memory.
#[track_caller]
pub(crate) fn map_to_rank(local: *mut u8, rank: u32) -> *mut u8 {
    let (mem, run) = in_launch(|c| (c.mem.get(), c.cluster.get()));
    // SAFETY: as in `shared_static`.
    let mem = unsafe { &*mem };
    if mem.rank.get() == rank {
        return local;
    }
    if run.is_null() {
        panic!("map_shared: rank {rank} in a launch without clusters (every block is rank 0 of its own)");
    }
    // SAFETY: as in `switch_block`.
    let run = unsafe { &*run };
    let Some(&(_, _, other)) = run.blocks.get(rank as usize) else {
        panic!("map_shared: rank {rank} is not a block of this cluster of {}", run.blocks.len())
    };
    // SAFETY: the cluster's blocks' memory lives until the cluster has finished.
    let other = unsafe { &*other };
    match mem.locate(local) {
        Some((Some((key, layout, site)), off)) => {
            other.static_ptr(key, layout.size(), layout.align(), site).wrapping_add(off)
        }
        Some((None, off)) => match other.dynamic {
            Some((p, _)) => p.as_ptr().wrapping_add(off),
            None => panic!("map_shared: the block of rank {rank} has no dynamic shared memory"),
        },
        None => panic!("map_shared: the array is not this block's shared memory"),
    }
}

/// `barrier.cluster.arrive`: counts this thread's arrival (it does not wait).
pub(crate) fn cluster_arrive() {
    let f = in_launch(|c| c.fiber.get());
    if f.is_null() {
        not_in_fiber("cluster::arrive")
    }
    // SAFETY: as in `collective`.
    let fiber = unsafe { &*f };
    fiber.cluster_arrivals.set(fiber.cluster_arrivals.get() + 1);
}

/// `barrier.cluster.wait`: waits until every thread of the cluster that has not returned has
/// arrived as often as this one.
#[track_caller]
pub(crate) fn cluster_wait() {
    let f = in_launch(|c| c.fiber.get());
    if f.is_null() {
        not_in_fiber("cluster::wait")
    }
    // SAFETY: as in `collective`.
    let arrivals = unsafe { (*f).cluster_arrivals.get() };
    if arrivals == 0 {
        panic!("cluster::wait without a cluster::arrive before it (the GPU leaves this undefined)");
    }
    collective("cluster::wait", Op::ClusterWait { phase: arrivals - 1, site: Location::caller() });
}

pub(crate) fn leave_block() {
    CTX.with(|c| {
        c.cluster.set(ptr::null());
        c.mem.set(ptr::null());
        c.fiber.set(ptr::null());
        c.block_idx.set(ZERO);
        c.block_dim.set(ZERO);
        c.grid_dim.set(ZERO);
        c.block_base.set(0);
        c.global.store(0, Relaxed);
        c.busy.store(false, Relaxed);
    });
}

/// Publishes the row (`thread_idx.y`, `.z`) of the threads that run next in plain-loop mode.
#[inline(always)]
pub(crate) fn set_plain_row(y: u32, z: u32) {
    CTX.with(|c| {
        c.thread_y.set(y);
        c.thread_z.set(z);
    });
}

/// Publishes the simulated thread that runs next in plain-loop mode (`enter_block` cleared the
/// fiber slot, [`set_plain_row`] set y and z): the hot path of barrier-free kernels, so only
/// what changes per thread. `global` is the block's base (from `enter_block`) plus the
/// thread's linear index in the block.
#[inline(always)]
pub(crate) fn set_plain_thread(x: u32, global: usize) {
    CTX.with(|c| {
        c.thread_x.set(x);
        c.global.store(global, Relaxed);
    });
}

/// Publishes the fiber that runs next.
#[inline(always)]
pub(crate) fn set_thread(thread_idx: Dim3, linear: u32, fiber: *const Fiber) {
    CTX.with(|c| {
        c.thread_x.set(thread_idx.x);
        c.thread_y.set(thread_idx.y);
        c.thread_z.set(thread_idx.z);
        c.global.store(c.block_base.get().wrapping_add(linear as usize), Relaxed);
        c.fiber.set(fiber);
    });
}

#[cold]
#[inline(never)]
fn outside_launch() -> ! {
    // A device function called outside a launch is a programming error in host code, like
    // calling `threadIdx` from a CUDA host function (which does not even compile there).
    panic!("oxide device API called outside a kernel launch; use the kernel's cpu_<name> launcher")
}

#[inline(always)]
fn in_launch<R>(f: impl FnOnce(&Ctx) -> R) -> R {
    CTX.with(|c| {
        if c.mem.get().is_null() {
            outside_launch()
        }
        f(c)
    })
}

// Only `thread_idx` and `global_linear_index` check for a launch: every index computation reads
// one of them, and the other three stay plain loads on the hot path of barrier-free kernels
// (outside a launch they read 0).
#[inline]
pub fn thread_idx() -> Dim3 {
    in_launch(|c| Dim3::new(c.thread_x.get(), c.thread_y.get(), c.thread_z.get()))
}

/// The unique index of this thread in the launch (`thread::index()`), kept up to date by the
/// executor instead of recomputed from the four index registers.
#[inline]
pub fn global_linear_index() -> usize {
    in_launch(|c| c.global.load(Relaxed))
}

/// Linear thread index in the block (`x` fastest).
#[inline(always)]
fn linear(c: &Ctx) -> u32 {
    c.global.load(Relaxed).wrapping_sub(c.block_base.get()) as u32
}

#[inline]
pub fn block_idx() -> Dim3 {
    CTX.with(|c| c.block_idx.get())
}

#[inline]
pub fn block_dim() -> Dim3 {
    CTX.with(|c| c.block_dim.get())
}

#[inline]
pub fn grid_dim() -> Dim3 {
    CTX.with(|c| c.grid_dim.get())
}

/// Linear thread index in the block modulo the warp size.
#[inline]
pub fn lane_id() -> u32 {
    in_launch(|c| linear(c) % 32)
}

/// Linear thread index in the block divided by the warp size.
#[inline]
pub fn warp_id() -> u32 {
    in_launch(|c| linear(c) / 32)
}

#[cold]
#[inline(never)]
fn not_in_fiber(what: &str) -> ! {
    panic!(
        "`{what}` was reached, but the CPU executor runs this kernel as a plain loop because its PTX \
         contains no barrier or warp instruction; the host build of the kernel differs from the \
         device build (check `cfg(target_arch)` in the kernel)"
    )
}

/// Suspends the current fiber at collective `op` until the block scheduler resolves it.
#[inline]
pub(crate) fn collective(what: &str, op: Op) -> (u32, u32) {
    let f = in_launch(|c| c.fiber.get());
    if f.is_null() {
        not_in_fiber(what)
    }
    // SAFETY: the scheduler points `fiber` at the slot of the fiber running now on this OS thread; the slot lives until the whole block has finished, which is after this call returns.
    let fiber = unsafe { &*f };
    if fiber.abort.get() {
        std::panic::resume_unwind(Box::new(BlockAborted));
    }
    fiber.op.set(op);
    let y = fiber.yielder.get();
    // SAFETY: set by the fiber's entry closure to its own yielder, which lives as long as the coroutine; we are running on that coroutine's stack right now.
    unsafe { (*y).suspend(()) };
    if fiber.abort.get() {
        std::panic::resume_unwind(Box::new(BlockAborted));
    }
    fiber.result.get()
}

/// Runs `f` with the running block's memory and the running thread's linear index in it.
pub(crate) fn with_block<R>(f: impl FnOnce(&BlockMem, u32) -> R) -> R {
    in_launch(|c| {
        // SAFETY: as in `shared_static`.
        let mem = unsafe { &*c.mem.get() };
        f(mem, linear(c))
    })
}

#[track_caller]
pub fn sync_threads() {
    collective("sync_threads", Op::Barrier { pred: false, site: Location::caller() });
}

/// Number of threads of the block whose `pred` is true (`__syncthreads_count`).
#[track_caller]
pub fn sync_threads_count(pred: bool) -> u32 {
    collective("sync_threads_count", Op::Barrier { pred, site: Location::caller() }).0
}

#[track_caller]
pub fn sync_threads_and(pred: bool) -> bool {
    let (count, n) = collective("sync_threads_and", Op::Barrier { pred, site: Location::caller() });
    count == n
}

#[track_caller]
pub fn sync_threads_or(pred: bool) -> bool {
    collective("sync_threads_or", Op::Barrier { pred, site: Location::caller() }).0 > 0
}

#[track_caller]
fn own_lane_in(what: &str, mask: u32) {
    let lane = lane_id();
    if mask & (1 << lane) == 0 {
        panic!("{what}: mask {mask:#010x} does not name the calling lane {lane}; CUDA requires it");
    }
}

#[track_caller]
pub fn sync_warp(mask: u32) {
    own_lane_in("sync_warp", mask);
    collective("sync_warp", Op::Warp { mask, kind: WarpOp::Sync, site: Location::caller() });
}

/// The lanes of this warp that are executing `active_mask` together: those waiting there when
/// every thread of the block has run as far as it can.
pub fn active_mask() -> u32 {
    collective("active_mask", Op::ActiveMask).0
}

#[track_caller]
pub fn shfl_u32(mode: ShflMode, mask: u32, value: u32, lane_or_delta: u32, width: u32) -> u32 {
    if !(width.is_power_of_two() && width <= 32) {
        panic!("shuffle width {width} is not a power of two between 1 and 32");
    }
    own_lane_in("shfl", mask);
    let kind = WarpOp::Shfl { mode, value, arg: lane_or_delta, width };
    collective("shfl", Op::Warp { mask, kind, site: Location::caller() }).0
}

#[track_caller]
pub fn vote_all(mask: u32, pred: bool) -> bool {
    own_lane_in("vote_all", mask);
    collective("vote_all", Op::Warp { mask, kind: WarpOp::All(pred), site: Location::caller() }).0 != 0
}

#[track_caller]
pub fn vote_any(mask: u32, pred: bool) -> bool {
    own_lane_in("vote_any", mask);
    collective("vote_any", Op::Warp { mask, kind: WarpOp::Any(pred), site: Location::caller() }).0 != 0
}

#[track_caller]
pub fn vote_ballot(mask: u32, pred: bool) -> u32 {
    own_lane_in("vote_ballot", mask);
    collective("vote_ballot", Op::Warp { mask, kind: WarpOp::Ballot(pred), site: Location::caller() }).0
}

/// Lane whose value a shuffle returns to `lane`, or `None` for the caller's own value
/// (PTX `shfl.sync` with CUDA's `c` operand for `width`: `((32 - width) << 8) | clamp`).
/// Only `b[4:0]` counts, as in the ISA's pseudocode: a delta, source lane or lane mask of 40
/// acts as 8.
pub(crate) fn shfl_source(mode: ShflMode, lane: u32, b: u32, width: u32) -> Option<u32> {
    let b = b & 31;
    let seg = 32 - width as i64; // segment mask, bits above the lane-in-segment
    let lane = lane as i64;
    let min_lane = lane & seg;
    let (j, ok) = match mode {
        ShflMode::Up => {
            let j = lane - b as i64;
            (j, j >= min_lane)
        }
        _ => {
            let max_lane = min_lane | (31 & !seg);
            let j = match mode {
                ShflMode::Down => lane + b as i64,
                ShflMode::Xor => lane ^ b as i64,
                _ => min_lane | (b as i64 & 31 & !seg),
            };
            (j, j <= max_lane)
        }
    };
    ok.then_some(j as u32)
}

/// Per-block storage of the `static` shared declaration identified by `key` and made at
/// `declared` (the `shared_array!`).
pub fn shared_static(key: *const u8, bytes: usize, align: usize, declared: Site) -> *mut u8 {
    let mem = in_launch(|c| c.mem.get());
    // SAFETY: non-null (checked by `in_launch`) and alive until the block finishes, which is after every thread of the block has returned.
    unsafe { (*mem).static_ptr(key, bytes, align, declared) }
}

/// Records an access of `bytes` bytes of shared memory at `at` made at `site`, for the race
/// checks; stops the thread with `Error::CpuCheck` when it races with an earlier access. Only
/// called when [`shared_block`] says the block is checked.
#[cold]
#[inline(never)]
pub(crate) fn shared_access(at: *const u8, bytes: usize, access: Access, site: Site) {
    let found = in_launch(|c| {
        let mem = c.mem.get();
        // SAFETY: as in `shared_static`.
        let mem = unsafe { &*mem };
        if !mem.checks {
            return Ok(());
        }
        let thread = linear(c);
        let by = Accessor {
            thread,
            block: mem.rank.get(),
            block_dim: c.block_dim.get(),
            epoch: mem.epoch.get(),
            cluster_epoch: mem.cluster_epoch.get(),
            warp_syncs: mem.warp_syncs[(thread / 32) as usize % 32].get(),
        };
        // Another block's memory of the cluster (`map_shared`) is checked in that block's shadow.
        let run = c.cluster.get();
        let owner = match run.is_null() || mem.owns(at) {
            true => mem,
            // SAFETY: as in `switch_block`; the cluster's blocks' memory outlives its threads.
            false => unsafe { (*run).blocks.iter().map(|b| &*b.2).find(|m| m.owns(at)).unwrap_or(mem) },
        };
        owner.races.borrow_mut().access(at, bytes, access, site, &by)
    });
    if let Err((check, report)) = found {
        crate::host::cpu::checks::fail(check, report)
    }
}

/// The running block's id (see `BlockMem::id`); panics outside a launch.
pub fn shared_block_id() -> u64 {
    shared_block().0
}

/// The running block's id and whether its shared-memory accesses are checked for races;
/// panics outside a launch.
#[inline]
pub fn shared_block() -> (u64, bool) {
    let mem = in_launch(|c| c.mem.get());
    // SAFETY: as in `shared_static`.
    unsafe { ((*mem).id, (*mem).checks) }
}

/// This block's dynamic shared memory and its size (16-byte aligned; dangling when empty).
pub fn dynamic_shared() -> (*mut u8, usize) {
    let mem = in_launch(|c| c.mem.get());
    // SAFETY: as in `shared_static`.
    match unsafe { &(*mem).dynamic } {
        Some((p, layout)) => (p.as_ptr(), layout.size()),
        None => (ptr::without_provenance_mut(DYNAMIC_ALIGN), 0),
    }
}

// The threads of one block share an OS thread, but blocks run on different OS threads in
// parallel: every fence is a real fence.
pub fn fence_block() {
    fence(Ordering::SeqCst);
}

pub fn fence_device() {
    fence(Ordering::SeqCst);
}

pub fn fence_system() {
    fence(Ordering::SeqCst);
}

/// One claim on `counter` for `DisjointAppend::push` (the GPU aggregates a warp's claims; one
/// simulated thread at a time needs no aggregation).
pub fn append_claim(counter: &std::sync::atomic::AtomicU64) -> u64 {
    counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The 16 bytes at `p` (the GPU reads them with one vector load).
///
/// # Safety
/// `p` is 16-byte aligned with 16 readable bytes.
#[inline(always)]
pub(crate) unsafe fn read_global_16(p: *const u8) -> [u32; 4] {
    // SAFETY: aligned and readable (caller).
    unsafe { p.cast::<[u32; 4]>().read() }
}

/// The 8 bytes at `p` (the GPU reads them with one vector load).
///
/// # Safety
/// `p` is 8-byte aligned with 8 readable bytes.
#[inline(always)]
pub(crate) unsafe fn read_global_8(p: *const u8) -> [u32; 2] {
    // SAFETY: aligned and readable (caller).
    unsafe { p.cast::<[u32; 2]>().read() }
}
