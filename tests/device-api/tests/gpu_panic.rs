//! A bounds-check panic in a GPU kernel comes back as `Error::KernelPanic` naming the kernel,
//! the source location and (debug builds) the message, once; the context stays usable. Run by
//! ci/gpu-check.sh in both profiles (release builds take another panic path). Its own test
//! binary, so a regression that poisons the context cannot take other tests with it.

use device_api::{check, kernels};
use oxide_rt::Error;

#[test]
fn out_of_bounds_on_the_gpu_reports_kernel_file_line_and_message() {
    let Some(g) = device_api::gpu_or_skip() else { return };
    let s = &g.stream;
    let x = s.clone_htod(&vec![1f32; 64]).unwrap();
    let mut out = s.alloc_zeros::<f32>(64).unwrap();
    // Launching succeeds (it is asynchronous); the panic surfaces when synchronizing.
    kernels::launch_out_of_bounds(s, 1u32, 64u32, 10, &x, &mut out).unwrap();
    let err = g.synchronize().unwrap_err();
    eprintln!("reported: {err}");
    match &err {
        Error::KernelPanic { kernel, location, message } => {
            assert_eq!(*kernel, "out_of_bounds");
            let loc = location.as_deref().unwrap_or_default();
            assert!(loc.contains("tests/device-api/src/kernels.rs:") || loc.contains("kernels.rs:"), "{err}");
            if cfg!(debug_assertions) {
                assert!(message.contains("index out of bounds: the len is 64 but the index is"), "{err}");
            } else {
                // Release builds inline the panic path and record only where it happened.
                assert!(message.contains("message not recorded") && message.contains("panic_messages(true)"), "{err}");
            }
        }
        other => panic!("expected Error::KernelPanic, got {other:?}"),
    }
    // Reported once; the next launch in the same context runs normally.
    kernels::launch_out_of_bounds(s, 1u32, 64u32, 0, &x, &mut out).unwrap();
    g.synchronize().unwrap();
    assert_eq!(s.clone_dtoh(&out).unwrap(), vec![1f32; 64]);
}

/// A warp shuffle whose mask leaves out the calling lane is undefined in PTX: oxide makes it a
/// kernel panic at the caller's line, as on the CPU executor.
#[test]
fn a_shuffle_mask_without_the_calling_lane_panics() {
    let Some(g) = device_api::gpu_or_skip() else { return };
    let s = &g.stream;
    let mut out = s.alloc_zeros::<u32>(64).unwrap();
    kernels::launch_shuffle_mask(s, 2u32, 32u32, u32::MAX, 0, &mut out).unwrap();
    g.synchronize().unwrap();
    let want: Vec<u32> = (0..64u32).map(|i| i ^ 1).collect();
    assert_eq!(s.clone_dtoh(&out).unwrap(), want);
    kernels::launch_shuffle_mask(s, 2u32, 32u32, u32::MAX, 1, &mut out).unwrap();
    match g.synchronize().unwrap_err() {
        Error::KernelPanic { kernel, location, .. } => {
            assert_eq!(kernel, "shuffle_mask");
            assert!(location.as_deref().unwrap_or_default().contains("kernels.rs:"), "{location:?}");
        }
        other => panic!("expected Error::KernelPanic, got {other:?}"),
    }
    // The context stays usable.
    kernels::launch_shuffle_mask(s, 2u32, 32u32, u32::MAX, 0, &mut out).unwrap();
    g.synchronize().unwrap();
}

/// A gather whose checks wait for its index reads (release builds read ahead of those checks,
/// each read bounded by its input): in range it sums what the CPU sums; one index past `x`
/// is a kernel panic at the kernel's line, and the context stays usable.
#[test]
fn a_gather_reads_ahead_of_its_checks_and_still_panics_past_the_end() {
    let Some(g) = device_api::gpu_or_skip() else { return };
    let s = &g.stream;
    let x: Vec<f32> = (0..100).map(|k| k as f32).collect();
    let mut idx: Vec<u32> = (0..256u32).map(|k| (k * 37) % 100).collect();
    let want: Vec<f32> = idx.chunks(4).map(|c| c.iter().map(|&j| x[j as usize]).sum()).collect();
    let dx = s.clone_htod(&x).unwrap();
    let mut out = s.alloc_zeros::<f32>(64).unwrap();
    let didx = s.clone_htod(&idx).unwrap();
    kernels::launch_gather4(s, 2u32, 32u32, &didx, &dx, &mut out).unwrap();
    g.synchronize().unwrap();
    assert_eq!(s.clone_dtoh(&out).unwrap(), want);
    idx[4 * 13 + 2] = 100;
    let didx = s.clone_htod(&idx).unwrap();
    kernels::launch_gather4(s, 2u32, 32u32, &didx, &dx, &mut out).unwrap();
    match g.synchronize().unwrap_err() {
        Error::KernelPanic { kernel, location, .. } => {
            assert_eq!(kernel, "gather4");
            assert!(location.as_deref().unwrap_or_default().contains("kernels.rs:"), "{location:?}");
        }
        other => panic!("expected Error::KernelPanic, got {other:?}"),
    }
    idx[4 * 13 + 2] = 99;
    let didx = s.clone_htod(&idx).unwrap();
    kernels::launch_gather4(s, 2u32, 32u32, &didx, &dx, &mut out).unwrap();
    g.synchronize().unwrap();
}

