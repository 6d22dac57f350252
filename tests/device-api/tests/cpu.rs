//! Every kernel on the CPU executor (`cpu_<name>`), against the expected values in `check`.

use device_api::{check, golden, kernels};
use oxide_rt::device::atomic::{AtomicF32, AtomicF64, AtomicU32, Ordering};
use oxide_rt::{Append, Error, LaunchConfig, Matrix, Pairs, Slice2d, Slice3d};

#[test]
fn indices_2d() {
    let (w, h) = (37u32, 11u32);
    let mut out = vec![u32::MAX; (w * h) as usize];
    kernels::cpu_indices_2d((w.div_ceil(8), h.div_ceil(4)), (8u32, 4u32), Slice2d::new(&mut out, w as usize)).unwrap();
    assert_eq!(out, check::indices_2d(w, h));
}

/// `DisjointSlice2d` owns whole rows only: the elements past the last whole row (a buffer
/// whose length is not a multiple of `cols`) belong to no thread, even where the grid covers them.
#[test]
fn indices_2d_leaves_a_partial_row_alone() {
    let (w, h) = (37u32, 11u32);
    let mut out = vec![u32::MAX; (w * h) as usize + 5];
    kernels::cpu_indices_2d((w.div_ceil(8), (h + 1).div_ceil(4)), (8u32, 4u32), Slice2d::new(&mut out, w as usize))
        .unwrap();
    assert_eq!(out[..(w * h) as usize], check::indices_2d(w, h)[..]);
    assert!(out[(w * h) as usize..].iter().all(|&v| v == u32::MAX), "{:?}", &out[(w * h) as usize..]);
}

#[test]
fn indices_3d() {
    let (w, h, d) = (13u32, 7u32, 5u32);
    let mut out = vec![u32::MAX; (w * h * d) as usize];
    let grid = (w.div_ceil(4), h.div_ceil(4), d.div_ceil(2));
    kernels::cpu_indices_3d(grid, (4u32, 4u32, 2u32), Slice3d::new(&mut out, w as usize, h as usize)).unwrap();
    assert_eq!(out, check::indices_3d(w, h, d));
}

/// A 3-D output owns whole planes only (`len / (cols * rows)`, as the 2-D one owns whole rows):
/// the threads of a plane the buffer holds only part of own nothing, so the partial plane is
/// left alone (and no index needs an overflow or length check).
#[test]
fn indices_3d_owns_whole_planes() {
    let (w, h, d) = (13u32, 7u32, 3u32);
    let whole = (w * h * d) as usize;
    let mut out = vec![u32::MAX; whole + (w * h / 2) as usize];
    kernels::cpu_indices_3d((4u32, 2u32, 4u32), (4u32, 4u32, 1u32), Slice3d::new(&mut out, w as usize, h as usize))
        .unwrap();
    assert_eq!(out[..whole], check::indices_3d(w, h, d)[..]);
    assert!(out[whole..].iter().all(|&v| v == u32::MAX), "{:?}", &out[whole..]);
    // Fewer elements than one plane: no thread owns any.
    let mut out = vec![u32::MAX; (w * h - 1) as usize];
    kernels::cpu_indices_3d((4u32, 2u32, 1u32), (4u32, 4u32, 1u32), Slice3d::new(&mut out, w as usize, h as usize))
        .unwrap();
    assert!(out.iter().all(|&v| v == u32::MAX));
}

/// A 2-D output launched with a 3-D geometry: threads differing only in z would share
/// `(x, y)`, so none of them owns an element (nothing is written twice, nothing at all).
#[test]
fn indices_2d_refuses_a_z_extent() {
    let (w, h) = (8u32, 4u32);
    let mut out = vec![u32::MAX; (w * h) as usize];
    kernels::cpu_indices_2d((1u32, 1u32, 2u32), (8u32, 4u32), Slice2d::new(&mut out, w as usize)).unwrap();
    assert!(out.iter().all(|&v| v == u32::MAX), "{out:?}");
}

#[test]
fn lane_warp() {
    let mut out = vec![0u32; 3 * 96];
    kernels::cpu_lane_warp(3u32, 96u32, &mut out).unwrap();
    assert_eq!(out, check::lane_warp(3, 96));
}

