//! The generated CUDA C++ launchers are typed: a wrong argument does not compile. trybuild
//! builds these files against this crate; the device build reuses the workspace's cache.

#[test]
fn ui() {
    let workspace = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    // Set before trybuild spawns cargo; no other thread reads the environment in this test binary.
    std::env::set_var("OXIDE_TARGET_DIR", format!("{workspace}/target/oxide-device"));
    std::env::set_var("CARGO_PROFILE_DEV_DEBUG", "line-tables-only");
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