/// Taps read under the user's own tests, their bounds checks tested once before them in
/// release builds: in range the result is the CPU's (bit for bit: the same order of fused
/// multiply-adds); an input one row short is a kernel panic at the kernel's line, from the
/// threads whose lower taps reach past it, and the context stays usable.
#[test]
fn taps_checked_before_they_run_still_panic_past_the_end() {
    let Some(g) = device_api::gpu_or_skip() else { return };
    let s = &g.stream;
    let (cols, rows) = (37usize, 29usize);
    let input: Vec<f32> = (0..cols * rows).map(|k| (k % 13) as f32 * 0.25 - 1.0).collect();
    let w = [0.5f32, -1.0, 0.25, 2.0, 1.0, -0.5, 0.125, 0.75, -2.0];
    let mut out = s.alloc_zeros::<f32>(cols * rows).unwrap();
    let run = |input: &[f32], out: &mut oxide_rt::cuda::CudaSlice<f32>| {
        let d = s.clone_htod(input).unwrap();
        kernels::launch_taps3x3(s, (2u32, 8u32), (32u32, 4u32), &d, w, oxide_rt::Slice2d::new(out, cols)).unwrap();
    };
    run(&input, &mut out);
    g.synchronize().unwrap();
    let want = check::taps3x3(&input, &w, cols, rows);
    let got = s.clone_dtoh(&out).unwrap();
    for (k, (a, b)) in got.iter().zip(&want).enumerate() {
        assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "element {k}: {a} against {b}");
    }
    run(&input[..cols * (rows - 1)], &mut out);
    match g.synchronize().unwrap_err() {
        Error::KernelPanic { kernel, location, .. } => {
            assert_eq!(kernel, "taps3x3");
            assert!(location.as_deref().unwrap_or_default().contains("kernels.rs:"), "{location:?}");
        }
        other => panic!("expected Error::KernelPanic, got {other:?}"),
    }
    run(&input, &mut out);
    g.synchronize().unwrap();
}

/// Three reads of one pixel at `3i`, `3i + 1`, `3i + 2`: release builds test only the first and
/// the last before reading (`ir/early_checks.rs`); in range the result is the CPU's, and an
/// input one byte short is a kernel panic at the blue read's line (the first read past the
/// end), after which the context stays usable.
#[test]
fn a_run_of_reads_tested_by_its_ends_panics_at_the_first_read_past_the_end() {
    let Some(g) = device_api::gpu_or_skip() else { return };
    let s = &g.stream;
    let pixels = 100usize;
    let rgb: Vec<u8> = (0..3 * pixels).map(|k| (k * 37 % 251) as u8).collect();
    let mut out = s.alloc_zeros::<u8>(pixels).unwrap();
    let d = s.clone_htod(&rgb).unwrap();
    kernels::launch_gray_of_rgb(s, 4u32, 32u32, &d, &mut out).unwrap();
    g.synchronize().unwrap();
    assert_eq!(s.clone_dtoh(&out).unwrap(), check::gray_of_rgb(&rgb));
    let short = s.clone_htod(&rgb[..3 * pixels - 1]).unwrap();
    kernels::launch_gray_of_rgb(s, 4u32, 32u32, &short, &mut out).unwrap();
    match g.synchronize().unwrap_err() {
        Error::KernelPanic { kernel, location, .. } => {
            assert_eq!(kernel, "gray_of_rgb");
            let want = format!("kernels.rs:{}:", check::gray_of_rgb_blue_line());
            assert!(location.as_deref().unwrap_or_default().contains(&want), "{location:?}, expected {want}");
        }
        other => panic!("expected Error::KernelPanic, got {other:?}"),
    }
    kernels::launch_gray_of_rgb(s, 4u32, 32u32, &d, &mut out).unwrap();
    g.synchronize().unwrap();
}
