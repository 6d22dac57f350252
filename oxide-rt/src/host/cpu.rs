//! The CPU executor: runs a kernel's blocks in parallel on host threads, each simulated GPU
//! thread with its own indices (see `device::cpu`).

use super::Error;
use crate::device::cpu::{set_ctx, ThreadCtx};
use crate::{Dim3, LaunchConfig};
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once};

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

fn check(kernel: &'static str, cfg: &LaunchConfig) -> Result<(), Error> {
    let bad = |reason: String| Err(Error::InvalidLaunch { kernel, reason });
    let (b, g) = (cfg.block, cfg.grid);
    if b.volume() == 0 || g.volume() == 0 {
        return bad(format!("empty launch: grid {g:?}, block {b:?}; every dimension must be at least 1"));
    }
    if b.volume() > MAX_THREADS {
        return bad(format!(
            "block of {} threads ({}x{}x{}) exceeds the limit of {MAX_THREADS} threads per block",
            b.volume(), b.x, b.y, b.z
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
    Ok(())
}

fn unlinear(i: u64, d: Dim3) -> Dim3 {
    let (x, y) = (d.x as u64, d.y as u64);
    Dim3::new((i % x) as u32, ((i / x) % y) as u32, (i / (x * y)) as u32)
}

thread_local! {
    /// Where the last panic on this thread happened, recorded by our panic hook.
    static PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
    static IN_KERNEL: RefCell<bool> = const { RefCell::new(false) };
}

/// Installs (once) a panic hook that records the location of panics inside CPU kernels and
/// keeps them quiet — they come back as `Error::KernelPanic` — while other panics print as usual.
fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if IN_KERNEL.with(|k| *k.borrow()) {
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
    #[allow(dead_code)]
    module: &'static crate::EmbeddedModule,
}

impl CpuKernel {
    pub const fn new(module: &'static crate::EmbeddedModule, name: &'static str) -> CpuKernel {
        CpuKernel { name, module }
    }
}

/// Runs `thread_body` once per simulated thread of the launch `cfg`.
pub fn cpu_launch<F: Fn() + Sync>(kernel: &CpuKernel, cfg: LaunchConfig, thread_body: F) -> Result<(), Error> {
    let kernel = kernel.name;
    check(kernel, &cfg)?;
    install_panic_hook();
    let blocks = cfg.grid.volume();
    let next = AtomicU64::new(0);
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(blocks as usize).max(1);
    let run_worker = || loop {
        let b = next.fetch_add(1, Ordering::Relaxed);
        if b >= blocks {
            break;
        }
        if let Err(e) = run_block(kernel, &cfg, unlinear(b, cfg.grid), &thread_body) {
            let mut f = failure.lock().unwrap_or_else(|e| e.into_inner());
            f.get_or_insert(e);
            next.store(blocks, Ordering::Relaxed); // stop handing out blocks
            break;
        }
    };
    std::thread::scope(|s| {
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

fn run_block<F: Fn() + Sync>(kernel: &'static str, cfg: &LaunchConfig, block_idx: Dim3, thread_body: &F) -> Result<(), Error> {
    IN_KERNEL.with(|k| *k.borrow_mut() = true);
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        for t in 0..cfg.block.volume() {
            set_ctx(Some(ThreadCtx { thread_idx: unlinear(t, cfg.block), block_idx, block_dim: cfg.block, grid_dim: cfg.grid }));
            thread_body();
        }
    }));
    set_ctx(None);
    IN_KERNEL.with(|k| *k.borrow_mut() = false);
    result.map_err(|payload| Error::KernelPanic {
        kernel,
        message: panic_message(payload.as_ref()),
        location: PANIC_AT.with(|p| p.borrow_mut().take()),
    })
}

/// `sync_threads` on the CPU.
pub(crate) fn barrier() {
    // Threads of a block run one after another here, so a barrier cannot be honoured.
    panic!("sync_threads is not supported by this CPU executor yet; run this kernel on the GPU");
}
