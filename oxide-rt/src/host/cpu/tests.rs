//! Kernels written directly against the host backend, run by the CPU executor.

use super::{cpu_launch, CpuKernel};
use crate::device::cpu as dev;
use crate::device::thread::{index, thread_idx};
use crate::device::warp::ShflMode;
use crate::{Dim3, EmbeddedModule, Error, LaunchConfig};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering::Relaxed};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn checked() -> super::checks::Settings {
    super::checks::Settings { checks: true, watchdog: None }
}

fn unchecked() -> super::checks::Settings {
    super::checks::Settings { checks: false, watchdog: None }
}

/// PTX of a kernel `k` with a barrier (runs as fibers) and of one without (plain loop).
static FIBER_MODULE: EmbeddedModule =
    EmbeddedModule { ptx: ".visible .entry k()\n{\n\tbar.sync \t0;\n\tret;\n}\n", cubins: &[] };
static PLAIN_MODULE: EmbeddedModule = EmbeddedModule { ptx: ".visible .entry k()\n{\n\tret;\n}\n", cubins: &[] };

fn fibers() -> CpuKernel {
    CpuKernel::new(&FIBER_MODULE, "k")
}

fn plain() -> CpuKernel {
    CpuKernel::new(&PLAIN_MODULE, "k")
}

fn out(n: usize) -> Vec<AtomicU32> {
    (0..n).map(|_| AtomicU32::new(u32::MAX)).collect()
}

fn values(v: &[AtomicU32]) -> Vec<u32> {
    v.iter().map(|a| a.load(Relaxed)).collect()
}

fn tid() -> u32 {
    let (t, d) = (thread_idx(), dev::block_dim());
    t.x + d.x * (t.y + d.y * t.z)
}

/// Per-block `[u32; N]` in shared memory, identified by the address of `key`.
fn shared_u32s(key: &'static u8, n: usize) -> *mut u32 {
    dev::shared_static(key, n * 4, 4, std::panic::Location::caller()) as *mut u32
}

#[test]
fn kernels_are_classified_from_their_ptx() {
    assert!(fibers().uses_fibers());
    assert!(!plain().uses_fibers());
    static EMPTY: EmbeddedModule = EmbeddedModule { ptx: "", cubins: &[] };
    assert!(CpuKernel::new(&EMPTY, "k").uses_fibers(), "unknown kernels must run as fibers");
}

#[test]
fn barrier_orders_shared_memory_writes() -> TestResult {
    static KEY: u8 = 0;
    let block = 256u32;
    let o = out(4 * block as usize);
    cpu_launch(&fibers(), LaunchConfig::new(4, block), || {
        let s = shared_u32s(&KEY, block as usize);
        let (t, b) = (tid(), dev::block_idx().x);
        for round in 0..3u32 {
            // SAFETY: each thread writes its own element; reads happen after the barrier.
            unsafe { *s.add(t as usize) = b * 100_000 + round * 1000 + t };
            dev::sync_threads();
            // SAFETY: in bounds; read after the barrier that ordered every thread's write.
            let neighbour = unsafe { *s.add(((t + 1) % block) as usize) };
            dev::sync_threads(); // nobody overwrites before all have read
            if round == 2 {
                o[index().get()].store(neighbour, Relaxed);
            }
        }
    })?;
    for (i, v) in values(&o).into_iter().enumerate() {
        let (b, t) = (i as u32 / block, i as u32 % block);
        assert_eq!(v, b * 100_000 + 2000 + (t + 1) % block, "thread {t} of block {b}");
    }
    Ok(())
}

#[test]
fn sync_threads_count_and_or() -> TestResult {
    let n = 100u32; // not a multiple of the warp size
    let o = out(5 * n as usize);
    cpu_launch(&fibers(), LaunchConfig::new(1, n), || {
        let t = tid();
        let base = t as usize * 5;
        o[base].store(dev::sync_threads_count(t % 3 == 0), Relaxed);
        o[base + 1].store(dev::sync_threads_and(t < n) as u32, Relaxed);
        o[base + 2].store(dev::sync_threads_and(t != 42) as u32, Relaxed);
        o[base + 3].store(dev::sync_threads_or(t == 57) as u32, Relaxed);
        o[base + 4].store(dev::sync_threads_or(false) as u32, Relaxed);
    })?;
    for chunk in values(&o).chunks(5) {
        assert_eq!(chunk, [34, 1, 0, 1, 0]);
    }
    Ok(())
}

/// CUDA's documented shuffle results, written independently of `shfl_source`.
fn shfl_reference(mode: ShflMode, lane: u32, arg: u32, width: u32, vals: &[u32; 32]) -> u32 {
    let seg_start = lane / width * width;
    let src = match mode {
        ShflMode::Idx => Some(seg_start + arg % width),
        ShflMode::Up => (lane - seg_start >= arg).then(|| lane - arg),
        ShflMode::Down => (lane - seg_start + arg < width).then(|| lane + arg),
        // Earlier or same segment only.
        ShflMode::Xor => Some(lane ^ arg).filter(|j| *j / width <= lane / width),
    };
    vals[src.unwrap_or(lane) as usize]
}