#[test]
fn barrier_after_branch() {
    let x = check::inputs_u32(512, 1000);
    for mode in [0, 1] {
        let mut out = vec![0u32; 512];
        kernels::cpu_barrier_after_branch(2u32, 256u32, mode, &x, &mut out).unwrap();
        assert_eq!(out, check::barrier_after_branch(mode, &x, 256), "mode {mode}");
    }
}

#[test]
fn barrier_reductions() {
    let mut x = check::inputs_u32(3 * 64, 3);
    x[64..128].iter_mut().for_each(|v| *v = 1); // a block where all are true
    x[128..].iter_mut().for_each(|v| *v = 0); // and one where none are
    let mut out = vec![0u32; x.len()];
    kernels::cpu_barrier_reductions(3u32, 64u32, &x, &mut out).unwrap();
    assert_eq!(out, check::barrier_reductions(&x, 64));
}

#[test]
fn fences() {
    let mut out = vec![0u32; 64];
    kernels::cpu_fences(2u32, 32u32, &mut out).unwrap();
    assert!(out.iter().all(|&v| v == 1));
}

#[test]
fn shared_reverse() {
    let x: Vec<f32> = (0..768).map(|i| i as f32 * 0.5).collect();
    let mut out = vec![0f32; 768];
    kernels::cpu_shared_reverse(3u32, 256u32, &x, &mut out).unwrap();
    assert_eq!(out, check::shared_reverse(&x));
}

#[test]
fn shared_transpose() {
    let x: Vec<u32> = (0..256).collect();
    let mut out = vec![0u32; 256];
    kernels::cpu_shared_transpose(1u32, (16u32, 16u32), &x, Slice2d::new(&mut out, 16)).unwrap();
    assert_eq!(out, check::shared_transpose(&x));
}

#[test]
fn dynamic_shared_sum() {
    let x = check::inputs_u32(4 * 128, 1000);
    let mut out = vec![0u32; x.len()];
    let cfg = LaunchConfig::new(4u32, 128u32).shared_mem_bytes(128 * 4);
    kernels::cpu_dynamic_shared_sum_with(cfg, &x, &mut out).unwrap();
    assert_eq!(out, check::dynamic_shared_sum(&x, 128, 512));
}

#[test]
fn atomics_shared() {
    let x = check::inputs_u32(2 * 96, 5000);
    let mut out = vec![0u64; x.len()];
    kernels::cpu_atomics_shared(2u32, 96u32, &x, &mut out).unwrap();
    assert_eq!(out, check::atomics_shared(&x, 96));
}

#[test]
fn atomics_float() {
    let x: Vec<f32> = (0..1000).map(|i| (i % 7) as f32 * 0.25).collect();
    let s32 = [AtomicF32::new(0.0), AtomicF32::new(0.0)];
    let s64 = [AtomicF64::new(0.0)];
    kernels::cpu_atomics_float(4u32, 256u32, &x, &s32, &s64).unwrap();
    let want: f64 = x.iter().map(|&v| v as f64).sum();
    assert_eq!(s32[0].load(Ordering::Relaxed), want as f32, "quarters sum exactly in f32");
    assert_eq!(s32[1].load(Ordering::Relaxed), 1000.0);
    assert_eq!(s64[0].load(Ordering::Relaxed), want);
}

#[test]
fn core_atomics() {
    let x = check::inputs_u32(2 * 64, 100_000);
    let mut out = vec![0u64; x.len()];
    kernels::cpu_core_atomics(2u32, 64u32, &x, &mut out).unwrap();
    assert_eq!(out, check::core_atomics(&x, 64));
}

#[test]
fn warp_ops() {
    let mut out = vec![[0u64; 8]; 128];
    kernels::cpu_warp_ops(2u32, 64u32, &mut out).unwrap();
    let want = check::warp_ops(128);
    for (i, (g, w)) in out.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "thread {i}");
    }
}

#[test]
fn bit_ops() {
    let mut x = check::inputs_u32(100, u32::MAX);
    x[0] = 0;
    x[1] = 1 << 31;
    let mut out = vec![[0u32; 8]; 100];
    kernels::cpu_bit_ops(1u32, 100u32, &x, &mut out).unwrap();
    assert_eq!(out, check::bit_ops(&x));
}

