//! Every kernel on the GPU through the typed launchers, against the same expected values as the
//! CPU tests. Skips (printing why) without a GPU, unless OXIDE_REQUIRE_GPU=1.

use device_api::{check, golden, kernels};
use oxide_rt::host::Gpu;
use oxide_rt::{Append, LaunchConfig, Matrix, MatrixMut, Pairs, Slice2d, Slice3d};
use std::sync::OnceLock;

fn gpu() -> Option<&'static Gpu> {
    static GPU: OnceLock<Option<Gpu>> = OnceLock::new();
    GPU.get_or_init(device_api::gpu_or_skip).as_ref()
}

macro_rules! run {
    ($g:expr, $launch:expr) => {{
        $launch.unwrap();
        oxide_rt::host::synchronize(&$g.stream).unwrap();
    }};
}

#[test]
fn indices_2d() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let (w, h) = (37u32, 11u32);
    let mut out = s.alloc_zeros::<u32>((w * h) as usize).unwrap();
    run!(
        g,
        kernels::launch_indices_2d(s, (w.div_ceil(8), h.div_ceil(4)), (8u32, 4u32), Slice2d::new(&mut out, w as usize))
    );
    assert_eq!(s.clone_dtoh(&out).unwrap(), check::indices_2d(w, h));
    // A z extent would make threads share (x, y): none of them writes.
    let mut out = s.clone_htod(&vec![u32::MAX; 32]).unwrap();
    run!(g, kernels::launch_indices_2d(s, (1u32, 1u32, 2u32), (8u32, 4u32), Slice2d::new(&mut out, 8)));
    assert!(s.clone_dtoh(&out).unwrap().iter().all(|&v| v == u32::MAX));

    let (w, h, d) = (13u32, 7u32, 5u32);
    let mut out = s.alloc_zeros::<u32>((w * h * d) as usize).unwrap();
    let grid = (w.div_ceil(4), h.div_ceil(4), d.div_ceil(2));
    run!(g, kernels::launch_indices_3d(s, grid, (4u32, 4u32, 2u32), Slice3d::new(&mut out, w as usize, h as usize)));
    assert_eq!(s.clone_dtoh(&out).unwrap(), check::indices_3d(w, h, d));
    // Whole planes only: the threads past the third plane own nothing of the half plane after it.
    let (d, whole) = (3u32, (w * h * 3) as usize);
    let mut out = s.clone_htod(&vec![u32::MAX; whole + (w * h / 2) as usize]).unwrap();
    let grid = (w.div_ceil(4), h.div_ceil(4), 4u32);
    run!(g, kernels::launch_indices_3d(s, grid, (4u32, 4u32, 1u32), Slice3d::new(&mut out, w as usize, h as usize)));
    let got = s.clone_dtoh(&out).unwrap();
    assert_eq!(got[..whole], check::indices_3d(w, h, d)[..]);
    assert!(got[whole..].iter().all(|&v| v == u32::MAX), "{:?}", &got[whole..]);
}

#[test]
fn lane_warp() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let mut out = s.alloc_zeros::<u32>(3 * 96).unwrap();
    run!(g, kernels::launch_lane_warp(s, 3u32, 96u32, &mut out));
    assert_eq!(s.clone_dtoh(&out).unwrap(), check::lane_warp(3, 96));
}

#[test]
fn barriers() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let x = check::inputs_u32(512, 1000);
    let dx = s.clone_htod(&x).unwrap();
    for mode in [0, 1] {
        let mut out = s.alloc_zeros::<u32>(512).unwrap();
        run!(g, kernels::launch_barrier_after_branch(s, 2u32, 256u32, mode, &dx, &mut out));
        assert_eq!(s.clone_dtoh(&out).unwrap(), check::barrier_after_branch(mode, &x, 256), "mode {mode}");
    }
    let mut x = check::inputs_u32(3 * 64, 3);
    x[64..128].iter_mut().for_each(|v| *v = 1);
    x[128..].iter_mut().for_each(|v| *v = 0);
    let dx = s.clone_htod(&x).unwrap();
    let mut out = s.alloc_zeros::<u32>(x.len()).unwrap();
    run!(g, kernels::launch_barrier_reductions(s, 3u32, 64u32, &dx, &mut out));
    assert_eq!(s.clone_dtoh(&out).unwrap(), check::barrier_reductions(&x, 64));
    let mut out = s.alloc_zeros::<u32>(64).unwrap();
    run!(g, kernels::launch_fences(s, 2u32, 32u32, &mut out));
    assert!(s.clone_dtoh(&out).unwrap().iter().all(|&v| v == 1));
}

