//! Without a GPU: the Rust kernel on the CPU executor against the reference, and the CUDA C++
//! kernel's CPU launcher as a clear `Err` (no panic).

#[test]
fn rust_kernel_on_the_cpu_matches_the_reference() {
    for (seed, &(w, h, r)) in [(1, 1, 0), (33, 9, 1), (100, 37, 2), (64, 64, 3)].iter().enumerate() {
        let p = interop::problem(seed as u64, w, h, r);
        let got = interop::run_rust_cpu(&p).unwrap();
        interop::compare(&got, &interop::reference(&p)).unwrap_or_else(|e| panic!("{w} x {h}, radius {r}: {e}"));
    }
}

#[test]
fn the_cuda_cpp_kernel_on_the_cpu_is_an_error_saying_why() {
    let p = interop::problem(3, 17, 5, 1);
    let err = interop::run_cuda_cpp_on_cpu(&p).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, oxide_rt::Error::InvalidLaunch { kernel: "box_filter", .. }), "{msg}");
    assert!(msg.contains("CUDA C++ kernel (src/legacy/filters.cu): it runs only on a GPU"), "{msg}");
}