#[test]
fn hello_prints_and_runs() {
    let mut out = vec![0u32; 64];
    kernels::cpu_hello(2u32, 32u32, 7, &mut out).unwrap();
    assert!(out.iter().all(|&v| v == 7));
}

#[test]
fn out_of_bounds_is_a_kernel_panic_with_location() {
    let x = vec![1f32; 64];
    let mut out = vec![0f32; 64];
    let err = kernels::cpu_out_of_bounds(1u32, 64u32, 10, &x, &mut out).unwrap_err();
    match &err {
        Error::KernelPanic { kernel, location, message } => {
            assert_eq!(*kernel, "out_of_bounds");
            let loc = location.as_deref().unwrap_or("");
            assert!(loc.contains("kernels.rs:"), "{err}");
            assert!(message.contains("index out of bounds"), "{err}");
        }
        other => panic!("expected a kernel panic, got {other}"),
    }
}

#[test]
fn unwrap_none_is_a_kernel_panic() {
    let mut x = vec![5u32; 32];
    x[9] = 0;
    let mut out = vec![0u32; 32];
    let err = kernels::cpu_unwrap_none(1u32, 32u32, &x, &mut out).unwrap_err();
    assert!(matches!(&err, Error::KernelPanic { kernel: "unwrap_none", .. }), "{err}");
    assert!(err.to_string().contains("None"), "{err}");
}

#[test]
fn a_gather_past_its_input_is_a_kernel_panic() {
    let x: Vec<f32> = (0..100).map(|k| k as f32).collect();
    let mut idx: Vec<u32> = (0..256u32).map(|k| (k * 37) % 100).collect();
    let mut out = vec![0f32; 64];
    kernels::cpu_gather4(2u32, 32u32, &idx, &x, &mut out).unwrap();
    let want: Vec<f32> = idx.chunks(4).map(|c| c.iter().map(|&j| x[j as usize]).sum()).collect();
    assert_eq!(out, want);
    idx[4 * 13 + 2] = 100;
    let err = kernels::cpu_gather4(2u32, 32u32, &idx, &x, &mut out).unwrap_err();
    assert!(matches!(&err, Error::KernelPanic { kernel: "gather4", .. }), "{err}");
}

#[test]
fn a_shuffle_mask_without_the_calling_lane_is_a_kernel_panic() {
    let mut out = vec![0u32; 64];
    kernels::cpu_shuffle_mask(2u32, 32u32, u32::MAX, 0, &mut out).unwrap();
    assert_eq!(out, (0..64u32).map(|i| i ^ 1).collect::<Vec<u32>>());
    let err = kernels::cpu_shuffle_mask(2u32, 32u32, u32::MAX, 1, &mut out).unwrap_err();
    match &err {
        Error::KernelPanic { kernel, location, .. } => {
            assert_eq!(*kernel, "shuffle_mask");
            assert!(location.as_deref().unwrap_or("").contains("kernels.rs:"), "{err}");
        }
        other => panic!("expected a kernel panic, got {other}"),
    }
}

#[test]
fn bounded_and_collatz() {
    let mut out = vec![0u32; 512];
    kernels::cpu_bounded(2u32, 256u32, &mut out).unwrap();
    assert_eq!(out, (0..512).collect::<Vec<u32>>());
    let x: Vec<u64> = (0..300).collect();
    let mut steps = vec![0u32; 300];
    kernels::cpu_collatz(3u32, 100u32, &x, &mut steps).unwrap();
    assert_eq!(steps, check::collatz(&x));
    assert_eq!(steps[27], shared_logic::collatz_steps(27));
}

/// The same buffer of atomics passed as two inputs (legal: they are shared, not exclusive).
#[test]
fn atomic_loads_from_one_buffer_twice() {
    let flags: Vec<AtomicU32> = (0..100).map(AtomicU32::new).collect();
    let mut out = vec![0u32; 100];
    kernels::cpu_atomic_loads(4u32, 32u32, &flags, &flags, &mut out).unwrap();
    assert_eq!(out, (0..100).map(|v| 3 * v).collect::<Vec<u32>>());
}

/// A shared-memory view kept past its block (here in a thread-local, which safe host code can
/// do) panics when used, instead of touching the freed block memory.
#[test]
fn stale_shared_view_panics() {
    kernels::STASH.with(|s| s.set(None));
    kernels::cpu_stash_shared(1u32, 32u32).unwrap();
    let view = kernels::STASH.with(|s| s.get()).expect("the kernel stashed its view");
    let touched = std::panic::catch_unwind(|| view.get(0));
    assert!(touched.is_err(), "a stale view must not read freed memory");
}

