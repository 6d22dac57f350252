//! Where libnccl cannot be opened: `available()` says so (no NCCL to use) or names what is
//! wrong with `OXIDE_NCCL_LIB`. One test, since it sets environment variables.

#[test]
fn missing_nccl_is_reported_not_a_panic() {
    if multi_gpu::nccl::present() {
        eprintln!("skipped: libnccl is installed here");
        return;
    }
    std::env::remove_var("OXIDE_NCCL_LIB");
    assert_eq!(multi_gpu::nccl::available(), Ok(false));
    std::env::set_var("OXIDE_NCCL_LIB", "/nonexistent/libnccl.so.2");
    let e = multi_gpu::nccl::available().unwrap_err();
    assert!(e.contains("OXIDE_NCCL_LIB=/nonexistent/libnccl.so.2 is not a file"), "{e}");
    // In the run again, a library that still does not load is an error, not another run.
    std::env::set_var("OXIDE_NCCL_RERUN", "1");
    let e = multi_gpu::nccl::available().unwrap_err();
    assert!(e.contains("could not be loaded as libnccl"), "{e}");
    assert!(multi_gpu::nccl::MISSING.contains("OXIDE_NCCL_LIB"));
}
