//! The corpus through the release pipeline, which `cargo build --release` runs on a user's
//! kernels (the IR stage's rewrites, opt's unroll passes, llc's flag choice, ptxas) and which
//! nobody tuned for these kernels. The CPU tests build them in debug only.

use std::path::Path;

#[test]
fn every_kernel_builds_with_the_release_pipeline_at_a_sane_size() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = crate_dir.join("../..");
    let mut b = oxide_build::kernels("src/kernels.rs");
    b.manifest_dir(crate_dir)
        .out_dir(Path::new(env!("CARGO_TARGET_TMPDIR")).join("unseen-release"))
        .target_dir(workspace.join("target/oxide-device"))
        .oxide_rt_dir(workspace.join("oxide-rt"))
        .package("unseen")
        .arch("sm_90")
        .cargo_metadata(false)
        .panic_messages(false);
    let built = match b.try_compile() {
        Ok(built) => built,
        Err(e) => panic!("the release pipeline failed on the corpus:\n{e}"),
    };
    assert_eq!(built.kernels.len(), 65, "every entry of the corpus (1-D and unchecked copies are not listed)");
    // A loop unrolled to a data-dependent bound made one kernel 126 593 lines of the module's
    // 131 346 (ir/private_array_loops.rs); the whole corpus is 20 609 lines since the fix.
    let lines = std::fs::read_to_string(&built.ptx).map(|p| p.lines().count()).unwrap_or(usize::MAX);
    assert!(lines < 40_000, "the corpus' PTX grew to {lines} lines: a kernel's code blew up");
}