/// The CPU half of gpu_panic's taps test: the same result, and an input one row short is a
/// kernel panic at the kernel's line.
#[test]
fn taps_past_the_end_of_their_input_panic() {
    let (cols, rows) = (37usize, 29usize);
    let input: Vec<f32> = (0..cols * rows).map(|k| (k % 13) as f32 * 0.25 - 1.0).collect();
    let w = [0.5f32, -1.0, 0.25, 2.0, 1.0, -0.5, 0.125, 0.75, -2.0];
    let mut out = vec![0.0f32; cols * rows];
    kernels::cpu_taps3x3((2u32, 8u32), (32u32, 4u32), &input, w, Slice2d::new(&mut out, cols)).unwrap();
    assert_eq!(out, check::taps3x3(&input, &w, cols, rows));
    let err =
        kernels::cpu_taps3x3((2u32, 8u32), (32u32, 4u32), &input[..cols * (rows - 1)], w, Slice2d::new(&mut out, cols))
            .unwrap_err();
    match &err {
        Error::KernelPanic { kernel, location, .. } => {
            assert_eq!(*kernel, "taps3x3");
            assert!(location.as_deref().unwrap_or_default().contains("kernels.rs:"), "{err}");
        }
        other => panic!("expected KernelPanic, got {other}"),
    }
}

/// The CPU half of gpu_panic's run-of-reads test: the same gray, and an input one byte short
/// is a kernel panic at the blue read's line.
#[test]
fn a_pixel_past_the_end_of_its_input_panics_at_its_first_read_past_it() {
    let pixels = 100usize;
    let rgb: Vec<u8> = (0..3 * pixels).map(|k| (k * 37 % 251) as u8).collect();
    let mut out = vec![0u8; pixels];
    kernels::cpu_gray_of_rgb(4u32, 32u32, &rgb, &mut out).unwrap();
    assert_eq!(out, check::gray_of_rgb(&rgb));
    let err = kernels::cpu_gray_of_rgb(4u32, 32u32, &rgb[..3 * pixels - 1], &mut out).unwrap_err();
    match &err {
        Error::KernelPanic { kernel, location, .. } => {
            assert_eq!(*kernel, "gray_of_rgb");
            let want = format!("kernels.rs:{}:", check::gray_of_rgb_blue_line());
            assert!(location.as_deref().unwrap_or_default().contains(&want), "{err}, expected {want}");
        }
        other => panic!("expected KernelPanic, got {other}"),
    }
}

/// CUDA's limits allow 2^73 threads in one launch; past 2^64 linear thread indices would wrap
/// and two threads would own one element, so oxide refuses more than 2^63 before running.
#[test]
fn a_launch_of_more_than_2_pow_63_threads_is_refused_before_running() {
    let mut out = vec![0u32; 32];
    let grid = oxide_rt::Dim3::new(i32::MAX as u32, 65535, 65535);
    let err = kernels::cpu_pass_index(grid, 1024u32, &mut out).unwrap_err();
    match &err {
        Error::InvalidLaunch { kernel, reason } => {
            assert_eq!(*kernel, "pass_index");
            assert!(reason.contains("more than the 9223372036854775808"), "{err}");
        }
        other => panic!("expected InvalidLaunch, got {other}"),
    }
    assert_eq!(out, vec![0; 32], "no thread ran");
}

#[test]
fn static_plus_dynamic_shared_memory_beyond_the_block_limit_is_refused() {
    let x: Vec<f32> = (0..256).map(|v| v as f32).collect();
    let mut out = vec![0f32; 256];
    // 32 KiB of static shared arrays + 200 KiB dynamic > 227 KiB per block (sm_90).
    let cfg = LaunchConfig::new(2u32, 128u32).shared_mem_bytes(200 * 1024);
    let err = kernels::cpu_big_static_shared_with(cfg, &x, &mut out).unwrap_err();
    match &err {
        Error::InvalidLaunch { kernel, reason } => {
            assert_eq!(*kernel, "big_static_shared");
            assert!(reason.contains("32768 bytes of static shared memory"), "{err}");
            assert!(reason.contains("204800 bytes of dynamic shared memory"), "{err}");
        }
        other => panic!("expected InvalidLaunch, got {other}"),
    }
    // Within the limit the kernel runs and its static array works.
    let cfg = LaunchConfig::new(2u32, 128u32).shared_mem_bytes(64 * 1024);
    kernels::cpu_big_static_shared_with(cfg, &x, &mut out).unwrap();
    assert_eq!(out, check::big_static_shared(&x, 128));
}

