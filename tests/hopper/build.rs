fn main() {
    // sm_90: TMA, `mbarrier.try_wait` and `mbarrier.expect_tx` need Hopper.
    oxide_build::kernels("src/kernels.rs").arch("sm_90").compile();
}
