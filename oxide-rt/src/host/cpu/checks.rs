//! Whether the CPU executor checks kernels for hazards, and how a failed check is reported.
//!
//! The checks (barrier divergence, shuffles reading absent lanes, shared-memory races; see
//! `Error::CpuCheck`) are on by default when oxide-rt is built with debug assertions (`cargo
//! test`, debug builds) and off in release builds. `OXIDE_CPU_CHECKS=1`/`0` overrides that
//! default, and [`set_cpu_checks`] overrides both for the rest of the process.

use crate::host::{CpuCheck, Error};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

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

/// The setting for a launch; `Err` when `OXIDE_CPU_CHECKS` holds something else than 0 or 1.
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