#[test]
fn a_4_mib_local_array_is_refused_before_running() {
    let mut out = vec![0u32; 32];
    let err = kernels::cpu_big_local(1u32, 32u32, 5, &mut out).unwrap_err();
    match &err {
        Error::InvalidLaunch { kernel, reason } => {
            assert_eq!(*kernel, "big_local");
            assert!(reason.contains("bytes of local memory (stack) per thread"), "{err}");
            assert!(reason.contains("524288"), "{err}");
        }
        other => panic!("expected InvalidLaunch, got {other}"),
    }
}

/// Per-warp outputs (3 warps per block), per-block ones with a block of 80 threads, and a row
/// per block with rows longer and shorter than the block; a 2-D grid of blocks counts linearly.
#[test]
fn per_warp_per_block_and_per_row_outputs() {
    let x = check::inputs_u32(6 * 96, 1 << 20);
    let mut sums = vec![u32::MAX; 6 * 3];
    kernels::cpu_warp_sums((3u32, 2u32), 96u32, &x, &mut sums).unwrap();
    assert_eq!(sums, check::warp_sums(&x, 6, 96));
    let mut maxes = vec![0u32; 6];
    kernels::cpu_block_max((2u32, 3u32), 80u32, &x, &mut maxes).unwrap();
    assert_eq!(maxes, check::block_max(&x, 6, 80));
    for cols in [1usize, 50, 64, 300] {
        let x: Vec<f32> = (0..5 * cols).map(|i| (i % 7) as f32 + 1.0).collect();
        let mut out = vec![f32::NAN; x.len()];
        kernels::cpu_normalize_rows(5u32, 64u32, &x, Slice2d::new(&mut out, cols)).unwrap();
        assert_eq!(out, check::normalize_rows(&x, cols, 64), "cols = {cols}");
    }
    // More blocks than rows: the extra blocks own nothing (the buffer ends).
    let x = vec![1.0f32; 2 * 10];
    let mut out = vec![0.0f32; 2 * 10];
    kernels::cpu_normalize_rows(4u32, 32u32, &x, Slice2d::new(&mut out, 10)).unwrap();
    assert!(out.iter().all(|&v| v == 0.1), "{out:?}");
}

/// A row-major output wider than `u32::MAX` columns is refused before any thread runs (the
/// device types keep the width as `u32`).
#[test]
fn shapes_beyond_u32_are_refused() {
    let mut out = vec![0u32; 4];
    let err = kernels::cpu_indices_2d(1u32, 4u32, Slice2d::new(&mut out, 1usize << 32)).unwrap_err();
    assert!(matches!(&err, Error::InvalidLaunch { kernel: "indices_2d", .. }), "{err}");
    assert!(err.to_string().contains("argument `out` has a shape of 4294967296"), "{err}");
    assert_eq!(out, vec![0u32; 4]);
}

/// A `ThreadIndex` passed to another thread (through a thread-local, which the simulated
/// threads of a block share) is refused when used, so no element gets two owners.
#[test]
fn a_thread_index_used_by_another_thread_is_refused() {
    kernels::PASSED.with(|p| p.set(None));
    let mut out = vec![0u32; 4];
    let err = kernels::cpu_pass_index(1u32, 4u32, &mut out).unwrap_err();
    assert!(err.to_string().contains("ThreadIndex 0 used by another thread"), "{err}");
    assert!(out.iter().all(|&v| v <= 1), "no element written twice: {out:?}");
}

/// A full bitonic sort from `DisjointXorPairs` steps (partner distance from the host), and a
/// Walsh–Hadamard transform from `DisjointButterflies` stages, against plain references.
#[test]
fn tiles_give_each_element_to_one_thread() {
    let (rows, cols) = (check::TILE_ROWS, check::TILE_COLS);
    for (grid, block) in check::TILE_LAUNCHES {
        let mut out = vec![0u32; rows * cols];
        kernels::cpu_tile_owners(grid, block, Slice2d::new(&mut out, cols)).unwrap();
        assert_eq!(out, check::tile_owners(rows, cols, grid, block), "grid {grid:?}, block {block:?}");
    }
}

