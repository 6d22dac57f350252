//! A kernel panic while another stream is busy: the error names exactly the panicking kernel
//! (not the one launched last), and the context stays usable: later launches in the same
//! process run correctly, and a second panic is reported again. Its own test binary, so a
//! regression that poisons the context cannot take other tests with it.

use device_api::{check, kernels};
use oxide_rt::Error;

#[test]
fn a_panic_names_its_kernel_and_the_context_stays_usable() {
    let Some(g) = device_api::gpu_or_skip() else { return };
    let s = &g.stream;
    let other = g.ctx.new_stream().unwrap();
    let n = 64 * 128;
    let xs = check::inputs_u32(n, 1000);
    let dxs = other.clone_htod(&xs).unwrap();
    let mut busy_out = other.alloc_zeros::<u32>(n).unwrap();
    let x = s.clone_htod(&vec![1f32; 64]).unwrap();
    let mut out = s.alloc_zeros::<f32>(64).unwrap();
    s.synchronize().unwrap();
    other.synchronize().unwrap();

    // A long kernel on the second stream, then the panicking one on the first: the panicking
    // launch is not the last one made, and both are in flight when it panics.
    kernels::launch_busy(&other, 64u32, 128u32, 1 << 22, &dxs, &mut busy_out).unwrap();
    kernels::launch_out_of_bounds(s, 1u32, 64u32, 10, &x, &mut out).unwrap();
    let err = g.synchronize().unwrap_err();
    eprintln!("reported: {err}");
    match &err {
        Error::KernelPanic { kernel, message, location } => {
            assert_eq!(*kernel, "out_of_bounds", "{err}");
            assert!(location.as_deref().unwrap_or_default().contains("kernels.rs:"), "{err}");
            assert!(message.contains("of `out_of_bounds` on the default stream"), "{err}");
            assert!(!message.contains("ambiguous"), "{err}");
            assert!(message.contains("the context stays usable"), "{err}");
        }
        other => panic!("expected Error::KernelPanic, got {other:?}"),
    }
    // Reported once: the busy kernel on the other stream finishes without an error.
    oxide_rt::host::synchronize(&other).unwrap();

    // The same context keeps working: correct launches, then a second panic reported again.
    kernels::launch_busy(&other, 64u32, 128u32, 1000, &dxs, &mut busy_out).unwrap();
    oxide_rt::host::synchronize(&other).unwrap();
    assert_eq!(other.clone_dtoh(&busy_out).unwrap(), check::busy(1000, &xs));
    let xf: Vec<f32> = (0..64).map(|v| v as f32).collect();
    let x = s.clone_htod(&xf).unwrap();
    kernels::launch_out_of_bounds(s, 1u32, 64u32, 0, &x, &mut out).unwrap();
    g.synchronize().unwrap();
    assert_eq!(s.clone_dtoh(&out).unwrap(), xf);
    kernels::launch_out_of_bounds(s, 1u32, 64u32, 10, &x, &mut out).unwrap();
    let second = g.synchronize().unwrap_err();
    assert!(matches!(second, Error::KernelPanic { kernel: "out_of_bounds", .. }), "{second}");
    g.synchronize().unwrap();
}

/// A thread that panics before a barrier does not hang its block: it exits, the barrier stops
/// waiting for it, and the other threads finish their work.
#[test]
fn a_panic_before_a_barrier_does_not_hang_the_block() {
    let Some(g) = device_api::gpu_or_skip() else { return };
    let s = &g.stream;
    let xs: Vec<u32> = (0..256).map(|v| v * 3).collect();
    let x = s.clone_htod(&xs).unwrap();
    let mut out = s.alloc_zeros::<u32>(256).unwrap();
    kernels::launch_panic_before_barrier(s, 4u32, 64u32, 5, &x, &mut out).unwrap();
    let err = g.synchronize().unwrap_err();
    assert!(matches!(err, Error::KernelPanic { kernel: "panic_before_barrier", .. }), "{err}");
    let got = s.clone_dtoh(&out).unwrap();
    for (i, v) in got.iter().enumerate() {
        let (t, right) = (i % 64, (i % 64 + 1) % 64);
        if t != 5 && right != 5 {
            assert_eq!(*v, xs[i - t + right], "element {i}");
        }
    }
    // And the context is fine afterwards.
    kernels::launch_panic_before_barrier(s, 4u32, 64u32, 99, &x, &mut out).unwrap();
    g.synchronize().unwrap();
    let got = s.clone_dtoh(&out).unwrap();
    assert!(got.iter().enumerate().all(|(i, v)| *v == xs[i - i % 64 + (i % 64 + 1) % 64]));
}