#[test]
fn shuffles_all_modes_and_widths() -> TestResult {
    let modes = [ShflMode::Idx, ShflMode::Up, ShflMode::Down, ShflMode::Xor];
    let cases: Vec<(ShflMode, u32, u32)> = modes
        .iter()
        .flat_map(|m| {
            [32u32, 16, 8, 4, 2, 1]
                .into_iter()
                .flat_map(move |w| [0u32, 1, 3, 5, 17, 31].into_iter().map(move |a| (*m, w, a)))
        })
        .collect();
    let block = 64u32;
    let o = out(cases.len() * block as usize);
    cpu_launch(&fibers(), LaunchConfig::new(1, block), || {
        let t = tid();
        let value = 1000 * dev::warp_id() + dev::lane_id() * 7 + 1;
        for (c, &(mode, width, arg)) in cases.iter().enumerate() {
            let r = dev::shfl_u32(mode, u32::MAX, value, arg, width);
            o[c * block as usize + t as usize].store(r, Relaxed);
        }
    })?;
    let got = values(&o);
    for (c, &(mode, width, arg)) in cases.iter().enumerate() {
        for t in 0..block {
            let (warp, lane) = (t / 32, t % 32);
            let vals: [u32; 32] = std::array::from_fn(|l| 1000 * warp + l as u32 * 7 + 1);
            let want = shfl_reference(mode, lane, arg, width, &vals);
            assert_eq!(got[c * block as usize + t as usize], want, "{mode:?} width {width} arg {arg} lane {lane}");
        }
    }
    Ok(())
}

#[test]
fn shuffles_with_partial_and_divergent_masks() -> TestResult {
    let block = 48u32; // second warp has 16 lanes
    let o = out(block as usize);
    let shfl_line = line!() + 5;
    let kernel = || {
        let (t, lane) = (tid(), dev::lane_id());
        // Even and odd lanes shuffle in two groups at the same time.
        let mask = if lane % 2 == 0 { 0x5555_5555 } else { 0xAAAA_AAAA };
        let r = dev::shfl_u32(ShflMode::Idx, mask, t * 10, (lane + 2) % 32, 32);
        o[t as usize].store(r, Relaxed);
    };
    super::launch(&fibers(), LaunchConfig::new(1, block), unchecked(), kernel)?;
    let got = values(&o);
    for t in 0..block {
        let (warp, lane) = (t / 32, t % 32);
        let src = warp * 32 + (lane + 2) % 32;
        // Unchecked, a source lane outside the block does not take part: the caller keeps its
        // own value.
        let want = if src < block { src * 10 } else { t * 10 };
        assert_eq!(got[t as usize], want, "thread {t}");
    }
    // Checked, reading a lane outside the block is an error (the GPU returns garbage there).
    match super::launch(&fibers(), LaunchConfig::new(1, block), checked(), kernel) {
        Err(Error::CpuCheck { kernel: "k", check: crate::CpuCheck::WarpLane, report }) => {
            let site = format!("{}:{shfl_line}:", file!());
            assert!(report.contains("thread (46,0,0) (warp 1, lane 14) read lane 16"), "{report}");
            assert!(report.contains(&site) && report.contains("does not exist (the block has 48 threads)"), "{report}");
        }
        other => panic!("expected a warp lane error, got {other:?}"),
    }
    Ok(())
}

#[test]
fn votes_ballot_any_all() -> TestResult {
    let block = 40u32;
    let o = out(4 * block as usize);
    cpu_launch(&fibers(), LaunchConfig::new(1, block), || {
        let (t, lane) = (tid() as usize, dev::lane_id());
        o[4 * t].store(dev::vote_ballot(u32::MAX, lane % 3 == 0), Relaxed);
        o[4 * t + 1].store(dev::vote_all(u32::MAX, lane < 40) as u32, Relaxed);
        o[4 * t + 2].store(dev::vote_any(u32::MAX, lane == 31) as u32, Relaxed);
        // Only the low 16 lanes vote, the others are elsewhere.
        if lane < 16 {
            o[4 * t + 3].store(dev::vote_ballot(0xFFFF, true), Relaxed);
        }
    })?;
    let got = values(&o);
    let every3 = (0..32).filter(|l| l % 3 == 0).fold(0u32, |m, l| m | 1 << l);
    for t in 0..block as usize {
        let full_warp = t < 32;
        let live = if full_warp { u32::MAX } else { 0xFF };
        assert_eq!(got[4 * t], every3 & live, "ballot, thread {t}");
        assert_eq!(got[4 * t + 1], 1, "all, thread {t}");
        assert_eq!(got[4 * t + 2], full_warp as u32, "any, thread {t}");
        let want = if t % 32 < 16 { 0xFFFF & live } else { u32::MAX };
        assert_eq!(got[4 * t + 3], want, "partial ballot, thread {t}");
    }
    Ok(())
}

#[test]
fn active_mask_and_sync_warp() -> TestResult {
    let block = 40u32;
    let o = out(block as usize);
    cpu_launch(&fibers(), LaunchConfig::new(1, block), || {
        let lane = dev::lane_id();
        let m = if lane % 2 == 0 {
            dev::active_mask()
        } else {
            dev::sync_warp(0xAAAA_AAAA);
            0
        };
        dev::sync_warp(u32::MAX);
        o[tid() as usize].store(m, Relaxed);
    })?;
    for (t, v) in values(&o).into_iter().enumerate() {
        let want = match (t % 2, t < 32) {
            (1, _) => 0,
            (_, true) => 0x5555_5555,
            (_, false) => 0x55,
        };
        assert_eq!(v, want, "thread {t}");
    }
    Ok(())
}

#[test]
fn shared_memory_is_fresh_and_private_per_block() -> TestResult {
    static COUNTER: u8 = 0;
    static FLAG: u8 = 0;
    for kernel in [plain(), fibers()] {
        let (grid, block) = (16u32, 64u32);
        let o = out(grid as usize);
        cpu_launch(&kernel, LaunchConfig::new(grid, block), || {
            let c = shared_u32s(&COUNTER, 1);
            let f = shared_u32s(&FLAG, 1);
            // SAFETY: the threads of a block never run at the same time on the CPU executor.
            unsafe {
                *c += 1;
                *f |= 1 << (dev::block_idx().x % 32);
                if tid() == block - 1 {
                    o[dev::block_idx().x as usize].store(*c * 1000 + (*f).count_ones(), Relaxed);
                }
            }
        })?;
        assert_eq!(values(&o), vec![block * 1000 + 1; grid as usize]);
    }
    Ok(())
}