#[test]
fn append_gives_each_claim_its_own_element() {
    let x = check::append_input();
    let kept = x.iter().filter(|v| *v % 3 == 0).count();
    // Room for every push; too little room; appending after 7 elements already there.
    for (room, start) in [(kept + 10, 0), (100, 0), (kept + 7, 7)] {
        let mut out = vec![u32::MAX; room];
        let mut count = [start as u64];
        kernels::cpu_keep_multiples(40u32, 128u32, &x, 3u32, Append::new(&mut out, &mut count)).unwrap();
        if let Err(e) = check::check_append(&x, 3, &out, count[0], start) {
            panic!("room {room}, start {start}: {e}");
        }
    }
    let (mut out, mut count) = (vec![0u32; 8], Vec::<u64>::new());
    let err = kernels::cpu_keep_multiples(1u32, 32u32, &x, 3u32, Append::new(&mut out, &mut count)).unwrap_err();
    assert!(matches!(&err, Error::InvalidLaunch { kernel: "keep_multiples", .. }), "{err}");
    assert!(err.to_string().contains("argument `out`: the claim counter is empty"), "{err}");
}

#[test]
fn xor_pairs_sort_and_butterflies_transform() {
    let n = 1024usize;
    let mut data = check::inputs_u32(n, 1 << 30);
    let mut k = 2;
    while k <= n {
        let mut j = k / 2;
        while j > 0 {
            kernels::cpu_bitonic_step(4u32, 256u32, k as u32, Pairs::new(&mut data, j)).unwrap();
            j /= 2;
        }
        k *= 2;
    }
    let mut want = check::inputs_u32(n, 1 << 30);
    want.sort_unstable();
    assert_eq!(data, want);

    let x: Vec<i32> = (0..256).map(|i| (i * 37 % 101) - 50).collect();
    let mut y = x.clone();
    let mut h = 1;
    while h < y.len() {
        kernels::cpu_hadamard_stage(2u32, 64u32, Pairs::new(&mut y, h)).unwrap();
        h *= 2;
    }
    assert_eq!(y, check::hadamard(&x));
    // A distance of 0 pairs nothing: the data stays as it is.
    let mut z = x.clone();
    kernels::cpu_hadamard_stage(2u32, 64u32, Pairs::new(&mut z, 0)).unwrap();
    kernels::cpu_bitonic_step(1u32, 256u32, 2, Pairs::new(&mut data, 0)).unwrap();
    assert_eq!(z, x);
}

#[test]
fn quad_mix() {
    let quads = check::quads(100);
    let mut out = vec![[0.0f32; 4]; 100];
    kernels::cpu_quad_mix(1u32, 128u32, &quads, &mut out).unwrap();
    assert_eq!(out, check::quad_mix(&quads));
}

#[test]
fn float_casts() {
    let (x, y) = check::cast_inputs();
    let mut out = vec![[0u64; 8]; x.len()];
    kernels::cpu_float_casts(1u32, 64u32, &x, &y, &mut out).unwrap();
    assert_eq!(out, check::float_casts(&x, &y));
}

/// `Matrix::chunk_or` against element-by-element reads: row lengths that allow 16- and 8-byte
/// vector reads (8), only 8-byte ones (6) and neither (7), chunks past the row's end and the
/// last row.
#[test]
fn matrix_chunks() {
    for (rows, cols) in [(5usize, 8usize), (5, 6), (4, 7), (1, 3)] {
        let input = check::inputs_u32(rows * cols, 1000);
        let n = (rows + 1) * (cols + 2);
        let mut out = vec![[0u32; 9]; n];
        kernels::cpu_matrix_chunks(1u32, n as u32, Matrix::new(&input[..], rows, cols), &mut out).unwrap();
        assert_eq!(out, check::matrix_chunks(&input, rows, cols), "{rows} x {cols}");
    }
}

