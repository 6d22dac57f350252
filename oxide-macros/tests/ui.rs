//! Compile-fail tests: one error per file, named after it; the expected compiler output sits
//! next to each file (`.stderr`). Regenerate with `TRYBUILD=overwrite cargo test -p oxide-macros --test ui`.
//!
//! The kernels compile for the host only here. Launchers embed `$OXIDE_PTX` / `$OXIDE_CUBINS`
//! and `#[derive(KernelArg)]` reads `$OXIDE_MANIFEST`, so they point at small fixtures (trybuild
//! passes the environment on to rustc); `fixtures/kernels.manifest.json` has correct layout
//! records for the structs of these tests except `Skewed`, whose field offset is wrong, and argument
//! layout records for three kernels of the `arg_layout_*` tests (missing, stale, wrong).

#[test]
fn ui() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ui/fixtures");
    // Set before trybuild spawns cargo; no other thread reads the environment in this test binary.
    std::env::set_var("OXIDE_PTX", format!("{fixtures}/kernels.ptx"));
    std::env::set_var("OXIDE_CUBINS", format!("{fixtures}/kernels.cubins.rs"));
    std::env::set_var("OXIDE_MANIFEST", format!("{fixtures}/kernels.manifest.json"));
    // trybuild's crate has its own target dir and no profile of ours: the workspace's line
    // tables, for less to build (the dependencies are compiled anew there).
    std::env::set_var("CARGO_PROFILE_DEV_DEBUG", "line-tables-only");
    let t = trybuild::TestCases::new();
    t.pass("tests/pass/*.rs");
    t.compile_fail("tests/ui/*.rs");
}
