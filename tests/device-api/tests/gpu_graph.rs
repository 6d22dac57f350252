//! CUDA graphs of typed launches (`oxide_rt::host::Graph`) on the GPU: a replay computes what
//! the direct launches compute, a kernel panic in a replay comes back with its file:line, and
//! every way to make a graph outlive its buffers is an `Err`. Its own test binary: one test
//! makes a kernel panic.

use device_api::{check, kernels};
use oxide_rt::cuda::{sys::CUstreamCaptureMode, sys::CUstreamCaptureStatus, CudaSlice, CudaStream};
use oxide_rt::host::Graph;
use oxide_rt::{Error, Pairs};
use std::sync::Arc;

/// The launches of a bitonic sort of `n` elements (a power of two), on `data`.
fn bitonic_sort(s: &Arc<CudaStream>, n: usize, data: &mut CudaSlice<u32>) -> Result<usize, Error> {
    let mut launches = 0;
    let mut k = 2;
    while k <= n {
        let mut j = k / 2;
        while j > 0 {
            kernels::launch_bitonic_step(s, (n / 256) as u32, 256u32, k as u32, Pairs::new(data, j))?;
            launches += 1;
            j /= 2;
        }
        k *= 2;
    }
    Ok(launches)
}

#[test]
fn a_replayed_bitonic_sort_matches_the_direct_launches_and_takes_new_inputs() {
    let Some(g) = device_api::gpu_or_skip() else { return };
    let s = &g.stream;
    let n = 1024;
    let input = check::inputs_u32(n, 1 << 30);
    let mut direct = s.clone_htod(&input).unwrap();
    let launches = bitonic_sort(s, n, &mut direct).unwrap();
    g.synchronize().unwrap();
    let direct = s.clone_dtoh(&direct).unwrap();

    let mut graph =
        Graph::capture(s, (s.clone_htod(&input).unwrap(),), |cs, (data,)| bitonic_sort(cs, n, data).map(|_| ()))
            .unwrap();
    assert_eq!(graph.kernel_launches(), launches);
    assert_eq!(s.clone_dtoh(&graph.buffers().0).unwrap(), input, "capturing runs nothing");
    graph.launch().unwrap();
    graph.synchronize().unwrap();
    assert_eq!(s.clone_dtoh(&graph.buffers().0).unwrap(), direct);

    // New inputs through `buffers_mut`, the same graph replayed twice on them.
    let other: Vec<u32> = input.iter().map(|v| v.wrapping_mul(2654435761) >> 3).collect();
    s.memcpy_htod(&other, &mut graph.buffers_mut().0).unwrap();
    graph.launch().unwrap();
    graph.launch().unwrap();
    graph.synchronize().unwrap();
    let mut want = other.clone();
    want.sort_unstable();
    assert_eq!(s.clone_dtoh(&graph.buffers().0).unwrap(), want);
}

#[test]
fn the_first_capture_of_a_kernel_loads_its_module_and_records_again() {
    // A context of its own, so the module is not loaded in it yet.
    let Some(g) = device_api::gpu_or_skip() else { return };
    let s = &g.stream;
    let mut runs = 0;
    let mut graph = Graph::capture(s, (s.alloc_zeros::<u32>(256).unwrap(),), |cs, (out,)| {
        runs += 1;
        kernels::launch_pass_index(cs, 1u32, 256u32, out)
    })
    .unwrap();
    assert_eq!(runs, 2, "the first run's launch is refused (module not loaded), the second is recorded");
    graph.launch().unwrap();
    graph.launch().unwrap();
    graph.synchronize().unwrap();
    // `pass_index` adds one to each element: two replays.
    assert_eq!(s.clone_dtoh(&graph.buffers().0).unwrap(), vec![2; 256]);
    // Loaded now: the next capture in the context records at once.
    let again = Graph::capture(s, (s.alloc_zeros::<u32>(32).unwrap(),), |cs, (out,)| {
        runs += 1;
        kernels::launch_pass_index(cs, 1u32, 32u32, out)
    });
    assert!(again.is_ok(), "{:?}", again.err());
    assert_eq!(runs, 3);
}

