// The kernels come from `kernels-prebuilt/` (made by `cargo oxide build`, committed) when this
// machine has no device toolchain; with one, they are built from source as usual and a stale
// `kernels-prebuilt/` only warns.
fn main() {
    oxide_build::kernels("src/kernels.rs").arch("sm_90").prebuilt("kernels-prebuilt").compile();
}
