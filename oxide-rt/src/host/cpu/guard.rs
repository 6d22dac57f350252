//! Stack overflow and stalled threads, turned into errors instead of a dead process or a hang.
//!
//! Every simulated thread runs on a coroutine stack with a guard page below it (fibers, and the
//! plain loop too). While a block runs, the worker *arms* this module with the trap handles and
//! guard pages of the block's coroutines. A `SIGSEGV`/`SIGBUS` raised while the stack pointer is
//! inside one of those stacks, whose faulting address is in that stack's guard page, is a stack
//! overflow of that simulated thread: the signal handler (on an alternate signal stack, as the
//! thread's own stack is full) makes the coroutine return a [`Trapped`] payload instead of
//! continuing, with `corosensei`'s trap support, which resets the coroutine's stack. Every other
//! fault goes to the handler that was installed before ours (Rust's own, which reports an
//! overflow of a *real* thread's stack, or the default action).
//!
//! The watchdog thread of a launch (`cpu.rs`) sends [`stall_signal`] to a worker whose simulated
//! thread has made no progress for too long (a spin-wait on a flag that nobody will set runs
//! forever on the CPU, where the other threads of its block wait for it to yield). The handler
//! first records a backtrace of the interrupted thread (for the report: the spinning line),
//! then ends its coroutine the same way.
//!
//! The abandoned coroutine's frames are discarded without running destructors: what they owned
//! leaks, and the block (and launch) fails at once, so nothing observes their half-done state.
//! The backtrace is taken inside the signal handler, which allocates: it is only done when the
//! interrupted code is the program's own (not the C library, where it could hold the allocator's
//! lock) — a spinning kernel thread is in kernel code.
//!
//! Only Linux on x86-64 has this; elsewhere a stack overflow aborts the process as before and
//! the watchdog is off.

use std::any::Any;

/// The payload a trapped coroutine returns: a zero-sized value, so boxing it does not allocate.
pub(crate) struct Trapped<const STALLED: bool>;
/// The simulated thread overflowed its stack.
pub(crate) type Overflowed = Trapped<false>;
/// The simulated thread was stopped by the watchdog.
pub(crate) type Stalled = Trapped<true>;