#[test]
fn shared_memory() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let x: Vec<f32> = (0..768).map(|i| i as f32 * 0.5).collect();
    let dx = s.clone_htod(&x).unwrap();
    let mut out = s.alloc_zeros::<f32>(768).unwrap();
    run!(g, kernels::launch_shared_reverse(s, 3u32, 256u32, &dx, &mut out));
    assert_eq!(s.clone_dtoh(&out).unwrap(), check::shared_reverse(&x));

    let x: Vec<u32> = (0..256).collect();
    let dx = s.clone_htod(&x).unwrap();
    let mut out = s.alloc_zeros::<u32>(256).unwrap();
    run!(g, kernels::launch_shared_transpose(s, 1u32, (16u32, 16u32), &dx, Slice2d::new(&mut out, 16)));
    assert_eq!(s.clone_dtoh(&out).unwrap(), check::shared_transpose(&x));

    let x = check::inputs_u32(4 * 128, 1000);
    let dx = s.clone_htod(&x).unwrap();
    let mut out = s.alloc_zeros::<u32>(x.len()).unwrap();
    let cfg = LaunchConfig::new(4u32, 128u32).shared_mem_bytes(128 * 4);
    run!(g, kernels::launch_dynamic_shared_sum_with(s, cfg, &dx, &mut out));
    assert_eq!(s.clone_dtoh(&out).unwrap(), check::dynamic_shared_sum(&x, 128, 512));
}

#[test]
fn atomics() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let x = check::inputs_u32(2 * 96, 5000);
    let dx = s.clone_htod(&x).unwrap();
    let mut out = s.alloc_zeros::<u64>(x.len()).unwrap();
    run!(g, kernels::launch_atomics_shared(s, 2u32, 96u32, &dx, &mut out));
    assert_eq!(s.clone_dtoh(&out).unwrap(), check::atomics_shared(&x, 96));

    let x = check::inputs_u32(2 * 64, 100_000);
    let dx = s.clone_htod(&x).unwrap();
    let mut out = s.alloc_zeros::<u64>(x.len()).unwrap();
    run!(g, kernels::launch_core_atomics(s, 2u32, 64u32, &dx, &mut out));
    assert_eq!(s.clone_dtoh(&out).unwrap(), check::core_atomics(&x, 64));

    let x: Vec<f32> = (0..1000).map(|i| (i % 7) as f32 * 0.25).collect();
    let dx = s.clone_htod(&x).unwrap();
    // `&[AtomicF32]` / `&[AtomicF64]` are plain `f32` / `f64` buffers on the host.
    let mut s32 = s.alloc_zeros::<f32>(2).unwrap();
    let mut s64 = s.alloc_zeros::<f64>(1).unwrap();
    run!(g, kernels::launch_atomics_float(s, 4u32, 256u32, &dx, &mut s32, &mut s64));
    let want: f64 = x.iter().map(|&v| v as f64).sum();
    let r32: Vec<f32> = s.clone_dtoh(&s32).unwrap();
    let r64: Vec<f64> = s.clone_dtoh(&s64).unwrap();
    assert_eq!(r32, [want as f32, 1000.0]);
    assert_eq!(r64, [want]);
}

#[test]
fn warps_and_bits() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let mut out = s.alloc_zeros::<[u64; 8]>(128).unwrap();
    run!(g, kernels::launch_warp_ops(s, 2u32, 64u32, &mut out));
    let got = s.clone_dtoh(&out).unwrap();
    for (i, (g, w)) in got.iter().zip(&check::warp_ops(128)).enumerate() {
        assert_eq!(g, w, "thread {i}");
    }
    let mut x = check::inputs_u32(100, u32::MAX);
    x[0] = 0;
    x[1] = 1 << 31;
    let dx = s.clone_htod(&x).unwrap();
    let mut out = s.alloc_zeros::<[u32; 8]>(100).unwrap();
    run!(g, kernels::launch_bit_ops(s, 1u32, 100u32, &dx, &mut out));
    assert_eq!(s.clone_dtoh(&out).unwrap(), check::bit_ops(&x));
}

