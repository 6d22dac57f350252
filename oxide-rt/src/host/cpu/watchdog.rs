//! The watchdog of a launch: a thread that notices a worker whose simulated thread has made no
//! progress for too long, and interrupts it (`guard` turns the interruption into an error).
//!
//! Progress is the launch index of the simulated thread a worker runs (`device::cpu` keeps it
//! in an atomic the watchdog can read): it changes whenever the worker switches to another
//! thread, which every barrier, warp operation, return and new block does. A worker running
//! one thread for longer than the limit without any of those is stuck (a spin-wait on a flag
//! that another thread of its block would set, and that thread waits for this one to yield).

use super::guard;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Where the watchdog sees one worker.
struct Beat {
    thread: guard::ThreadId,
    global: *const AtomicUsize,
    busy: *const AtomicBool,
}

// SAFETY: the pointers are to the worker's thread-local progress atomics, which live as long as
// the worker's OS thread; a worker removes its `Beat` before it finishes (see `Worker`), and the
// watchdog reads them only under the lock that guards the list.
unsafe impl Send for Beat {}

pub(super) struct Watchdog {
    limit: Duration,
    beats: Mutex<Vec<Option<Beat>>>,
    /// Workers not finished yet; the watchdog stops when it reaches zero.
    remaining: Mutex<usize>,
    wake: Condvar,
}

/// A worker's registration; dropping it unregisters the worker.
pub(super) struct Worker<'a> {
    dog: &'a Watchdog,
    slot: usize,
}

impl Watchdog {
    pub(super) fn new(limit: Duration, workers: usize) -> Watchdog {
        Watchdog { limit, beats: Mutex::new(Vec::new()), remaining: Mutex::new(workers), wake: Condvar::new() }
    }

    fn beats(&self) -> MutexGuard<'_, Vec<Option<Beat>>> {
        self.beats.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers the calling OS thread as a worker.
    pub(super) fn register(&self) -> Worker<'_> {
        let (global, busy) = crate::device::cpu::progress();
        let mut beats = self.beats();
        beats.push(Some(Beat { thread: guard::current_thread(), global, busy }));
        Worker { dog: self, slot: beats.len() - 1 }
    }

    /// Watches the workers until all have finished.
    pub(super) fn watch(&self) {
        let period = (self.limit / 4).clamp(Duration::from_millis(1), Duration::from_millis(250));
        let mut seen: Vec<(usize, Instant)> = Vec::new();
        loop {
            {
                let remaining = self.remaining.lock().unwrap_or_else(|e| e.into_inner());
                if *remaining == 0 {
                    return;
                }
                let (remaining, _) = self.wake.wait_timeout(remaining, period).unwrap_or_else(|e| e.into_inner());
                if *remaining == 0 {
                    return;
                }
            }
            let now = Instant::now();
            let beats = self.beats();
            seen.resize(beats.len(), (usize::MAX, now));
            for (beat, seen) in beats.iter().zip(seen.iter_mut()) {
                let Some(beat) = beat else { continue };
                // SAFETY: registered, so alive (see `Beat`).
                let (busy, global) = unsafe { ((*beat.busy).load(Relaxed), (*beat.global).load(Relaxed)) };
                if !busy || global != seen.0 {
                    *seen = (global, now);
                } else if now.duration_since(seen.1) >= self.limit {
                    guard::interrupt(beat.thread);
                    seen.1 = now; // again after another full limit, should this one be missed
                }
            }
        }
    }
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        if let Some(beat) = self.dog.beats().get_mut(self.slot) {
            *beat = None;
        }
        let mut remaining = self.dog.remaining.lock().unwrap_or_else(|e| e.into_inner());
        *remaining = remaining.saturating_sub(1);
        if *remaining == 0 {
            self.dog.wake.notify_all();
        }
    }
}