/// What a trapped coroutine returned, if it was trapped: `Some(true)` when stalled.
pub(crate) fn trapped(payload: &(dyn Any + Send)) -> Option<bool> {
    if payload.is::<Stalled>() {
        Some(true)
    } else {
        payload.is::<Overflowed>().then_some(false)
    }
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub(crate) use imp::*;

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
pub(crate) use fallback::*;

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod imp {
    use super::{Overflowed, Stalled};
    use corosensei::trap::CoroutineTrapHandler;
    use std::backtrace::Backtrace;
    use std::cell::{Cell, RefCell};
    use std::ffi::c_void;
    use std::ptr;
    use std::sync::{Once, OnceLock};

    type Payload = Box<dyn std::any::Any + Send>;
    /// What every coroutine of the executor returns.
    pub(crate) type Return = Option<Payload>;

    /// A coroutine's trap handle and the guard page of its stack.
    pub(crate) struct Guarded {
        trap: CoroutineTrapHandler<Return>,
        guard: (usize, usize),
    }

    impl Guarded {
        pub(crate) fn new(trap: CoroutineTrapHandler<Return>, guard: (usize, usize)) -> Guarded {
            Guarded { trap, guard }
        }
    }

    thread_local! {
        // Read by the signal handler: const-initialised, and `STALL_TRACE` is touched in
        // `prepare_thread` first, so no lazy initialisation (which could allocate) happens in
        // the handler. `ARMED` is the slice of `armed`, or null.
        static ARMED: Cell<(*const Guarded, usize)> = const { Cell::new((ptr::null(), 0)) };
        static STALL_TRACE: RefCell<Option<Backtrace>> = const { RefCell::new(None) };
        static ALT_STACK: RefCell<Option<AltStack>> = const { RefCell::new(None) };
    }

    /// How the watchdog names a worker thread.
    pub(crate) type ThreadId = libc::pthread_t;

    /// The signal the watchdog sends to a stalled worker.
    pub(crate) fn stall_signal() -> libc::c_int {
        libc::SIGRTMIN() + 6
    }

    static PREVIOUS: OnceLock<[(libc::c_int, libc::sigaction); 3]> = OnceLock::new();

    /// Installs the signal handlers (once per process) and an alternate signal stack on this
    /// thread (once per thread). Returns whether traps can be caught here.
    pub(crate) fn prepare_thread() -> bool {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            let mut previous = [(0, zeroed_action()); 3];
            for (slot, sig) in previous.iter_mut().zip([libc::SIGSEGV, libc::SIGBUS, stall_signal()]) {
                let mut action = zeroed_action();
                action.sa_sigaction = on_signal as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                // SAFETY: `action` is a fully initialised sigaction whose handler has the
                // SA_SIGINFO signature; `slot.1` receives the previous action.
                let ok = unsafe {
                    libc::sigemptyset(&mut action.sa_mask);
                    libc::sigaction(sig, &action, &mut slot.1)
                } == 0;
                *slot = (if ok { sig } else { 0 }, slot.1);
            }
            let _ = PREVIOUS.set(previous);
        });
        STALL_TRACE.with(|_| ());
        PREVIOUS.get().is_some() && ALT_STACK.with(|a| a.borrow().is_some() || AltStack::install(&mut a.borrow_mut()))
    }

    fn zeroed_action() -> libc::sigaction {
        // SAFETY: sigaction is plain data for which all-zero is a valid (empty) value.
        unsafe { std::mem::zeroed() }
    }

    /// An alternate signal stack big enough to take a backtrace on, owned by its thread.
    struct AltStack {
        map: *mut c_void,
        len: usize,
    }

    const ALT_STACK_BYTES: usize = 256 * 1024;

    impl AltStack {
        fn install(slot: &mut Option<AltStack>) -> bool {
            let len = ALT_STACK_BYTES;
            // SAFETY: an anonymous private mapping; checked for failure below.
            let map = unsafe {
                libc::mmap(
                    ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if map == libc::MAP_FAILED {
                return false;
            }
            let stack = libc::stack_t { ss_sp: map, ss_flags: 0, ss_size: len };
            // SAFETY: `stack` describes the mapping just made, which lives until this thread's
            // `AltStack` is dropped (which disables it first).
            if unsafe { libc::sigaltstack(&stack, ptr::null_mut()) } != 0 {
                // SAFETY: the mapping made above, not in use.
                unsafe { libc::munmap(map, len) };
                return false;
            }
            *slot = Some(AltStack { map, len });
            true
        }
    }

    impl Drop for AltStack {
        fn drop(&mut self) {
            let disable = libc::stack_t { ss_sp: ptr::null_mut(), ss_flags: libc::SS_DISABLE, ss_size: 0 };
            // SAFETY: the thread is exiting and runs no signal handler on this stack any more
            // once it is disabled; then the mapping is ours to release.
            unsafe {
                libc::sigaltstack(&disable, ptr::null_mut());
                libc::munmap(self.map, self.len);
            }
        }
    }

    /// Runs `run`, which resumes the coroutines `guarded` describes (one at a time, on this OS
    /// thread), with the handlers armed for them: a trap whose stack pointer is in one of their
    /// stacks ends that coroutine. Arming once for a whole block keeps fiber switches cheap.
    pub(crate) fn armed<R>(guarded: &[Guarded], run: impl FnOnce() -> R) -> R {
        struct Disarm;
        impl Drop for Disarm {
            fn drop(&mut self) {
                ARMED.with(|a| a.set((ptr::null(), 0)));
            }
        }
        ARMED.with(|a| a.set((guarded.as_ptr(), guarded.len())));
        let _disarm = Disarm;
        run()
    }

    /// The backtrace the handler took of the last stalled thread on this OS thread.
    pub(crate) fn take_stall_trace() -> Option<Backtrace> {
        STALL_TRACE.with(|t| t.borrow_mut().take())
    }

    /// Sends the stall signal to worker `thread`.
    pub(crate) fn interrupt(thread: ThreadId) {
        // SAFETY: the caller guarantees `thread` is alive (it is registered with the watchdog
        // until it leaves, under the lock the caller holds).
        unsafe { libc::pthread_kill(thread, stall_signal()) };
    }

    pub(crate) fn current_thread() -> ThreadId {
        // SAFETY: no preconditions.
        unsafe { libc::pthread_self() }
    }

    extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
        // SAFETY: the kernel passes a valid siginfo and ucontext to an SA_SIGINFO handler.
        let uc = unsafe { &mut *(context as *mut libc::ucontext_t) };
        let regs = &mut uc.uc_mcontext.gregs;
        let (sp, pc) = (regs[libc::REG_RSP as usize] as usize, regs[libc::REG_RIP as usize] as usize);
        let stall = sig == stall_signal();
        let (first, len) = ARMED.with(|a| a.get());
        // SAFETY: `armed` keeps the slice alive and on this thread while it is published.
        let guarded = if first.is_null() { &[][..] } else { unsafe { std::slice::from_raw_parts(first, len) } };
        if let Some(armed) = guarded.iter().find(|g| g.trap.stack_ptr_in_bounds(sp)) {
            let ours = if stall {
                true
            } else {
                // SAFETY: as above; si_addr is valid for SIGSEGV and SIGBUS.
                let addr = unsafe { (*info).si_addr() } as usize;
                addr >= armed.guard.0 && addr < armed.guard.1
            };
            if ours {
                if stall && in_program_code(pc) {
                    // See the module docs for why this may allocate here.
                    let trace = Backtrace::force_capture();
                    STALL_TRACE.with(|t| {
                        if let Ok(mut t) = t.try_borrow_mut() {
                            *t = Some(trace);
                        }
                    });
                }
                // SAFETY: the interrupted context runs on this coroutine's stack (checked
                // above), and the registers it names are written back below, as
                // `setup_trap_handler` requires. The coroutine's state is abandoned (module docs).
                let new = unsafe {
                    if stall {
                        armed.trap.setup_trap_handler(|| Some(Box::new(Stalled {}) as Payload))
                    } else {
                        armed.trap.setup_trap_handler(|| Some(Box::new(Overflowed {}) as Payload))
                    }
                };
                regs[libc::REG_RIP as usize] = new.rip as i64;
                regs[libc::REG_RSP as usize] = new.rsp as i64;
                regs[libc::REG_RBP as usize] = new.rbp as i64;
                regs[libc::REG_RDI as usize] = new.rdi as i64;
                regs[libc::REG_RSI as usize] = new.rsi as i64;
                return;
            }
        }
        if stall {
            return; // a late stall signal: the thread has moved on
        }
        // SAFETY: forwarding the same arguments to the handler that was installed before.
        unsafe { forward(sig, info, context) }
    }

    /// Whether `pc` is in the program's own code rather than in a shared library.
    fn in_program_code(pc: usize) -> bool {
        let mut info: libc::Dl_info = libc::Dl_info {
            dli_fname: ptr::null(),
            dli_fbase: ptr::null_mut(),
            dli_sname: ptr::null(),
            dli_saddr: ptr::null_mut(),
        };
        // SAFETY: `info` is a valid out-pointer; `pc` is only looked up, not dereferenced.
        if unsafe { libc::dladdr(pc as *const c_void, &mut info) } == 0 || info.dli_fname.is_null() {
            return false;
        }
        // SAFETY: dladdr returned a NUL-terminated path of a loaded object.
        let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_bytes();
        !name.windows(3).any(|w| w == b".so")
    }

    /// Hands the signal to the handler installed before ours, or restores the default action
    /// and returns (the faulting instruction runs again and gets it).
    unsafe fn forward(sig: libc::c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
        let previous = PREVIOUS.get().and_then(|p| p.iter().find(|(s, _)| *s == sig).map(|(_, a)| *a));
        match previous {
            Some(action) if action.sa_sigaction != libc::SIG_DFL && action.sa_sigaction != libc::SIG_IGN => {
                if action.sa_flags & libc::SA_SIGINFO != 0 {
                    // SAFETY: an SA_SIGINFO handler has this signature.
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void) =
                        unsafe { std::mem::transmute(action.sa_sigaction) };
                    f(sig, info, context);
                } else {
                    // SAFETY: a plain handler has this signature.
                    let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(action.sa_sigaction) };
                    f(sig);
                }
            }
            _ => {
                let mut action = zeroed_action();
                action.sa_sigaction = libc::SIG_DFL;
                // SAFETY: restoring the default action of a fault signal.
                unsafe { libc::sigaction(sig, &action, ptr::null_mut()) };
            }
        }
    }
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
mod fallback {
    type Payload = Box<dyn std::any::Any + Send>;
    pub(crate) type Return = Option<Payload>;

    pub(crate) fn prepare_thread() -> bool {
        false
    }

    pub(crate) struct Guarded;

    impl Guarded {
        pub(crate) fn new(_trap: corosensei::trap::CoroutineTrapHandler<Return>, _guard: (usize, usize)) -> Guarded {
            Guarded
        }
    }

    pub(crate) fn armed<R>(_guarded: &[Guarded], run: impl FnOnce() -> R) -> R {
        run()
    }

    pub(crate) fn take_stall_trace() -> Option<std::backtrace::Backtrace> {
        None
    }

    pub(crate) type ThreadId = usize;

    pub(crate) fn current_thread() -> ThreadId {
        0
    }

    pub(crate) fn interrupt(_thread: ThreadId) {}
}