#[test]
fn a_kernel_panic_in_a_replayed_graph_is_reported_with_kernel_file_and_line() {
    let Some(g) = device_api::gpu_or_skip() else { return };
    let s = &g.stream;
    let buffers = (s.clone_htod(&vec![1f32; 64]).unwrap(), s.alloc_zeros::<f32>(64).unwrap());
    let mut graph = Graph::capture(s, buffers, |cs, (x, out)| {
        // A launch of another geometry first: the report must still name the right kernel.
        kernels::launch_out_of_bounds(cs, 1u32, 32u32, 0, x, out)?;
        kernels::launch_out_of_bounds(cs, 1u32, 64u32, 10, x, out)
    })
    .unwrap();
    graph.launch().unwrap();
    let err = graph.synchronize().unwrap_err();
    eprintln!("reported: {err}");
    match &err {
        Error::KernelPanic { kernel, location, .. } => {
            assert_eq!(*kernel, "out_of_bounds", "{err}");
            assert!(location.as_deref().unwrap_or_default().contains("kernels.rs:"), "{err}");
            assert!(err.to_string().contains("grid 1x1x1, block 64x1x1"), "{err}");
        }
        other => panic!("expected Error::KernelPanic, got {other:?}"),
    }
    // Reported once; the context stays usable.
    let mut out = s.alloc_zeros::<u32>(64).unwrap();
    kernels::launch_pass_index(s, 1u32, 64u32, &mut out).unwrap();
    g.synchronize().unwrap();
    assert_eq!(s.clone_dtoh(&out).unwrap(), vec![1; 64], "`pass_index` adds one to each element");
}

#[test]
fn a_launch_under_a_capture_oxide_did_not_start_is_refused() {
    let Some(g) = device_api::gpu_or_skip() else { return };
    let s = g.ctx.new_stream().unwrap();
    let mut out = s.alloc_zeros::<u32>(64).unwrap();
    // Loaded and run once, so only the capture can be the reason for the refusal.
    kernels::launch_pass_index(&s, 1u32, 64u32, &mut out).unwrap();
    s.synchronize().unwrap();
    s.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).unwrap();
    let refused = kernels::launch_pass_index(&s, 1u32, 64u32, &mut out);
    let _ = s.end_capture(oxide_rt::cuda::sys::CUgraphInstantiate_flags(0));
    let text = refused.as_ref().err().map(|e| e.to_string()).unwrap_or_default();
    assert!(matches!(refused, Err(Error::InvalidLaunch { kernel: "pass_index", .. })), "{text}");
    assert!(text.contains("oxide did not start") && text.contains("Graph::capture"), "{text}");
}

#[test]
fn a_captured_launch_on_a_buffer_the_graph_does_not_own_is_refused() {
    let Some(g) = device_api::gpu_or_skip() else { return };
    let s = &g.stream;
    let mut outside = s.alloc_zeros::<u32>(64).unwrap();
    let result = Graph::capture(s, (s.alloc_zeros::<u32>(64).unwrap(),), |cs, _| {
        kernels::launch_pass_index(cs, 1u32, 64u32, &mut outside)
    });
    let text = result.as_ref().err().map(|e| e.to_string()).unwrap_or_default();
    assert!(text.contains("argument `out` is not memory of the graph's buffers"), "{text}");
    // A view inside an owned buffer is fine.
    let mut graph = Graph::capture(s, (s.alloc_zeros::<u32>(128).unwrap(),), |cs, (buf,)| {
        kernels::launch_pass_index(cs, 1u32, 64u32, &mut buf.slice_mut(64..))
    })
    .unwrap();
    graph.launch().unwrap();
    graph.synchronize().unwrap();
    let got = s.clone_dtoh(&graph.buffers().0).unwrap();
    assert_eq!(&got[..64], &[0; 64][..]);
    assert_eq!(&got[64..], &[1; 64][..], "`pass_index` adds one to each element of the view");
}