#[test]
fn dynamic_shared_memory() -> TestResult {
    let block = 256u32;
    let o = out(2 * block as usize);
    let cfg = LaunchConfig::new(2, block).shared_mem_bytes(block * 4);
    cpu_launch(&fibers(), cfg, || {
        let (p, len) = dev::dynamic_shared();
        assert_eq!(len, block as usize * 4);
        assert_eq!(p as usize % 16, 0);
        let s = p as *mut u32;
        let t = tid();
        // SAFETY: in bounds; own element before the barrier, reads after it.
        unsafe { *s.add(t as usize) = t * 3 + dev::block_idx().x };
        dev::sync_threads();
        // SAFETY: in bounds; read after the barrier that ordered every thread's write.
        let r = unsafe { *s.add((block - 1 - t) as usize) };
        o[index().get()].store(r, Relaxed);
    })?;
    for (i, v) in values(&o).into_iter().enumerate() {
        let (b, t) = (i as u32 / block, i as u32 % block);
        assert_eq!(v, (block - 1 - t) * 3 + b);
    }
    // No dynamic shared memory: an empty, aligned region.
    cpu_launch(&plain(), LaunchConfig::new(1, 1), || {
        let (p, len) = dev::dynamic_shared();
        assert_eq!((len, p as usize % 16), (0, 0));
    })?;
    Ok(())
}

#[test]
fn multi_dimensional_indices_are_unique() -> TestResult {
    for kernel in [plain(), fibers()] {
        let cfg = LaunchConfig::new((3, 2, 2), (4, 3, 2));
        let n = (cfg.grid.volume() * cfg.block.volume()) as usize;
        let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
        let o = out(n);
        cpu_launch(&kernel, cfg, || {
            let (t, b, bd, gd) = (thread_idx(), dev::block_idx(), dev::block_dim(), dev::grid_dim());
            assert!(t.x < bd.x && t.y < bd.y && t.z < bd.z && b.x < gd.x && b.y < gd.y && b.z < gd.z);
            assert_eq!(dev::lane_id() + 32 * dev::warp_id(), tid());
            let i = index().get();
            hits[i].fetch_add(1, Relaxed);
            let packed = [t.x, t.y, t.z, b.x, b.y, b.z].iter().fold(0u32, |acc, v| acc * 8 + v);
            o[i].store(packed, Relaxed);
        })?;
        assert!(hits.iter().all(|h| h.load(Relaxed) == 1), "every index exactly once");
        let mut seen = values(&o);
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), n, "every (thread, block) pair distinct");
    }
    Ok(())
}

/// `thread::index()` (kept up to date by the executor) is exactly CUDA's linearisation, in both
/// modes and over grids of many small blocks (which workers take in chunks).
#[test]
fn index_matches_the_gpu_formula() -> TestResult {
    for cfg in [
        LaunchConfig::new((7, 5, 3), (3, 2, 2)),
        LaunchConfig::new((4097, 3, 1), (1, 1, 1)),
        LaunchConfig::new(300, 64),
    ] {
        for kernel in [plain(), fibers()] {
            let n = (cfg.grid.volume() * cfg.block.volume()) as usize;
            let o = out(n);
            cpu_launch(&kernel, cfg, || {
                let (t, b, bd, gd) = (thread_idx(), dev::block_idx(), dev::block_dim(), dev::grid_dim());
                let in_block = t.x + bd.x * (t.y + bd.y * t.z);
                let block = b.x + gd.x * (b.y + gd.y * b.z);
                let want = block as usize * bd.volume() as usize + in_block as usize;
                assert_eq!(index().get(), want);
                assert_eq!(dev::lane_id() + 32 * dev::warp_id(), in_block);
                o[want].store(in_block, Relaxed);
            })?;
            let per_block = cfg.block.volume() as u32;
            assert!(values(&o).iter().enumerate().all(|(i, v)| *v == i as u32 % per_block));
        }
    }
    Ok(())
}

#[test]
fn blocks_step_in_linear_order() {
    let grid = Dim3::new(3, 4, 5);
    let mut b = Dim3::new(0, 0, 0);
    for i in 0..grid.volume() {
        assert_eq!(b, super::unlinear(i, grid));
        b = super::next_block(b, grid);
    }
    assert_eq!(super::chunk_blocks(1, 2, 1024), 1);
    assert_eq!(super::chunk_blocks(65_536, 2, 256), 256);
    assert_eq!(super::chunk_blocks(64, 2, 1), 4);
}

fn expect_panic(r: Result<(), Error>, message: &str, line: u32) {
    match r {
        Err(Error::KernelPanic { kernel, message: m, location }) => {
            assert_eq!(kernel, "k");
            assert!(m.contains(message), "message {m:?}");
            let Some(loc) = location else { panic!("a kernel panic without a location") };
            assert!(loc.contains(&format!("src/host/cpu/tests.rs:{line}:")), "location {loc}");
        }
        other => panic!("expected a kernel panic, got {other:?}"),
    }
}

#[test]
fn panics_report_message_and_location() {
    let line = line!() + 4;
    for kernel in [plain(), fibers()] {
        let r = cpu_launch(&kernel, LaunchConfig::new(4, 64), || {
            if dev::block_idx().x == 2 && tid() == 17 {
                panic!("boom {}", 17);
            }
        });
        expect_panic(r, "boom 17", line);
    }
    let data = [1u32, 2, 3];
    let line = line!() + 2;
    let r = cpu_launch(&plain(), LaunchConfig::new(1, 8), || {
        std::hint::black_box(data[tid() as usize]);
    });
    expect_panic(r, "index out of bounds", line);
}

