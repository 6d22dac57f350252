//! What the build script produced, checked from the crate that embeds it.

use std::path::{Path, PathBuf};

const PTX: &str = include_str!(env!("OXIDE_PTX"));

fn out_dir() -> PathBuf {
    PathBuf::from(env!("OXIDE_PTX")).parent().unwrap().parent().unwrap().to_path_buf()
}

#[test]
fn ptx_has_every_kernel_for_the_lowest_arch() {
    for k in ["affine", "linear_ids", "bounded"] {
        assert!(PTX.contains(&format!(".visible .entry {k}(")), "missing kernel {k}");
    }
    assert!(PTX.contains(".target sm_80"), "PTX is generated for the lowest requested arch");
    assert!(PTX.contains(".maxntid 128, 1, 1"), "launch bounds reach the PTX");
    let fixed = &PTX[PTX.find(".visible .entry fixed_block(").expect("fixed_block in the PTX")..];
    let fixed = &fixed[..fixed.find("\n}").unwrap()];
    assert!(fixed.contains(".reqntid 16, 4, 1"), "block(..) reaches the PTX:\n{fixed}");
    assert!(!fixed.contains("%ntid"), "block_dim() is a constant on the device:\n{fixed}");
    assert!(!PTX.contains(".visible .func"), "only kernels are visible");
}

/// `x.get(j).copied().unwrap_or(..)` in `gather_or_minus_one`: the load of `x` is hoisted
/// above its bounds check, so the PTX selects the value instead of branching around the load.
#[test]
fn guarded_input_loads_are_branch_free() {
    let start = PTX.find(".visible .entry gather_or_minus_one(").expect("gather kernel in the PTX");
    let body = &PTX[start..];
    let body = &body[..body.find("\n}").unwrap()];
    let loads = body.lines().filter(|l| l.contains("ld.global.nc.")).count();
    assert_eq!(loads, 2, "idx[i] and x[j]:\n{body}");
    assert!(body.contains("selp.f32"), "the fallback is selected, not branched to:\n{body}");
    let ir = std::fs::read_to_string(out_dir().join("oxide").join("work").join("kernels.ll")).unwrap();
    assert!(ir.contains("%__oxide_hoist"), "the IR stage rewrote the guarded load");
}

#[test]
fn manifest_lists_kernels_with_their_nvptx_parameter_layout() {
    let text = std::fs::read_to_string(env!("OXIDE_MANIFEST")).unwrap();
    let m: serde_json::Value = serde_json::from_str(&text).unwrap();
    let kernels = m["kernels"].as_array().unwrap();
    let affine = kernels.iter().find(|k| k["name"] == "affine").unwrap();
    let sizes: Vec<u64> = affine["params"].as_array().unwrap().iter().map(|p| p["size"].as_u64().unwrap()).collect();
    assert_eq!(sizes, [4, 4, 8, 8, 8, 8], "a, b, then x and y as pointer + length");
    assert_eq!(m["archs"], serde_json::json!(["sm_80", "sm_90"]));
    assert_eq!(m["meta"]["__oxide_launch_bounds_bounded"], serde_json::json!([128, 0]));
    assert!(m["toolchain"]["rustc"].as_str().unwrap().starts_with("rustc "));
}

#[test]
fn cubins_are_embedded_per_arch_when_ptxas_ran() {
    let text = std::fs::read_to_string(env!("OXIDE_MANIFEST")).unwrap();
    let m: serde_json::Value = serde_json::from_str(&text).unwrap();
    let validated = m["kernels"][0].get("resources").is_some();
    let cubins = std::fs::read_to_string(env!("OXIDE_CUBINS")).unwrap();
    if validated {
        assert!(cubins.contains("\"sm_80\"") && cubins.contains("\"sm_90\""), "{cubins}");
        for arch in ["sm_80", "sm_90"] {
            let bin = out_dir().join("oxide").join(format!("kernels.{arch}.cubin"));
            let bytes = std::fs::read(&bin).unwrap();
            assert_eq!(&bytes[..4], b"\x7fELF", "{} is an ELF cubin", bin.display());
        }
    } else {
        assert_eq!(cubins.trim(), "&[]");
        assert!(std::env::var_os("OXIDE_REQUIRE_PTXAS").is_none(), "ptxas was required but did not run");
        eprintln!("skipped cubin checks: the build ran without ptxas");
    }
}

/// Editing a kernel (or a module it includes) reruns the build script; nothing else does.
#[test]
fn build_script_tracks_exactly_the_kernel_sources() {
    // cargo keeps the build script's stdout next to OUT_DIR.
    let output = std::fs::read_to_string(out_dir().parent().unwrap().join("output")).unwrap();
    let rerun: Vec<&str> = output.lines().filter_map(|l| l.strip_prefix("cargo:rerun-if-changed=")).collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for f in ["src/kernels.rs", "src/kernels/util.rs"] {
        let p = root.join(f);
        assert!(rerun.iter().any(|r| Path::new(r) == p), "{f} not tracked: {rerun:?}");
    }
    assert!(
        !rerun.iter().any(|r| Path::new(r) == root.join("src/lib.rs")),
        "this crate's lib.rs is not a kernel source: {rerun:?}"
    );
    // The device runtime compiled into the kernels is tracked too: editing it rebuilds the PTX.
    let rt = root.parent().unwrap().parent().unwrap().join("oxide-rt/src/device/thread.rs");
    assert!(rerun.iter().any(|r| Path::new(r) == rt), "oxide-rt's device sources are tracked: {rerun:?}");
    assert!(!rerun.iter().any(|r| r.contains("rustlib")), "toolchain sources are not tracked: {rerun:?}");
    assert!(output.contains("cargo:rerun-if-env-changed=OXIDE_DEVICE_RUSTC"));
    assert!(output.contains("cargo:rerun-if-env-changed=OXIDE_LLC"));
}