#[test]
fn printing_launch_bounds_and_dependencies() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let mut out = s.alloc_zeros::<u32>(64).unwrap();
    run!(g, kernels::launch_hello(s, 2u32, 32u32, 7, &mut out));
    assert!(s.clone_dtoh(&out).unwrap().iter().all(|&v| v == 7));

    let mut out = s.alloc_zeros::<u32>(512).unwrap();
    run!(g, kernels::launch_bounded(s, 2u32, 256u32, &mut out));
    assert_eq!(s.clone_dtoh(&out).unwrap(), (0..512).collect::<Vec<u32>>());
    // 512 threads exceed the kernel's launch bounds of 256: refused before launching.
    let err = kernels::launch_bounded(s, 1u32, 512u32, &mut out).unwrap_err();
    assert!(err.to_string().contains("512"), "{err}");

    let x: Vec<u64> = (0..300).collect();
    let dx = s.clone_htod(&x).unwrap();
    let mut steps = s.alloc_zeros::<u32>(300).unwrap();
    run!(g, kernels::launch_collatz(s, 3u32, 100u32, &dx, &mut steps));
    assert_eq!(s.clone_dtoh(&steps).unwrap(), check::collatz(&x));
}

/// Inputs of atomics, whole buffers and views, whose context the launcher asks the driver for.
/// The kernel writes through atomics, so the launch borrows their buffers mutably: one buffer
/// cannot be passed twice, nor as atomics and a plain input at once (`tests/ui` has that).
#[test]
fn atomic_inputs_and_views() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let mut flags = s.clone_htod(&(0..100u32).collect::<Vec<_>>()).unwrap();
    let mut again = s.clone_htod(&(0..100u32).collect::<Vec<_>>()).unwrap();
    let mut out = s.alloc_zeros::<u32>(100).unwrap();
    run!(g, kernels::launch_atomic_loads(s, 4u32, 32u32, &mut flags, &mut again, &mut out));
    assert_eq!(s.clone_dtoh(&out).unwrap(), (0..100).map(|v| 3 * v).collect::<Vec<u32>>());

    let (mut head, mut tail) = flags.split_at_mut(50);
    let mut part = out.slice_mut(10..60);
    run!(g, kernels::launch_atomic_loads(s, 2u32, 32u32, &mut head, &mut tail, &mut part));
    let want: Vec<u32> =
        (0..100).map(|i| if (10..60).contains(&i) { (i - 10) + 2 * (i + 40) } else { 3 * i }).collect();
    assert_eq!(s.clone_dtoh(&out).unwrap(), want);

    // A plain input and atomics from one allocation, side by side.
    let mut sums = s.alloc_zeros::<f32>(300).unwrap();
    let mut s64 = s.alloc_zeros::<f64>(1).unwrap();
    let (x, mut rest) = sums.split_at_mut(256);
    run!(g, kernels::launch_atomics_float(s, 1u32, 256u32, &x, &mut rest.slice_mut(..2), &mut s64));
}

/// A kernel's atomics are written by it: reading them back on another stream waits for the
/// launch (the launcher records a write on the buffer; a read was recorded before, and a copy
/// on a second stream then raced the still-running kernel).
#[test]
fn atomics_read_on_another_stream_wait_for_the_kernel() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let other = g.ctx.new_stream().unwrap();
    let n = 1usize << 24;
    let dx = s.clone_htod(&vec![1.0f32; n]).unwrap();
    for _ in 0..3 {
        let mut s32 = s.alloc_zeros::<f32>(2).unwrap();
        let mut s64 = s.alloc_zeros::<f64>(1).unwrap();
        // 2^24 adds into one float: milliseconds of contended atomics, and exact (2^24 fits).
        kernels::launch_atomics_float(s, (n / 256) as u32, 256u32, &dx, &mut s32, &mut s64).unwrap();
        let sums = other.clone_dtoh(&s32).unwrap();
        assert_eq!(sums, [n as f32, n as f32], "read on a second stream before the kernel finished");
    }
}