#[test]
fn panic_in_a_fiber_unwinds_the_waiting_threads() -> TestResult {
    struct Guard<'a>(&'a AtomicUsize);
    impl Drop for Guard<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Relaxed);
        }
    }
    let dropped = AtomicUsize::new(0);
    let line = line!() + 5;
    let r = cpu_launch(&fibers(), LaunchConfig::new(1, 64), || {
        let _g = Guard(&dropped);
        let t = tid();
        if t == 5 {
            panic!("thread five");
        }
        dev::sync_threads();
    });
    expect_panic(r, "thread five", line);
    // Threads 0..=4 waited at the barrier and were unwound; 6.. never started.
    assert_eq!(dropped.load(Relaxed), 6);
    // The executor is still usable afterwards.
    cpu_launch(&fibers(), LaunchConfig::new(2, 64), dev::sync_threads)?;
    Ok(())
}

#[test]
fn divergent_warp_groups_and_early_exit_do_not_deadlock() -> TestResult {
    let block = 128u32;
    let o = out(block as usize);
    // Unchecked: the early exit of warp 3 before the second barrier is reported when checked
    // (`barrier_divergence_is_reported`).
    super::launch(&fibers(), LaunchConfig::new(1, block), unchecked(), || {
        let (t, lane) = (tid(), dev::lane_id());
        // Different warps and half-warps take different branches with their own collectives.
        let v = if lane < 16 {
            dev::shfl_u32(ShflMode::Xor, 0x0000_FFFF, t, 1, 32)
        } else {
            dev::vote_ballot(0xFFFF_0000, lane % 2 == 0)
        };
        dev::sync_threads();
        if dev::warp_id() == 3 {
            return; // a whole warp leaves; the others still meet at the barrier below
        }
        dev::sync_threads();
        o[t as usize].store(v, Relaxed);
    })?;
    for (t, v) in values(&o).into_iter().enumerate() {
        let t = t as u32;
        let want = match (t / 32, t % 32) {
            (3, _) => u32::MAX,
            (_, l) if l < 16 => t ^ 1,
            _ => 0x5555_0000,
        };
        assert_eq!(v, want, "thread {t}");
    }
    Ok(())
}

#[test]
fn a_real_deadlock_is_an_error_not_a_hang() {
    let r = cpu_launch(&fibers(), LaunchConfig::new(2, 64), || {
        if dev::lane_id() < 16 {
            dev::sync_threads();
        } else {
            dev::sync_warp(u32::MAX);
        }
    });
    match r {
        Err(Error::KernelPanic { message, location: None, .. }) => {
            assert!(message.contains("deadlock"), "{message}");
            assert!(
                message.contains("32 thread(s) wait at sync_warp(mask 0xffffffff) at ")
                    && message.contains("the first (16,0,0)"),
                "{message}"
            );
        }
        other => panic!("expected a deadlock error, got {other:?}"),
    }
}

