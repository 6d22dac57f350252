//! Kernels exercising the whole device API (`kernels`) and the expected results every backend
//! must produce (`check`), shared by the CPU and GPU tests.
pub mod check;
pub mod golden;
pub mod kernels;

/// GPU 0 for a GPU test, or `None` (printing why) when there is none. With
/// `OXIDE_REQUIRE_GPU=1` a missing GPU fails the test instead of skipping it.
pub fn gpu_or_skip() -> Option<oxide_rt::host::Gpu> {
    match oxide_rt::host::Gpu::new(0) {
        Ok(g) => Some(g),
        Err(e) if std::env::var("OXIDE_REQUIRE_GPU").as_deref() == Ok("1") => {
            panic!("OXIDE_REQUIRE_GPU=1 but no GPU: {e}")
        }
        Err(e) => {
            eprintln!("skipped: no GPU ({e})");
            None
        }
    }
}