#[test]
fn matrix_arguments() {
    let (rows, cols) = (13usize, 37usize);
    let input = check::inputs_u32(rows * cols, 1000);
    let out: Vec<AtomicU32> = (0..rows * cols).map(|_| AtomicU32::new(u32::MAX)).collect();
    let grid = (rows.div_ceil(8) as u32, cols.div_ceil(8) as u32);
    let launch = |m: Matrix<'_, [u32]>, o: Matrix<'_, [AtomicU32]>| kernels::cpu_matrix_flip(grid, (8u32, 8u32), m, o);
    launch(Matrix::new(&input[..], rows, cols), Matrix::new(&out[..], cols, rows)).unwrap();
    let got: Vec<u32> = out.iter().map(|a| a.load(Ordering::Relaxed)).collect();
    assert_eq!(got, check::matrix_flip(&input, rows, cols));
    // A shape the buffer cannot hold is refused before any thread runs, naming the argument.
    let err =
        launch(Matrix::new(&input[..rows * cols - 1], rows, cols), Matrix::new(&out[..], cols, rows)).unwrap_err();
    assert!(matches!(&err, Error::InvalidLaunch { .. }) && err.to_string().contains("`input`"), "{err}");
    let err = launch(Matrix::new(&input[..], rows, cols), Matrix::new(&out[..], cols + 1, rows)).unwrap_err();
    assert!(err.to_string().contains("`out`") && err.to_string().contains("holds"), "{err}");
}

/// The golden set on the CPU executor against plain Rust (`golden::Reference`: std's functions,
/// `as` casts, a model of the warp operations from the PTX ISA), held to the bounds the GPU test
/// holds the GPU to: CI's check of the CPU side of the agreement table.
#[test]
fn golden_cpu_against_reference() {
    let rows = golden::agreement(&golden::Cpu, &golden::Reference);
    println!("{}", golden::table("Golden set: the CPU executor against the Rust reference", &rows));
    let bad = golden::violations(&rows);
    assert!(bad.is_empty(), "operations outside their bound:\n{bad}");
}

/// The golden set's comparison: ulp distances across zero, NaN payloads counted apart and held
/// only where the operation says so, a NaN against a number always outside the bound.
#[test]
fn golden_comparison_counts_ulp_and_nan_payloads() {
    use golden::{compare_floats, ulp_distance, FLOAT_OPS};
    let b = |x: f32| x.to_bits() as u64;
    assert_eq!(ulp_distance(b(1.0), b(1.0f32.next_up()), 32), 1);
    assert_eq!(ulp_distance(b(0.0), b(-0.0), 32), 1);
    assert_eq!(ulp_distance(b(f32::from_bits(1)), b(-f32::from_bits(1)), 32), 3);
    assert_eq!(ulp_distance(f64::MAX.to_bits(), f64::INFINITY.to_bits(), 64), 1);
    let (sin32, add32) = (FLOAT_OPS[11].0, FLOAT_OPS[37].0);
    let x = [0.0; 4];
    let want = [b(0.5), b(f32::NAN), b(2.0), b(1.0)];
    let got = [b(0.5f32.next_up().next_up()), 0x7fff_ffff, b(2.0), b(f32::NAN)];
    let row = compare_floats("sin".into(), sin32, 32, &x, &got, &want);
    assert_eq!((row.inputs, row.exact, row.nan_payload), (4, 1, 1));
    assert_eq!(row.max_ulp, u64::MAX, "NaN against a number");
    assert_eq!(row.violations, 2, "the payload (held for f32 sin) and NaN against 1.0: {:?}", row.examples);
    // x + y: exact, NaN payloads reported only.
    let row = compare_floats("add".into(), add32, 32, &x, &[b(0.5), 0x7fff_ffff, b(2.0)], &want[..3]);
    assert_eq!((row.exact, row.nan_payload, row.violations, row.max_ulp), (2, 1, 0, 0));
    let off = compare_floats("add".into(), add32, 32, &x, &got[..1], &want[..1]);
    assert_eq!((off.violations, off.max_ulp), (1, 2), "2 ulp off an exact operation");
    let table = golden::table("t", &[row, off]);
    assert!(table.contains("| add | 3 | 2 | 0 | 1 | exact; NaN payloads may differ | yes |"), "{table}");
    assert!(table.contains("| add | 1 | 0 | 2 | 0 | exact; NaN payloads may differ | **no: 1** |"), "{table}");
}
