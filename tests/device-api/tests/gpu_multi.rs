//! Several GPUs (or several contexts on one): typed launchers from one host thread per device,
//! each context loading the kernels once, lazily; a buffer of another device refused by name;
//! a GPU that does not exist is `Error::NoSuchDevice`.

use device_api::kernels;
use oxide_rt::host::Gpu;
use oxide_rt::Error;

#[test]
fn a_missing_gpu_ordinal_is_an_error_that_says_how_many_there_are() {
    let Some(_g) = device_api::gpu_or_skip() else { return };
    let count = Gpu::count();
    assert!(count >= 1);
    let e = Gpu::new(count).unwrap_err();
    assert!(matches!(e, Error::NoSuchDevice { ordinal, count: c } if ordinal == count && c == count), "{e}");
    assert!(e.to_string().contains(&format!("there is no GPU {count}")), "{e}");
}

#[test]
fn launches_from_one_thread_per_gpu_run_on_every_device() {
    let Some(_g) = device_api::gpu_or_skip() else { return };
    // Every GPU, and at least 4 threads (several on one GPU: each `Gpu::new` is a context of
    // its own to the module cache, on the same device).
    let count = Gpu::count();
    let threads = count.max(4);
    let results: Vec<Result<Vec<u32>, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || -> Result<Vec<u32>, String> {
                    let g = Gpu::new(t % count).map_err(|e| e.to_string())?;
                    let mut out = g.stream.alloc_zeros::<u32>(1000).map_err(|e| e.to_string())?;
                    for _ in 0..=t {
                        kernels::launch_pass_index(&g.stream, 4u32, 256u32, &mut out).map_err(|e| e.to_string())?;
                    }
                    g.synchronize().map_err(|e| e.to_string())?;
                    g.stream.clone_dtoh(&out).map_err(|e| e.to_string())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("thread panicked".into()))).collect()
    });
    for (t, r) in results.into_iter().enumerate() {
        assert_eq!(r.unwrap(), vec![t as u32 + 1; 1000], "thread {t} on GPU {}", t % count);
    }
}

#[test]
fn a_buffer_of_another_gpu_is_refused_naming_the_argument() {
    let Some(g0) = device_api::gpu_or_skip() else { return };
    if Gpu::count() < 2 {
        eprintln!("skipped: needs 2 GPUs, found {}", Gpu::count());
        return;
    }
    let g1 = Gpu::new(1).unwrap();
    let mut on_gpu1 = g1.stream.alloc_zeros::<u32>(64).unwrap();
    let e = kernels::launch_pass_index(&g0.stream, 1u32, 64u32, &mut on_gpu1).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, Error::InvalidLaunch { kernel: "pass_index", .. }), "{text}");
    assert!(text.contains("argument `out` was allocated in another CUDA context"), "{text}");
    // The same buffer on its own GPU is fine.
    kernels::launch_pass_index(&g1.stream, 1u32, 64u32, &mut on_gpu1).unwrap();
    g1.synchronize().unwrap();
    assert_eq!(g1.stream.clone_dtoh(&on_gpu1).unwrap(), vec![1; 64]);
}