/// A view that does not start at a whole element (only `unsafe` code can make one) is refused
/// before the launch instead of faulting the context.
#[test]
fn misaligned_views_are_refused() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let bytes = s.alloc_zeros::<u8>(64).unwrap();
    let mut bytes = bytes;
    let mut shifted = bytes.slice_mut(2..);
    // SAFETY: 8 u32s fit in the 62 bytes; the point of the test is the misalignment.
    let mut view = unsafe { shifted.transmute_mut::<u32>(8) }.unwrap();
    let mut out = s.alloc_zeros::<u32>(8).unwrap();
    let mut flags = s.clone_htod(&[1u32; 8]).unwrap();
    let err = kernels::launch_atomic_loads(s, 1u32, 32u32, &mut view, &mut flags, &mut out).unwrap_err();
    assert!(err.to_string().contains("not aligned"), "{err}");
    // The context is still good.
    let mut again = s.clone_htod(&[1u32; 8]).unwrap();
    run!(g, kernels::launch_atomic_loads(s, 1u32, 32u32, &mut flags, &mut again, &mut out));
    assert_eq!(s.clone_dtoh(&out).unwrap(), vec![3u32; 8]);
}

/// `[f32; 4]` buffers are read and written 16 bytes at a time, so a view must start 16-byte
/// aligned: one a whole element into an allocation does; one 4 bytes in (aligned for `f32`,
/// which only `unsafe` code can make) is refused before the launch.
#[test]
fn quads_move_whole_and_misaligned_quad_views_are_refused() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let quads = check::quads(100);
    let dq = s.clone_htod(&quads).unwrap();
    let mut out = s.alloc_zeros::<[f32; 4]>(100).unwrap();
    run!(g, kernels::launch_quad_mix(s, 1u32, 128u32, &dq, &mut out));
    assert_eq!(s.clone_dtoh(&out).unwrap(), check::quad_mix(&quads));
    let mut rest = s.alloc_zeros::<[f32; 4]>(99).unwrap();
    run!(g, kernels::launch_quad_mix(s, 1u32, 128u32, &dq.slice(1..), &mut rest));
    assert_eq!(s.clone_dtoh(&rest).unwrap(), check::quad_mix(&quads[1..]));

    let flat = s.alloc_zeros::<f32>(404).unwrap();
    let shifted = flat.slice(1..);
    // SAFETY: 100 quads fit in the 403 floats; the point of the test is the misalignment.
    let view = unsafe { shifted.transmute::<[f32; 4]>(100) }.unwrap();
    let err = kernels::launch_quad_mix(s, 1u32, 128u32, &view, &mut out).unwrap_err();
    assert!(err.to_string().contains("not aligned to 16 bytes"), "{err}");
    // The launch before it still stands.
    assert_eq!(s.clone_dtoh(&out).unwrap(), check::quad_mix(&quads));
}

/// More than 2^63 threads (CUDA allows 2^73) would wrap linear thread indices: refused before
/// the driver sees the launch.
#[test]
fn a_launch_of_more_than_2_pow_63_threads_is_refused() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let mut out = s.alloc_zeros::<u32>(32).unwrap();
    let grid = oxide_rt::Dim3::new(i32::MAX as u32, 65535, 65535);
    let err = kernels::launch_pass_index(s, grid, 1024u32, &mut out).unwrap_err();
    match &err {
        oxide_rt::Error::InvalidLaunch { kernel, reason } => {
            assert_eq!(*kernel, "pass_index");
            assert!(reason.contains("more than the 9223372036854775808"), "{err}");
        }
        other => panic!("expected InvalidLaunch, got {other}"),
    }
    assert_eq!(s.clone_dtoh(&out).unwrap(), vec![0; 32], "no thread ran");
}

