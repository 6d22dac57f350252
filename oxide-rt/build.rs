// Publishes this crate's manifest directory as DEP_OXIDE_RT_ROOT to the build script of every
// crate that depends on oxide-rt, so oxide-build compiles the very same sources for the device.
fn main() {
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    println!("cargo:root={root}");
    println!("cargo:rerun-if-changed=build.rs");
}
