//! A kernel panic while another stream is busy: the error names exactly the panicking kernel
//! (not the one launched last), says the context is lost, and after `Gpu::recover` kernels run
//! correctly again in the same process. Its own test binary: the fault poisons the context.

use device_api::{check, kernels};
use oxide_rt::host::{reset_device, Gpu};
use oxide_rt::Error;

#[test]
fn a_panic_names_its_kernel_and_the_process_recovers() {
    let g = match Gpu::new(0) {
        Ok(g) => g,
        Err(e) if std::env::var("OXIDE_REQUIRE_GPU").as_deref() == Ok("1") => {
            panic!("OXIDE_REQUIRE_GPU=1 but no GPU: {e}")
        }
        Err(e) => return eprintln!("skipped: no GPU ({e})"),
    };
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
    // launch is not the last one made, and both are in flight when it traps.
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
            assert!(message.contains("CUDA context of GPU 0 is lost"), "{err}");
            assert!(message.contains("Gpu::recover()"), "{err}");
        }
        other => panic!("expected Error::KernelPanic, got {other:?}"),
    }
    // Every later call on the context reports the fault, naming the same kernel.
    let again = kernels::launch_busy(&other, 64u32, 128u32, 1, &dxs, &mut busy_out).unwrap_err();
    assert!(matches!(again, Error::KernelPanic { kernel: "out_of_bounds", .. }), "{again}");
    assert!(oxide_rt::host::synchronize(&other).is_err(), "the second stream died with the context");

    // Recovery refuses while handles of the dead context are alive...
    let refused = reset_device(0).unwrap_err();
    eprintln!("refused: {refused}");
    assert!(refused.to_string().contains("still alive"), "{refused}");
    // ...and works once they are dropped.
    drop((dxs, busy_out, x, out, other));
    let g = g.recover().unwrap();
    let s = &g.stream;

    // Modules load again lazily; results are right.
    let dxs = s.clone_htod(&xs).unwrap();
    let mut busy_out = s.alloc_zeros::<u32>(n).unwrap();
    kernels::launch_busy(s, 64u32, 128u32, 1000, &dxs, &mut busy_out).unwrap();
    g.synchronize().unwrap();
    assert_eq!(s.clone_dtoh(&busy_out).unwrap(), check::busy(1000, &xs));
    let xf: Vec<f32> = (0..64).map(|v| v as f32).collect();
    let x = s.clone_htod(&xf).unwrap();
    let mut out = s.alloc_zeros::<f32>(64).unwrap();
    kernels::launch_out_of_bounds(s, 1u32, 64u32, 0, &x, &mut out).unwrap();
    g.synchronize().unwrap();
    assert_eq!(s.clone_dtoh(&out).unwrap(), xf);
    // And a second panic after recovery is reported again, as the first was.
    kernels::launch_out_of_bounds(s, 1u32, 64u32, 10, &x, &mut out).unwrap();
    let second = g.synchronize().unwrap_err();
    assert!(matches!(second, Error::KernelPanic { kernel: "out_of_bounds", .. }), "{second}");
}