#[test]
fn static_plus_dynamic_shared_memory_beyond_the_block_limit_is_refused() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let x: Vec<f32> = (0..256).map(|v| v as f32).collect();
    let dx = s.clone_htod(&x).unwrap();
    let mut out = s.alloc_zeros::<f32>(256).unwrap();
    // 32 KiB static + 200 KiB dynamic: refused with both sizes, not a bare driver error.
    let cfg = LaunchConfig::new(2u32, 128u32).shared_mem_bytes(200 * 1024);
    let err = kernels::launch_big_static_shared_with(s, cfg, &dx, &mut out).unwrap_err();
    eprintln!("reported: {err}");
    match &err {
        oxide_rt::Error::InvalidLaunch { kernel, reason } => {
            assert_eq!(*kernel, "big_static_shared");
            assert!(reason.contains("32768 bytes of static shared memory"), "{err}");
            assert!(reason.contains("204800 bytes of dynamic shared memory"), "{err}");
        }
        other => panic!("expected InvalidLaunch, got {other}"),
    }
    // 32 KiB static + 64 KiB dynamic (above 48 KiB in all: needs the opt-in) runs correctly.
    let cfg = LaunchConfig::new(2u32, 128u32).shared_mem_bytes(64 * 1024);
    run!(g, kernels::launch_big_static_shared_with(s, cfg, &dx, &mut out));
    assert_eq!(s.clone_dtoh(&out).unwrap(), check::big_static_shared(&x, 128));
}

#[test]
fn a_4_mib_local_array_is_refused_with_its_size() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let mut out = s.alloc_zeros::<u32>(32).unwrap();
    let err = kernels::launch_big_local(s, 1u32, 32u32, 5, &mut out).unwrap_err();
    eprintln!("reported: {err}");
    match &err {
        oxide_rt::Error::InvalidLaunch { kernel, reason } => {
            assert_eq!(*kernel, "big_local");
            assert!(reason.contains("bytes of local memory (stack) per thread"), "{err}");
        }
        other => panic!("expected InvalidLaunch, got {other}"),
    }
    // The context is still fine.
    let x = check::inputs_u32(256, 1000);
    let dx = s.clone_htod(&x).unwrap();
    let mut busy = s.alloc_zeros::<u32>(256).unwrap();
    run!(g, kernels::launch_busy(s, 2u32, 128u32, 100, &dx, &mut busy));
    assert_eq!(s.clone_dtoh(&busy).unwrap(), check::busy(100, &x));
}

/// A buffer of another context (here a second, non-primary context on the same GPU) is refused
/// by name before the launch when it is a `CudaSlice` (which records its context).
#[test]
fn buffers_of_another_context_are_refused() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let other = oxide_rt::cuda::CudaContext::new_non_primary(0, 0).unwrap();
    let mut theirs = other.default_stream().clone_htod(&[1u32; 64]).unwrap();
    other.default_stream().synchronize().unwrap();
    g.ctx.bind_to_thread().unwrap();
    let mut ours = s.clone_htod(&[1u32; 64]).unwrap();
    let mut again = s.clone_htod(&[1u32; 64]).unwrap();
    let mut out = s.alloc_zeros::<u32>(64).unwrap();
    let err = kernels::launch_atomic_loads(s, 2u32, 32u32, &mut theirs, &mut ours, &mut out).unwrap_err();
    assert!(err.to_string().contains("argument `flags` was allocated in another CUDA context"), "{err}");
    // A view names no context, and memory from the device's stream-ordered pool (what cudarc
    // allocates) belongs to the device, not to one context: usable from ours, so accepted.
    run!(g, kernels::launch_atomic_loads(s, 2u32, 32u32, &mut ours, &mut theirs.slice_mut(..), &mut out));
    assert_eq!(s.clone_dtoh(&out).unwrap(), vec![3u32; 64]);
    let mut their_out = other.default_stream().alloc_zeros::<u32>(64).unwrap();
    g.ctx.bind_to_thread().unwrap();
    let err = kernels::launch_atomic_loads(s, 2u32, 32u32, &mut ours, &mut again, &mut their_out).unwrap_err();
    assert!(err.to_string().contains("argument `out` was allocated in another CUDA context"), "{err}");
    // Our own buffers still launch.
    run!(g, kernels::launch_atomic_loads(s, 2u32, 32u32, &mut ours, &mut again, &mut out));
    assert_eq!(s.clone_dtoh(&out).unwrap(), vec![3u32; 64]);
}

