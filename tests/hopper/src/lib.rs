//! Kernels using `oxide_rt::device::{mbarrier, tma}` (`kernels`) and the host side of their
//! tests (`check`): tensors, the boxes a TMA load must deliver, and the swizzle patterns.
pub mod check;
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
