//! A spin-wait that never ends on the CPU executor is stopped by the watchdog. Its own test
//! binary: the watchdog's limit is process-wide.

use cpu_checks::kernels;
use oxide_rt::device::atomic::AtomicU32;
use oxide_rt::{CpuCheck, Error};
use std::time::{Duration, Instant};

#[test]
fn a_spin_wait_is_stopped_and_named() {
    oxide_rt::host::set_cpu_watchdog(Some(Duration::from_millis(500)));
    let flag = [AtomicU32::new(0)];
    let mut out = vec![0u32; 64];
    let start = Instant::now();
    let r = kernels::cpu_spin_wait(1u32, 64u32, &flag, &mut out);
    let took = start.elapsed();
    match r {
        Err(Error::CpuCheck { kernel: "spin_wait", check: CpuCheck::Watchdog, report }) => {
            assert!(report.starts_with("in block (0,0,0), thread (0,0,0) (warp 0, lane 0) ran for 500 ms"), "{report}");
            // Where it spins: the signal may land in the kernel or in what it calls (`spin_loop`'s
            // pause), and inlined frames carry short names, so only the lines are checked below.
            assert!(report.contains(", spinning at "), "{report}");
            // A line of the kernel (the debug info of the loop's instructions is not always the
            // loop's own line), or none for an instruction without one.
            let source = include_str!("../src/kernels.rs");
            let first = source.lines().position(|l| l.contains("pub fn spin_wait")).map_or(0, |i| i + 1);
            let at = |l: usize| report.contains(&format!("src/kernels.rs:{l}:"));
            let no_line = report.contains("(no line for this instruction)");
            assert!((first..first + 14).any(at) || no_line, "spin_wait starts at line {first}: {report}");
        }
        other => panic!("expected the watchdog to stop `spin_wait`, got {other:?}"),
    }
    assert!(took < Duration::from_secs(30), "stopped after {took:?}");
}