/// The same per-warp, per-block and per-row outputs on the GPU, checked against the same
/// references as on the CPU.
#[test]
fn per_warp_per_block_and_per_row_outputs() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let xh = check::inputs_u32(6 * 96, 1 << 20);
    let x = s.clone_htod(&xh).unwrap();
    let mut sums = s.alloc_zeros::<u32>(6 * 3).unwrap();
    run!(g, kernels::launch_warp_sums(s, (3u32, 2u32), 96u32, &x, &mut sums));
    assert_eq!(s.clone_dtoh(&sums).unwrap(), check::warp_sums(&xh, 6, 96));
    let mut maxes = s.alloc_zeros::<u32>(6).unwrap();
    run!(g, kernels::launch_block_max(s, (2u32, 3u32), 80u32, &x, &mut maxes));
    assert_eq!(s.clone_dtoh(&maxes).unwrap(), check::block_max(&xh, 6, 80));
    for cols in [1usize, 50, 64, 300] {
        let xh: Vec<f32> = (0..5 * cols).map(|i| (i % 7) as f32 + 1.0).collect();
        let x = s.clone_htod(&xh).unwrap();
        let mut out = s.alloc_zeros::<f32>(xh.len()).unwrap();
        run!(g, kernels::launch_normalize_rows(s, 5u32, 64u32, &x, Slice2d::new(&mut out, cols)));
        assert_eq!(s.clone_dtoh(&out).unwrap(), check::normalize_rows(&xh, cols, 64), "cols = {cols}");
    }
}

/// The tile-ownership launches of the CPU test, on the GPU.
#[test]
fn tiles_give_each_element_to_one_thread() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let (rows, cols) = (check::TILE_ROWS, check::TILE_COLS);
    for (grid, block) in check::TILE_LAUNCHES {
        let mut out = s.alloc_zeros::<u32>(rows * cols).unwrap();
        run!(g, kernels::launch_tile_owners(s, grid, block, Slice2d::new(&mut out, cols)));
        assert_eq!(
            s.clone_dtoh(&out).unwrap(),
            check::tile_owners(rows, cols, grid, block),
            "grid {grid:?}, block {block:?}"
        );
    }
}

/// The claims of the CPU test, on the GPU (warp-aggregated there).
#[test]
fn append_gives_each_claim_its_own_element() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let x = check::append_input();
    let dx = s.clone_htod(&x).unwrap();
    let kept = x.iter().filter(|v| *v % 3 == 0).count();
    for (room, start) in [(kept + 10, 0), (100, 0), (kept + 7, 7)] {
        let mut out = s.clone_htod(&vec![u32::MAX; room]).unwrap();
        let mut count = s.clone_htod(&[start as u64]).unwrap();
        run!(g, kernels::launch_keep_multiples(s, 40u32, 128u32, &dx, 3u32, Append::new(&mut out, &mut count)));
        let (out, count) = (s.clone_dtoh(&out).unwrap(), s.clone_dtoh(&count).unwrap());
        if let Err(e) = check::check_append(&x, 3, &out, count[0], start) {
            panic!("room {room}, start {start}: {e}");
        }
    }
}

/// The bitonic sort and the Walsh–Hadamard transform of the CPU test, on the GPU.
#[test]
fn xor_pairs_sort_and_butterflies_transform() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let n = 1024usize;
    let mut data = s.clone_htod(&check::inputs_u32(n, 1 << 30)).unwrap();
    let mut k = 2;
    while k <= n {
        let mut j = k / 2;
        while j > 0 {
            kernels::launch_bitonic_step(s, 4u32, 256u32, k as u32, Pairs::new(&mut data, j)).unwrap();
            j /= 2;
        }
        k *= 2;
    }
    g.synchronize().unwrap();
    let mut want = check::inputs_u32(n, 1 << 30);
    want.sort_unstable();
    assert_eq!(s.clone_dtoh(&data).unwrap(), want);

    let x: Vec<i32> = (0..256).map(|i| (i * 37 % 101) - 50).collect();
    let mut y = s.clone_htod(&x).unwrap();
    let mut h = 1;
    while h < x.len() {
        kernels::launch_hadamard_stage(s, 2u32, 64u32, Pairs::new(&mut y, h)).unwrap();
        h *= 2;
    }
    g.synchronize().unwrap();
    assert_eq!(s.clone_dtoh(&y).unwrap(), check::hadamard(&x));
}

