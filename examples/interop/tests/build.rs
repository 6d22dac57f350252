//! What the build script produced for the CUDA C++ source, checked from the crate that embeds it.

use std::path::{Path, PathBuf};

fn build_output() -> String {
    // cargo keeps the build script's stdout next to OUT_DIR (`.../out/oxide/cuda.rs`).
    let out_dir = PathBuf::from(env!("OXIDE_CUDA")).parent().unwrap().parent().unwrap().to_path_buf();
    std::fs::read_to_string(out_dir.parent().unwrap().join("output")).unwrap()
}

/// Editing the `.cu` source or any header it includes (directly or not) reruns the build script.
#[test]
fn the_source_and_every_header_it_includes_rerun_the_build() {
    let output = build_output();
    let rerun: Vec<&str> = output.lines().filter_map(|l| l.strip_prefix("cargo:rerun-if-changed=")).collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for f in ["src/legacy/filters.cu", "src/shared/filter.h", "src/legacy/edge.cu", "src/legacy/edge.cuh"] {
        let p = root.join(f);
        assert!(rerun.contains(&p.to_str().unwrap()), "{} not tracked: {rerun:?}", p.display());
    }
    // nvcc's own headers count too: cuda_runtime.h is force-included into every .cu.
    assert!(rerun.iter().any(|r| r.ends_with("/cuda_runtime.h")), "{rerun:?}");
}

#[test]
fn every_global_function_has_a_launcher_and_its_ptx_and_cubin_are_embedded() {
    let rs = std::fs::read_to_string(env!("OXIDE_CUDA")).unwrap();
    let flat = rs.split_whitespace().collect::<Vec<_>>().join(" ");
    for f in [
        "pub unsafe fn launch_box_filter(",
        "pub unsafe fn launch_threshold_f32(",
        "pub unsafe fn launch_threshold_f64(",
        "pub fn cpu_box_filter(",
    ] {
        assert!(rs.contains(f), "{f} missing:\n{rs}");
    }
    assert!(!rs.contains("clamp_index"), "a __device__ function is no kernel:\n{rs}");
    assert!(rs.contains("\"_Z10box_filterPKfPf12FilterParams\""), "the mangled name is resolved:\n{rs}");
    assert!(flat.contains("( \"sm_90\", ::core::include_bytes!( \""), "the sm_90 cubin is embedded:\n{rs}");
}

/// The Rust kernel's call of the C++ `clamp_to_edge` is linked in and inlined on the device.
#[test]
fn the_cpp_device_function_is_inlined_into_the_rust_kernel() {
    let ptx = include_str!(env!("OXIDE_PTX"));
    assert!(ptx.contains(".entry box_filter_rs("), "the Rust kernel is in the PTX");
    assert!(!ptx.contains("clamp_to_edge"), "no call left to the C++ function:\n{ptx}");
}
