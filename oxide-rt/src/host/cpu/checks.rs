//! Whether the CPU executor checks kernels for hazards, and how a failed check is reported.
//!
//! The checks (barrier divergence, shuffles reading absent lanes, shared-memory races; see
//! `Error::CpuCheck`) are on by default when oxide-rt is built with debug assertions (`cargo
//! test`, debug builds) and off in release builds. `OXIDE_CPU_CHECKS=1`/`0` overrides that
//! default, and [`set_cpu_checks`] overrides both for the rest of the process. The watchdog
//! (a thread that makes no progress) has its own switch, [`set_cpu_watchdog`] and
//! `OXIDE_CPU_WATCHDOG_MS`, and is on with the checks by default.

use crate::host::{CpuCheck, Error};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// 0: not set by the program (the environment or the build decides), 1: off, 2: on.
static CHECKS: AtomicU8 = AtomicU8::new(0);

/// Turns the CPU executor's checks on or off for every later launch of this process, whatever
/// `OXIDE_CPU_CHECKS` says. Off makes kernels that use shared memory or barriers run faster
/// (see BENCHMARKS.md for the cost of the checks).
pub fn set_cpu_checks(on: bool) {
    CHECKS.store(if on { 2 } else { 1 }, Ordering::Relaxed);
}

/// Whether launches on the CPU executor run the checks now ([`set_cpu_checks`], else
/// `OXIDE_CPU_CHECKS`, else on in builds with debug assertions). An `OXIDE_CPU_CHECKS` that is
/// neither `0` nor `1` counts as the default here and makes every launch fail with
/// `Error::Config`.
pub fn cpu_checks() -> bool {
    enabled().unwrap_or(cfg!(debug_assertions))
}

/// What a launch checks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    pub(crate) checks: bool,
    /// How long a simulated thread may run without progress; `None`: no watchdog.
    pub(crate) watchdog: Option<Duration>,
}

/// The settings for a launch now; `Err` for a malformed environment variable.
pub(crate) fn settings() -> Result<Settings, Error> {
    let checks = enabled()?;
    Ok(Settings { checks, watchdog: watchdog(checks)? })
}

/// Milliseconds the watchdog gives a thread by default, when the checks are on.
pub const DEFAULT_WATCHDOG_MS: u64 = 30_000;

/// `u64::MAX`: not set by the program; 0: off; else milliseconds.
static WATCHDOG_MS: AtomicU64 = AtomicU64::new(u64::MAX);

/// Sets how long a simulated thread may run without progress (reaching a barrier, a warp
/// operation or its end; another thread running) before its launch fails with
/// `Error::CpuCheck` naming it and the line it spins at, for every later launch of this
/// process; `None` turns the watchdog off. Without this, `OXIDE_CPU_WATCHDOG_MS` decides (0:
/// off), else [`DEFAULT_WATCHDOG_MS`] when the checks are on and off when not.
pub fn set_cpu_watchdog(limit: Option<Duration>) {
    let ms = limit.map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX - 1).clamp(1, u64::MAX - 1));
    WATCHDOG_MS.store(ms, Ordering::Relaxed);
}

fn watchdog(checks: bool) -> Result<Option<Duration>, Error> {
    let ms = match WATCHDOG_MS.load(Ordering::Relaxed) {
        u64::MAX => {
            static FROM_ENV: OnceLock<Result<Option<u64>, String>> = OnceLock::new();
            let parsed = FROM_ENV.get_or_init(|| match std::env::var("OXIDE_CPU_WATCHDOG_MS") {
                Ok(v) if !v.is_empty() => v.parse::<u64>().map(Some).map_err(|_| {
                    format!("OXIDE_CPU_WATCHDOG_MS={v:?} is not a number of milliseconds (0 turns the watchdog off)")
                }),
                _ => Ok(None),
            });
            match parsed.clone().map_err(Error::Config)? {
                Some(ms) => ms,
                None if checks => DEFAULT_WATCHDOG_MS,
                None => 0,
            }
        }
        ms => ms,
    };
    Ok((ms > 0).then(|| Duration::from_millis(ms)))
}

/// Whether the checks are on; `Err` when `OXIDE_CPU_CHECKS` holds something else than 0 or 1.
pub(crate) fn enabled() -> Result<bool, Error> {
    match CHECKS.load(Ordering::Relaxed) {
        1 => return Ok(false),
        2 => return Ok(true),
        _ => {}
    }
    static FROM_ENV: OnceLock<Result<bool, String>> = OnceLock::new();
    let parsed = FROM_ENV.get_or_init(|| match std::env::var("OXIDE_CPU_CHECKS") {
        Ok(v) if v == "1" || v.eq_ignore_ascii_case("on") => Ok(true),
        Ok(v) if v == "0" || v.eq_ignore_ascii_case("off") => Ok(false),
        Ok(v) if !v.is_empty() => Err(format!(
            "OXIDE_CPU_CHECKS={v:?} is neither 1 (check kernels for races and divergence) nor 0 (do not check)"
        )),
        _ => Ok(cfg!(debug_assertions)),
    });
    parsed.clone().map_err(Error::Config)
}

/// A failed check raised inside a simulated thread: the unwind payload that carries it to the
/// block runner (which turns it into `Error::CpuCheck`). Raised with `resume_unwind`, so the
/// panic hook never sees it.
pub(crate) struct CheckFailure {
    pub(crate) check: CpuCheck,
    pub(crate) report: String,
}

/// Stops the current simulated thread with a failed check.
pub(crate) fn fail(check: CpuCheck, report: String) -> ! {
    std::panic::resume_unwind(Box::new(CheckFailure { check, report }))
}