#[test]
fn replacing_a_graphs_buffer_makes_its_replays_an_error() {
    let Some(g) = device_api::gpu_or_skip() else { return };
    let s = &g.stream;
    let mut graph = Graph::capture(s, (s.alloc_zeros::<u32>(64).unwrap(),), |cs, (out,)| {
        kernels::launch_pass_index(cs, 1u32, 64u32, out)
    })
    .unwrap();
    graph.launch().unwrap();
    // Writing in place keeps the graph usable.
    s.memset_zeros(&mut graph.buffers_mut().0).unwrap();
    graph.launch().unwrap();
    graph.synchronize().unwrap();
    assert_eq!(s.clone_dtoh(&graph.buffers().0).unwrap(), vec![1; 64]);
    // Swapping in another allocation (and dropping the captured one) poisons it.
    let old = std::mem::replace(&mut graph.buffers_mut().0, s.alloc_zeros::<u32>(64).unwrap());
    drop(old);
    let e = graph.launch().unwrap_err();
    assert!(e.to_string().contains("replaced or resized"), "{e}");
    // So does a guard that is never dropped (its check never runs).
    let mut graph = Graph::capture(s, (s.alloc_zeros::<u32>(64).unwrap(),), |cs, (out,)| {
        kernels::launch_pass_index(cs, 1u32, 64u32, out)
    })
    .unwrap();
    std::mem::forget(graph.buffers_mut());
    assert!(graph.launch().is_err());
    // And `record` itself may not swap buffers.
    let mut other = s.alloc_zeros::<u32>(64).unwrap();
    let e = Graph::capture(s, (s.alloc_zeros::<u32>(64).unwrap(),), |cs, b| {
        kernels::launch_pass_index(cs, 1u32, 64u32, &mut b.0)?;
        std::mem::swap(&mut b.0, &mut other);
        Ok(())
    });
    let text = e.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(text.contains("replaced or resized"), "{text}");
}

/// `record` keeps a clone of the capture stream: the capture is an `Err`, and a kernel launched
/// on the kept stream afterwards is still ordered before a copy of its output on the launching
/// stream (the capture stream is non-blocking and was unknown to cudarc's event tracking).
#[test]
fn a_kept_capture_stream_stays_ordered_with_the_other_streams() {
    let Some(g) = device_api::gpu_or_skip() else { return };
    let s = &g.stream;
    let n = 1 << 20;
    let x: Vec<u32> = (0..n as u32).collect();
    let dx = s.clone_htod(&x).unwrap();
    let mut kept: Option<Arc<CudaStream>> = None;
    // Every buffer of a captured launch belongs to the graph, the input too.
    let buffers = (s.clone_htod(&x).unwrap(), s.alloc_zeros::<u32>(n).unwrap());
    let captured = Graph::capture(s, buffers, |cs, (input, out)| {
        kept = Some(cs.clone());
        kernels::launch_busy(cs, (n / 256) as u32, 256u32, 1, &*input, out)
    });
    let Err(e) = captured else { panic!("a capture whose record kept the stream was accepted") };
    assert!(e.to_string().contains("kept a clone of the capture stream"), "{e}");
    let kept = kept.expect("record ran");
    let mut want = vec![0u32; n];
    kernels::cpu_busy((n / 256) as u32, 256u32, 4096, &x, &mut want).unwrap();
    // The refused capture left no error behind for the context's next call.
    assert_eq!(s.capture_status().map_err(|e| e.to_string()), Ok(CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE));
    for round in 0..3 {
        let mut out = s.alloc_zeros::<u32>(n).unwrap();
        g.synchronize().unwrap();
        kernels::launch_busy(&kept, (n / 256) as u32, 256u32, 4096, &dx, &mut out)
            .unwrap_or_else(|e| panic!("round {round}: a launch on the kept stream failed: {e}"));
        assert_eq!(s.clone_dtoh(&out).unwrap(), want, "round {round}: the copy did not wait for the kernel");
    }
}
