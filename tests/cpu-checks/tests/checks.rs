//! Each deliberately wrong kernel gets a precise `Error::CpuCheck` on the CPU executor: no hang,
//! no abort, no silent wrong value. (The checks are on: tests build oxide-rt with debug
//! assertions.)

use cpu_checks::kernels;
use oxide_rt::{CpuCheck, Error};

fn report(r: Result<(), Error>, kernel: &str, check: CpuCheck) -> String {
    match r {
        Err(Error::CpuCheck { kernel: k, check: c, report }) if k == kernel && c == check => report,
        other => panic!("expected the {check} check to fail in `{kernel}`, got {other:?}"),
    }
}

/// `src/kernels.rs:LINE:` of the first line that contains `text`.
fn kernel_line(text: &str) -> String {
    kernel_line_after("", text)
}

/// `src/kernels.rs:LINE:` of the first line that contains `text` after the one with `anchor`.
fn kernel_line_after(anchor: &str, text: &str) -> String {
    let source = include_str!("../src/kernels.rs");
    let start = source.lines().position(|l| l.contains(anchor)).unwrap_or(0);
    let line = source.lines().skip(start).position(|l| l.contains(text)).map(|i| start + i + 1);
    format!("src/kernels.rs:{}:", line.unwrap_or_else(|| panic!("no line with {text:?}")))
}

#[test]
fn a_race_in_shared_memory() {
    let x: Vec<u32> = (0..128).collect();
    let mut out = vec![0u32; 128];
    let r = kernels::cpu_racy_neighbour(2u32, 64u32, &x, &mut out);
    let report = report(r, "racy_neighbour", CpuCheck::SharedRace);
    assert!(report.contains("write-after-read hazard on byte 4 of the shared array declared at"), "{report}");
    assert!(report.contains(&kernel_line("let tile = shared_array!(u32, TILE);")), "{report}");
    assert!(report.contains(&format!("thread (0,0,0) read it at tests/cpu-checks/{}", kernel_line("tile.get((t + 1)"))));
    assert!(
        report.contains(&format!("thread (1,0,0) writes it at tests/cpu-checks/{}", kernel_line("tile.set(t, x.get")))
    );
    assert!(report.contains("with no sync_threads between them (barrier epoch 1)"), "{report}");
    // With the barrier: no report, and the right values.
    kernels::cpu_synced_neighbour(2u32, 64u32, &x, &mut out).unwrap();
    let want: Vec<u32> = (0..128).map(|i| i / 64 * 64 + (i + 1) % 64).collect();
    assert_eq!(out, want);
}

#[test]
fn a_read_of_shared_memory_nobody_wrote() {
    let x: Vec<u32> = (0..64).collect();
    let mut out = vec![0u32; 64];
    let r = kernels::cpu_half_filled_tile(1u32, 64u32, &x, &mut out);
    let report = report(r, "half_filled_tile", CpuCheck::UninitShared);
    // Thread 0 reads element 63 first: bytes 252.. of the tile.
    assert!(report.contains("read of byte 252 of the shared array declared at"), "{report}");
    assert!(report.contains(&kernel_line_after("fn half_filled_tile", "shared_array!(u32, TILE)")), "{report}");
    let read = kernel_line_after("fn half_filled_tile", "tile.get(TILE - 1 - t)");
    assert!(report.contains(&format!("thread (0,0,0) reads it at tests/cpu-checks/{read}")), "{report}");
    assert!(report.contains("which no thread of this block has written"), "{report}");
}

#[test]
fn barriers_at_different_lines() {
    let mut out = vec![0u32; 64];
    let report =
        report(kernels::cpu_divergent_barrier(1u32, 64u32, &mut out), "divergent_barrier", CpuCheck::BarrierDivergence);
    assert!(report.contains(&kernel_line("sync_threads_count(true)")), "{report}");
    assert!(report.contains(&kernel_line("sync_threads_count(false)")), "{report}");
    assert!(report.contains("thread (0,0,0)") && report.contains("thread (16,0,0)"), "{report}");
    assert!(report.contains("barrier epoch 0"), "{report}");
}

#[test]
fn a_barrier_half_the_block_never_reaches() {
    let mut out = vec![0u32; 64];
    let r = kernels::cpu_early_exit_barrier(1u32, 64u32, 32, &mut out);
    let report = report(r, "early_exit_barrier", CpuCheck::BarrierDivergence);
    assert!(report.contains("thread (32,0,0) (warp 1, lane 0) has exited without reaching it"), "{report}");
    let barrier = kernel_line_after("pub fn early_exit_barrier", "sync_threads();");
    assert!(report.contains(&format!("waits at sync_threads at tests/cpu-checks/{barrier}")), "{report}");
    // Every thread reaching it: fine.
    kernels::cpu_early_exit_barrier(1u32, 64u32, 64, &mut out).unwrap();
    assert_eq!(out, (0..64).collect::<Vec<_>>());
}

#[test]
fn a_shuffle_reading_exited_lanes() {
    let mut out = vec![0u32; 32];
    let r = kernels::cpu_absent_lane_shuffle(1u32, 32u32, &mut out);
    let report = report(r, "absent_lane_shuffle", CpuCheck::WarpLane);
    assert!(report.contains("thread (0,0,0) (warp 0, lane 0) read lane 16"), "{report}");
    assert!(report.contains(&kernel_line("shfl_xor_sync(FULL_MASK")) && report.contains("has exited"), "{report}");
}

#[test]
fn deep_recursion_overflows_the_stack() {
    let mut out = vec![0u32; 256];
    // Thread 77 recurses 100 000 levels deep (about 25 MB of stack).
    let r = kernels::cpu_deep_recursion(4u32, 64u32, 77, 100_000, &mut out);
    let report = report(r, "deep_recursion", CpuCheck::StackOverflow);
    assert!(report.starts_with("in block (1,0,0), thread (13,0,0) (warp 0, lane 13) overflowed its "), "{report}");
    // Shallow recursion in every thread is fine, and the process is still healthy.
    kernels::cpu_deep_recursion(4u32, 64u32, 77, 50, &mut out).unwrap();
}

#[test]
fn a_big_stack_frame_with_a_barrier_runs() {
    let mut out = vec![0u32; 64];
    kernels::cpu_big_frame_with_barrier(2u32, 32u32, kernels::BIG_FRAME as u32, 3, &mut out).unwrap();
    let want: Vec<u32> = (0..64u32).map(|i| (i % 32).wrapping_mul(3) ^ (i % 32)).collect();
    assert_eq!(out, want);
}