#[test]
fn collective_in_plain_mode_is_an_error() {
    let r = cpu_launch(&plain(), LaunchConfig::new(1, 32), dev::sync_threads);
    match r {
        Err(Error::KernelPanic { message, .. }) => assert!(message.contains("plain loop"), "{message}"),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn block_of_1024_threads_reduces_through_shared_memory() -> TestResult {
    static SUMS: u8 = 0;
    let (grid, block) = (6u32, 1024u32);
    let o = out(grid as usize);
    cpu_launch(&fibers(), LaunchConfig::new(grid, block), || {
        let s = shared_u32s(&SUMS, block as usize);
        let t = tid();
        // SAFETY: each step writes element t from t and t + stride, separated by barriers.
        unsafe { *s.add(t as usize) = t + dev::block_idx().x };
        let mut stride = block / 2;
        while stride > 0 {
            dev::sync_threads();
            if t < stride {
                // SAFETY: in bounds; element t and t + stride belong to no other thread this step.
                unsafe { *s.add(t as usize) += *s.add((t + stride) as usize) };
            }
            stride /= 2;
        }
        if t == 0 {
            // SAFETY: element 0 holds the block's sum after the last barrier of the loop.
            o[dev::block_idx().x as usize].store(unsafe { *s }, Relaxed);
        }
    })?;
    for (b, v) in values(&o).into_iter().enumerate() {
        assert_eq!(v, (0..block).sum::<u32>() + block * b as u32);
    }
    Ok(())
}

#[test]
fn launch_limits_and_bounds() -> TestResult {
    let too_big = cpu_launch(&fibers(), LaunchConfig::new(1, 1025), || {});
    assert!(matches!(too_big, Err(Error::InvalidLaunch { .. })), "{too_big:?}");
    let bounded = fibers().with_max_threads(256);
    let r = cpu_launch(&bounded, LaunchConfig::new(1, (16, 32)), || {});
    match r {
        Err(Error::InvalidLaunch { kernel: "k", reason }) => {
            assert!(reason.contains("launch bound of 256"), "{reason}")
        }
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
    cpu_launch(&bounded, LaunchConfig::new(1, 256), || {})?;
    let smem = cpu_launch(&plain(), LaunchConfig::new(1, 1).shared_mem_bytes(1 << 20), || {});
    assert!(matches!(smem, Err(Error::InvalidLaunch { .. })), "{smem:?}");
    let _ = Dim3::new(1, 1, 1);
    Ok(())
}

/// PTX of a kernel with a 32 KiB static shared array and a 4 MiB stack frame (through a helper).
static FOOTPRINT_MODULE: EmbeddedModule = EmbeddedModule {
    ptx: ".shared .align 4 .b8 TILE[32768];\n\
          .func big_frame()\n{\n\t.local .align 8 .b8 \t__local_depot0[4194304];\n\tret;\n}\n\
          .visible .entry tiled()\n{\n\tmov.u64 \t%rd1, TILE;\n\tret;\n}\n\
          .visible .entry deep()\n{\n\tcall.uni big_frame, ();\n\tret;\n}\n",
    cubins: &[],
};

#[test]
fn static_plus_dynamic_shared_memory_is_checked_against_the_block_limit() -> TestResult {
    let tiled = CpuKernel::new(&FOOTPRINT_MODULE, "tiled");
    assert_eq!(tiled.static_shared_bytes(), 32 * 1024);
    // 32 KiB static + 200 KiB dynamic = 232 KiB > 227 KiB: refused, naming both sizes.
    let r = cpu_launch(&tiled, LaunchConfig::new(1, 32).shared_mem_bytes(200 * 1024), || {});
    match r {
        Err(Error::InvalidLaunch { kernel: "tiled", reason }) => {
            assert!(reason.contains("32768 bytes of static shared memory"), "{reason}");
            assert!(reason.contains("204800 bytes of dynamic shared memory"), "{reason}");
            assert!(reason.contains("limit of 232448 bytes"), "{reason}");
            assert!(reason.contains("at most 199680 bytes of dynamic"), "{reason}");
        }
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
    // Exactly at the limit is fine.
    cpu_launch(&tiled, LaunchConfig::new(1, 32).shared_mem_bytes(227 * 1024 - 32 * 1024), || {})?;
    Ok(())
}

#[test]
fn a_stack_frame_beyond_the_per_thread_limit_is_refused() {
    let deep = CpuKernel::new(&FOOTPRINT_MODULE, "deep");
    let ran = AtomicUsize::new(0);
    let r = cpu_launch(&deep, LaunchConfig::new(1, 1), || {
        ran.fetch_add(1, Relaxed);
    });
    match r {
        Err(Error::InvalidLaunch { kernel: "deep", reason }) => {
            assert!(reason.contains("4194304 bytes of local memory"), "{reason}");
            assert!(reason.contains("524288 bytes"), "{reason}");
        }
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
    assert_eq!(ran.load(Relaxed), 0, "a refused launch runs no thread");
}

#[test]
fn bad_warp_arguments_are_reported_at_the_callers_line() {
    use crate::device::warp;
    // A width that is not a power of two: the panic points at this file, not at warp.rs.
    let line = line!() + 2;
    let r = cpu_launch(&fibers(), LaunchConfig::new(1, 32), || {
        let _ = warp::shfl_xor_sync(warp::FULL_MASK, 1.5f64, 1, 3);
    });
    match r {
        Err(Error::KernelPanic { message, location: Some(at), .. }) => {
            assert!(message.contains("shuffle width 3"), "{message}");
            assert!(at.starts_with(&format!("{}:{line}:", file!())), "{at}");
        }
        other => panic!("expected a kernel panic with a location, got {other:?}"),
    }
    // A mask without the calling lane, through a vote and through sync_warp.
    let line = line!() + 2;
    let r = cpu_launch(&fibers(), LaunchConfig::new(1, 32), || {
        let _ = warp::ballot_sync(1, true);
    });
    match r {
        Err(Error::KernelPanic { message, location: Some(at), .. }) => {
            assert!(message.contains("does not name the calling lane"), "{message}");
            assert!(at.starts_with(&format!("{}:{line}:", file!())), "{at}");
        }
        other => panic!("expected a kernel panic with a location, got {other:?}"),
    }
    let line = line!() + 2;
    let r = cpu_launch(&fibers(), LaunchConfig::new(1, 32), || {
        crate::device::sync::sync_warp(0b10);
    });
    match r {
        Err(Error::KernelPanic { location: Some(at), .. }) => {
            assert!(at.starts_with(&format!("{}:{line}:", file!())), "{at}")
        }
        other => panic!("expected a kernel panic with a location, got {other:?}"),
    }
}

/// One shared declaration asked for more than it first got (only a direct call of the hidden
/// `__static_shared` can do that) panics instead of handing out a view past its storage.
#[test]
fn a_shared_declaration_cannot_grow() {
    static KEY: u8 = 0;
    let result = cpu_launch(&plain(), LaunchConfig::new(1, 1), || {
        let small = crate::device::shared::__static_shared::<u32>(&KEY, 4);
        let large = crate::device::shared::__static_shared::<u32>(&KEY, 1 << 20);
        large.set(small.len() + 1000, 1);
    });
    match result {
        Err(Error::KernelPanic { message, .. }) => assert!(message.contains("asked for 4194304 bytes"), "{message}"),
        other => panic!("expected a kernel panic, got {other:?}"),
    }
}

fn expect_check(r: Result<(), Error>, check: crate::CpuCheck) -> String {
    match r {
        Err(Error::CpuCheck { kernel: "k", check: c, report }) if c == check => report,
        other => panic!("expected the {check} check to fail, got {other:?}"),
    }
}

#[test]
fn barrier_divergence_is_reported() {
    use crate::CpuCheck::BarrierDivergence;
    // Two branches, each with its own barrier: CUDA leaves this undefined.
    let first = line!() + 4;
    let second = line!() + 5;
    let r = cpu_launch(&fibers(), LaunchConfig::new(2, 64), || {
        if tid() < 40 {
            dev::sync_threads();
        } else {
            dev::sync_threads_count(true);
        }
    });
    let report = expect_check(r, BarrierDivergence);
    let (a, b) = (format!("{}:{first}:", file!()), format!("{}:{second}:", file!()));
    // Both blocks diverge the same way, on worker threads of their own: whichever reports first
    // is the `Err`.
    let rest = report.strip_prefix("in block (0,0,0), ").or_else(|| report.strip_prefix("in block (1,0,0), "));
    assert!(
        rest.is_some_and(|r| r.starts_with("thread (0,0,0) (warp 0, lane 0) waits at sync_threads at ")),
        "{report}"
    );
    assert!(report.contains(&a) && report.contains(&b), "{report}");
    assert!(report.contains("thread (40,0,0) (warp 1, lane 8)"), "{report}");
    assert!(report.contains("barrier epoch 0"), "{report}");

    // Half the block returns early, the other half syncs: reported at the second barrier.
    let line = line!() + 6;
    let r = cpu_launch(&fibers(), LaunchConfig::new(1, 64), || {
        dev::sync_threads();
        if tid() >= 32 {
            return;
        }
        dev::sync_threads();
    });
    let report = expect_check(r, BarrierDivergence);
    assert!(report.contains(&format!("{}:{line}:", file!())), "{report}");
    assert!(report.contains("thread (32,0,0) (warp 1, lane 0) has exited without reaching it"), "{report}");
    assert!(report.contains("barrier epoch 1, 32 of 64 threads waiting"), "{report}");

    // One call site reached by every thread in a loop, and a helper called from two places
    // (its barrier is one site): no report.
    fn helper() {
        dev::sync_threads();
    }
    let r = cpu_launch(&fibers(), LaunchConfig::new(2, 96), || {
        for _ in 0..3 {
            dev::sync_threads();
        }
        if tid() % 2 == 0 {
            helper();
        } else {
            std::hint::black_box(0);
            helper();
        }
    });
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn shuffles_reading_absent_lanes_are_reported() {
    use crate::CpuCheck::WarpLane;
    // The upper half-warp has exited; a full-mask butterfly reads it (the GPU gives zeros).
    let line = line!() + 5;
    let r = cpu_launch(&fibers(), LaunchConfig::new(1, 32), || {
        if dev::lane_id() >= 16 {
            return;
        }
        std::hint::black_box(dev::shfl_u32(ShflMode::Xor, u32::MAX, 7, 16, 32));
    });
    let report = expect_check(r, WarpLane);
    assert!(report.contains("thread (0,0,0) (warp 0, lane 0) read lane 16"), "{report}");
    assert!(report.contains(&format!("{}:{line}:", file!())) && report.contains("has exited"), "{report}");
    // A source lane outside the mask.
    let r = cpu_launch(&fibers(), LaunchConfig::new(1, 32), || {
        std::hint::black_box(dev::shfl_u32(ShflMode::Idx, 0x0000_ffff | 1 << dev::lane_id(), 7, 20, 32));
    });
    let report = expect_check(r, WarpLane);
    assert!(report.contains("read lane 20") && report.contains("is not in the mask 0x0000ffff"), "{report}");
    // Lanes past the segment end keep their own value: defined, no report.
    let r = cpu_launch(&fibers(), LaunchConfig::new(1, 32), || {
        std::hint::black_box(dev::shfl_u32(ShflMode::Down, u32::MAX, 7, 16, 32));
    });
    assert!(r.is_ok(), "{r:?}");
}

/// `n` u32s of shared memory through the checked API, one array per `key`.
fn shared_slice(key: &'static u8, n: usize) -> crate::device::shared::SharedSlice<u32> {
    crate::device::shared::__static_shared::<u32>(key, n)
}

#[test]
fn shared_memory_races_are_reported() {
    use crate::CpuCheck::SharedRace;
    static A: u8 = 0;
    let n = 64usize;
    // Each thread fills its element; after a barrier it writes it again and reads its
    // neighbour's, with no barrier between.
    let (write, read) = (line!() + 6, line!() + 7);
    let kernel = || {
        let s = shared_slice(&A, n);
        let t = tid() as usize;
        s.set(t, 0);
        dev::sync_threads();
        s.set(t, t as u32);
        std::hint::black_box(s.get((t + 1) % n));
    };
    let report = expect_check(cpu_launch(&fibers(), LaunchConfig::new(2, n as u32), kernel), SharedRace);
    // Thread 0 runs first and reads element 1 before thread 1 writes it. Both blocks race the
    // same way, on worker threads of their own: whichever reports first is the `Err`.
    let rest = report.strip_prefix("in block (0,0,0), ").or_else(|| report.strip_prefix("in block (1,0,0), "));
    assert!(
        rest.is_some_and(|r| r.starts_with("write-after-read hazard on byte 4 of the shared array declared at ")),
        "{report}"
    );
    assert!(report.contains(&format!("thread (0,0,0) read it at {}:{read}:", file!())), "{report}");
    assert!(report.contains(&format!("thread (1,0,0) writes it at {}:{write}:", file!())), "{report}");
    assert!(report.contains("with no sync_threads between them (barrier epoch 1) nor a sync_warp"), "{report}");
    // Without the first fill and barrier (plain-loop mode: a kernel without barriers), thread 0
    // reads element 1 before anyone wrote it: that is reported first.
    let report = expect_check(
        cpu_launch(&plain(), LaunchConfig::new(1, n as u32), || {
            let s = shared_slice(&A, n);
            let t = tid() as usize;
            s.set(t, t as u32);
            std::hint::black_box(s.get((t + 1) % n));
        }),
        crate::CpuCheck::UninitShared,
    );
    assert!(report.contains("read of byte 4 of the shared array declared at "), "{report}");

    // A barrier between the write and the read: no race, and the values are right.
    let o = out(n);
    cpu_launch(&fibers(), LaunchConfig::new(2, n as u32), || {
        let s = shared_slice(&A, n);
        let t = tid() as usize;
        s.set(t, t as u32);
        dev::sync_threads();
        o[t].store(s.get((t + 1) % n), Relaxed);
        dev::sync_threads();
        s.set(t, 0); // after everyone has read
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(values(&o), (0..n as u32).map(|t| (t + 1) % n as u32).collect::<Vec<_>>());

    // Every thread writes element 0 after a barrier: write-after-write, epoch 1.
    let report = expect_check(
        cpu_launch(&fibers(), LaunchConfig::new(1, 64), || {
            dev::sync_threads();
            shared_slice(&A, 1).set(0, tid());
        }),
        SharedRace,
    );
    assert!(report.contains("write-after-write hazard on byte 0"), "{report}");
    assert!(report.contains("thread (0,0,0) wrote it at") && report.contains("then thread (1,0,0) writes it"));
    assert!(report.contains("(barrier epoch 1)"), "{report}");
}

#[test]
fn atomics_and_warp_syncs_order_shared_memory() {
    use crate::device::atomic::{AtomicInt, Ordering, Scope};
    use crate::CpuCheck::SharedRace;
    static B: u8 = 0;
    static C: u8 = 0;
    // Atomics on one element from every thread do not race; reading it after a barrier does not.
    let o = out(1);
    cpu_launch(&fibers(), LaunchConfig::new(1, 128), || {
        let s = shared_slice(&B, 1);
        s.atomic(0).with(|a| a.atomic_add(1, Scope::Block));
        dev::sync_threads();
        if tid() == 5 {
            o[0].store(s.get(0), Relaxed);
        }
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(values(&o), [128]);
    // A plain read of it without the barrier races with the other threads' atomics.
    let r = cpu_launch(&fibers(), LaunchConfig::new(1, 64), || {
        let s = shared_slice(&B, 1);
        s.atomic(0).with(|a| a.atomic_add(1, Scope::Block));
        std::hint::black_box(s.get(0));
    });
    let report = expect_check(r, SharedRace);
    assert!(report.contains("read-after-write") || report.contains("write-after-read"), "{report}");
    assert!(report.contains("atomically"), "{report}");
    // Atomic loads against atomic adds: no race.
    cpu_launch(&fibers(), LaunchConfig::new(1, 64), || {
        let s = shared_slice(&B, 1);
        s.atomic(0).with(|a| a.atomic_add(1, Scope::Block));
        std::hint::black_box(s.atomic(0).load(Ordering::Relaxed));
    })
    .unwrap_or_else(|e| panic!("{e}"));

    // Lanes of one warp exchange through shared memory after a sync_warp: ordered.
    cpu_launch(&fibers(), LaunchConfig::new(1, 64), || {
        let s = shared_slice(&C, 64);
        let t = tid() as usize;
        s.set(t, t as u32);
        dev::sync_warp(u32::MAX);
        std::hint::black_box(s.get(t ^ 1));
    })
    .unwrap_or_else(|e| panic!("{e}"));
    // The same exchange across warps needs a block barrier.
    let r = cpu_launch(&fibers(), LaunchConfig::new(1, 64), || {
        let s = shared_slice(&C, 64);
        let t = tid() as usize;
        s.set(t, t as u32);
        dev::sync_warp(u32::MAX);
        std::hint::black_box(s.get(t ^ 32));
    });
    let report = expect_check(r, SharedRace);
    // Lane 31 wrote element 31 before the sync_warp; lane 31 of warp 1 reads it after its own.
    assert!(report.contains("read-after-write hazard on byte 124"), "{report}");
    assert!(report.contains("thread (31,0,0) wrote it") && report.contains("thread (63,0,0) reads it"), "{report}");
    assert!(!report.contains("sync_warp of their warp"), "different warps: {report}");
}

#[test]
fn dynamic_shared_memory_races_are_reported_and_checks_can_be_off() {
    use crate::device::shared::dynamic_shared;
    let kernel = || {
        let s = dynamic_shared::<u32>();
        s.set(0, tid());
    };
    let cfg = LaunchConfig::new(1, 32).shared_mem_bytes(64);
    let report = expect_check(super::launch(&fibers(), cfg, checked(), kernel), crate::CpuCheck::SharedRace);
    assert!(report.contains("write-after-write hazard on byte 0 of the dynamic shared memory"), "{report}");
    // Unchecked, the same kernel runs (the last writer wins).
    super::launch(&fibers(), cfg, unchecked(), kernel).unwrap_or_else(|e| panic!("{e}"));
}

/// Recursion `n` deep with a frame of about 1 KiB per level.
fn recurse(n: u32) -> u32 {
    let frame = std::hint::black_box([n as u8; 1024]);
    if n == 0 {
        return frame[0] as u32;
    }
    recurse(n - 1).wrapping_add(frame[(n % 1024) as usize] as u32)
}

#[test]
fn a_stack_overflow_is_an_error_not_an_abort() -> TestResult {
    use crate::CpuCheck::StackOverflow;
    for kernel in [fibers(), plain()] {
        let r = cpu_launch(&kernel, LaunchConfig::new(4, 64), || {
            // Thread 7 of block 2 recurses 100 000 deep (about 100 MB of stack).
            let depth = if dev::block_idx().x == 2 && tid() == 7 { 100_000 } else { 10 };
            std::hint::black_box(recurse(depth));
        });
        let report = expect_check(r, StackOverflow);
        assert!(report.starts_with("in block (2,0,0), thread (7,0,0) (warp 0, lane 7) overflowed its "), "{report}");
        // The executor (and the process) carry on: the same kernel without the deep thread runs.
        cpu_launch(&kernel, LaunchConfig::new(4, 64), || {
            std::hint::black_box(recurse(10));
        })?;
    }
    Ok(())
}

#[test]
fn fiber_stacks_grow_with_the_kernels_frame() -> TestResult {
    // 320 KiB of local memory (the PTX says so) and a barrier: the fibers get a stack that
    // holds it, instead of the 256 KiB default.
    static BIG_FRAME: EmbeddedModule = EmbeddedModule {
        ptx: ".visible .entry k()\n{\n\t.local .align 8 .b8 \t__local_depot0[327680];\n\tbar.sync \t0;\n\tret;\n}\n",
        cubins: &[],
    };
    let kernel = CpuKernel::new(&BIG_FRAME, "k");
    assert!(super::fibers::stack_bytes(327_680) >= 327_680 + super::fibers::STACK_BYTES);
    let o = out(64);
    cpu_launch(&kernel, LaunchConfig::new(2, 32), || {
        let local = std::hint::black_box([tid(); 320 * 1024 / 4]);
        dev::sync_threads();
        o[index().get()].store(local[local.len() - 1 - tid() as usize], Relaxed);
    })?;
    assert_eq!(values(&o), (0..64).map(|i| i % 32).collect::<Vec<_>>());
    Ok(())
}

#[test]
fn a_thread_spinning_forever_is_stopped_by_the_watchdog() {
    use crate::CpuCheck::Watchdog;
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};
    let settings = super::checks::Settings { checks: true, watchdog: Some(Duration::from_millis(300)) };
    // Thread 0 waits for a flag that thread 1 sets after a barrier thread 0 never reaches.
    let flag = AtomicBool::new(false);
    let line = line!() + 4;
    let start = Instant::now();
    let r = super::launch(&fibers(), LaunchConfig::new(1, 64), settings, || {
        if tid() == 0 {
            while !flag.load(std::sync::atomic::Ordering::Acquire) {
                std::hint::spin_loop();
            }
        } else {
            dev::sync_threads();
            flag.store(true, std::sync::atomic::Ordering::Release);
        }
    });
    let report = expect_check(r, Watchdog);
    assert!(start.elapsed() < Duration::from_secs(20), "stopped after {:?}", start.elapsed());
    assert!(report.starts_with("in block (0,0,0), thread (0,0,0) (warp 0, lane 0) ran for 300 ms"), "{report}");
    // Where it spins: the signal may land in the kernel or in what it calls (`spin_loop`'s
    // pause), and inlined frames carry short names, so only the lines are checked below.
    assert!(report.contains(", spinning at "), "{report}");
    // A line of the kernel, wherever the signal found it (the debug info of a loop's
    // instructions is not always the loop's own line), or none for an instruction without one.
    let at = |l: u32| report.contains(&format!("src/host/cpu/tests.rs:{l}:"));
    assert!((line - 1..line + 7).any(at) || report.contains("(no line for this instruction)"), "{report}");
    // A plain-loop kernel spinning on a flag nobody sets.
    let r = super::launch(&plain(), LaunchConfig::new(3, 32), settings, || {
        if dev::block_idx().x == 1 && tid() == 3 {
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        }
    });
    let report = expect_check(r, Watchdog);
    assert!(report.starts_with("in block (1,0,0), thread (3,0,0)"), "{report}");
}

#[test]
fn bytes_of_one_word_owned_by_different_threads_do_not_race() {
    use crate::device::shared::__static_shared;
    static D: u8 = 0;
    // Each thread writes and reads back its own byte: no race, though four threads share a word.
    let o = out(64);
    cpu_launch(&fibers(), LaunchConfig::new(1, 64), || {
        let s = __static_shared::<u8>(&D, 64);
        let t = tid() as usize;
        s.set(t, t as u8);
        o[t].store(s.get(t) as u32, Relaxed);
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(values(&o), (0..64).collect::<Vec<_>>());
    // Reading the neighbour's byte without a barrier races, and names that byte.
    let r = cpu_launch(&fibers(), LaunchConfig::new(1, 64), || {
        let s = __static_shared::<u8>(&D, 64);
        let t = tid() as usize;
        s.set(t, 0);
        crate::device::sync_threads();
        s.set(t, t as u8);
        std::hint::black_box(s.get(t ^ 1));
    });
    let report = expect_check(r, crate::CpuCheck::SharedRace);
    assert!(report.contains("write-after-read hazard on byte 1 of"), "{report}");
}

#[test]
fn reads_of_never_written_shared_memory_are_reported() {
    use crate::device::shared::__static_shared;
    use crate::CpuCheck::UninitShared;
    static E: u8 = 0;
    static F: u8 = 0;
    // A read before any thread of the block wrote: the report names the byte, the array, the
    // thread and the line.
    let read = line!() + 3;
    let report = expect_check(
        cpu_launch(&fibers(), LaunchConfig::new(1, 32), || {
            std::hint::black_box(shared_slice(&E, 32).get(5));
        }),
        UninitShared,
    );
    assert!(report.contains("read of byte 20 of the shared array declared at "), "{report}");
    assert!(report.contains(&format!("thread (0,0,0) reads it at {}:{read}:", file!())), "{report}");
    // Bytes, not words: two of a word's four bytes written, then the word read as a whole.
    let report = expect_check(
        cpu_launch(&fibers(), LaunchConfig::new(1, 2), || {
            let bytes = __static_shared::<u8>(&F, 4);
            bytes.set(tid() as usize, 1);
            crate::device::sync_threads();
            std::hint::black_box(shared_slice(&F, 1).get(0));
        }),
        UninitShared,
    );
    assert!(report.contains("read of byte 2 of"), "{report}");
    // Each block starts afresh: block 1 does not read what block 0 wrote.
    let report = expect_check(
        cpu_launch(&fibers(), LaunchConfig::new(2, 32), || {
            let s = shared_slice(&E, 32);
            if dev::block_idx().x == 0 {
                s.set(tid() as usize, 1);
            }
            dev::sync_threads();
            std::hint::black_box(s.get(tid() as usize));
        }),
        UninitShared,
    );
    assert!(report.starts_with("in block (1,0,0), read of byte 0"), "{report}");
    // Written, a barrier, read by another thread: fine; checks off: not looked at.
    let o = out(32);
    cpu_launch(&fibers(), LaunchConfig::new(2, 32), || {
        let s = shared_slice(&E, 32);
        s.set(tid() as usize, tid());
        dev::sync_threads();
        o[tid() as usize].store(s.get(31 - tid() as usize), Relaxed);
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(values(&o), (0..32).rev().collect::<Vec<_>>());
    super::launch(&fibers(), LaunchConfig::new(1, 32), unchecked(), || {
        std::hint::black_box(shared_slice(&E, 32).get(5));
    })
    .unwrap_or_else(|e| panic!("{e}"));
}