/// Rust's saturating casts on the GPU (one `cvt.rzi` each): NaN to 0, out of range to the bound.
#[test]
fn float_casts() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let (x, y) = check::cast_inputs();
    let (dx, dy) = (s.clone_htod(&x).unwrap(), s.clone_htod(&y).unwrap());
    let mut out = s.alloc_zeros::<[u64; 8]>(x.len()).unwrap();
    run!(g, kernels::launch_float_casts(s, 1u32, 64u32, &dx, &dy, &mut out));
    let got = s.clone_dtoh(&out).unwrap();
    let wrong: Vec<String> = got
        .iter()
        .zip(check::float_casts(&x, &y))
        .enumerate()
        .filter(|(_, (g, w))| *g != w)
        .map(|(i, (g, w))| format!("f32 {} / f64 {}: GPU {g:?}, Rust {w:?}", x[i], y[i]))
        .collect();
    assert!(wrong.is_empty(), "{} of {} inputs cast differently:\n{}", wrong.len(), x.len(), wrong.join("\n"));
}

/// `Matrix::chunk_or` on the GPU (`ld.global.nc.v4` / `.v2` where the row length allows them)
/// against element-by-element reads.
#[test]
fn matrix_chunks() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    for (rows, cols) in [(5usize, 8usize), (5, 6), (4, 7), (1, 3)] {
        let input = check::inputs_u32(rows * cols, 1000);
        let din = s.clone_htod(&input).unwrap();
        let n = (rows + 1) * (cols + 2);
        let mut out = s.alloc_zeros::<[u32; 9]>(n).unwrap();
        run!(g, kernels::launch_matrix_chunks(s, 1u32, n as u32, Matrix::new(&din, rows, cols), &mut out));
        assert_eq!(s.clone_dtoh(&out).unwrap(), check::matrix_chunks(&input, rows, cols), "{rows} x {cols}");
    }
}

/// `Matrix` arguments on the GPU: read-only and atomic, and a shape its buffer cannot hold.
#[test]
fn matrix_arguments() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let (rows, cols) = (13usize, 37usize);
    let input = check::inputs_u32(rows * cols, 1000);
    let din = s.clone_htod(&input).unwrap();
    let mut out = s.alloc_zeros::<u32>(rows * cols).unwrap();
    let grid = (rows.div_ceil(8) as u32, cols.div_ceil(8) as u32);
    run!(
        g,
        kernels::launch_matrix_flip(
            s,
            grid,
            (8u32, 8u32),
            Matrix::new(&din, rows, cols),
            MatrixMut::new(&mut out, cols, rows)
        )
    );
    assert_eq!(s.clone_dtoh(&out).unwrap(), check::matrix_flip(&input, rows, cols));
    let err = kernels::launch_matrix_flip(
        s,
        grid,
        (8u32, 8u32),
        Matrix::new(&din, rows + 1, cols),
        MatrixMut::new(&mut out, cols, rows),
    )
    .unwrap_err();
    assert!(err.to_string().contains("`input`") && err.to_string().contains("holds"), "{err}");
}

/// The golden set on the GPU against the CPU executor: the agreement table per operation
/// (inputs, bit-exact results, largest ulp distance, NaN payload differences, the bound), written
/// to stdout and to the file `OXIDE_GOLDEN_TABLE` names; every operation within its bound.
#[test]
fn golden_agreement_table() {
    let Some(g) = gpu() else { return };
    let rows = golden::agreement(&golden::OnGpu(g), &golden::Cpu);
    let title = format!("Golden set: {} against the CPU executor (bound: GPU's documented + host's own)", g.describe());
    golden::publish(&golden::table(&title, &rows));
    let bad = golden::violations(&rows);
    assert!(bad.is_empty(), "operations outside their bound:\n{bad}");
}
