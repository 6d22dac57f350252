//! Prebuilt kernels through oxide-build's public API, on a copy of examples/prebuilt with the
//! device toolchain hidden (`OXIDE_NO_DEVICE_TOOLCHAIN=1`, a stable-only machine): current
//! sources use the committed PTX and cubins; an edited kernel is a stale error that names the
//! file, the kernel and the refresh command.

use oxide_build::{Build, ErrorKind};
use std::path::{Path, PathBuf};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/prebuilt")
}

/// A fresh copy of the example crate's kernels and prebuilt directory.
fn copy_example(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("prebuilt-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["src", "kernels-prebuilt"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        for e in std::fs::read_dir(example().join(sub)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), dir.join(sub).join(e.file_name())).unwrap();
        }
    }
    std::fs::copy(example().join("Cargo.toml"), dir.join("Cargo.toml")).unwrap();
    dir
}

fn stable_only(dir: &Path) -> Build {
    let mut b = oxide_build::kernels("src/kernels.rs");
    b.manifest_dir(dir)
        .out_dir(dir.join("out"))
        .package("prebuilt")
        .arch("sm_90")
        .prebuilt("kernels-prebuilt")
        .cargo_metadata(false)
        .env_override("OXIDE_NO_DEVICE_TOOLCHAIN", Some("1"));
    b
}

#[test]
fn current_sources_use_the_committed_ptx_and_cubins() {
    let dir = copy_example("current");
    let out = stable_only(&dir).try_compile().unwrap();
    assert_eq!(out.prebuilt.as_deref(), Some(dir.join("kernels-prebuilt").as_path()));
    assert!(out.toolchain.is_none(), "no device toolchain was used");
    assert_eq!(out.ptx, dir.join("out/oxide/kernels.ptx"), "copied where a real build writes it");
    assert_eq!(std::fs::read(&out.ptx).unwrap(), std::fs::read(dir.join("kernels-prebuilt/kernels.ptx")).unwrap());
    assert_eq!(out.kernels.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["affine"]);
    assert_eq!(out.sources, vec![dir.join("src/kernels.rs")], "tracked for rerun-if-changed");
    let archs: Vec<&str> = out.cubins.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(archs, ["sm_90"]);
    let cubin = std::fs::read(&out.cubins[0].1).unwrap();
    assert_eq!(&cubin[..4], b"\x7fELF");
    let expr = std::fs::read_to_string(dir.join("out/oxide/kernels.cubins.rs")).unwrap();
    assert!(expr.contains("(\"sm_90\", include_bytes!(") && expr.contains("kernels.sm_90.cubin"), "{expr}");
    assert!(out.stages.iter().any(|s| s.name.starts_with("prebuilt")), "{:?}", out.stages);
}

#[test]
fn an_edited_kernel_makes_the_prebuilt_stale_and_says_how_to_refresh() {
    let dir = copy_example("stale");
    let src = dir.join("src/kernels.rs");
    let text = std::fs::read_to_string(&src).unwrap();
    std::fs::write(&src, text.replace("*o = a * x[i.get()] + b;", "*o = a * x[i.get()] - b;")).unwrap();
    let err = stable_only(&dir).try_compile().unwrap_err();
    let msg = err.to_string();
    eprintln!("{msg}");
    assert_eq!(err.kind(), ErrorKind::Config);
    assert!(
        msg.contains(&format!("the prebuilt kernels in {} are stale", dir.join("kernels-prebuilt").display())),
        "{msg}"
    );
    assert!(msg.contains("changed: src/kernels.rs (kernels: affine)"), "{msg}");
    assert!(msg.contains("OXIDE_NO_DEVICE_TOOLCHAIN=1"), "says why it cannot rebuild: {msg}");
    assert!(
        msg.contains(&format!("`cargo oxide build --manifest-path {}`", dir.join("Cargo.toml").display())),
        "{msg}"
    );
    assert!(!dir.join("out/oxide/kernels.ptx").exists(), "nothing stale was copied");
}

#[test]
fn a_moved_kernels_module_does_not_match_the_prebuilt() {
    let dir = copy_example("moved");
    let text = std::fs::read_to_string(dir.join("src/kernels.rs")).unwrap();
    std::fs::remove_file(dir.join("src/kernels.rs")).unwrap();
    std::fs::create_dir_all(dir.join("src/kernels")).unwrap();
    std::fs::write(
        dir.join("src/kernels/mod.rs"),
        format!("{text}\n#[kernel]\npub fn zero(mut out: DisjointSlice<f32>) {{}}\n"),
    )
    .unwrap();
    let mut b = stable_only(&dir);
    b.source("src/kernels/mod.rs");
    let msg = b.try_compile().unwrap_err().to_string();
    assert!(
        msg.contains("are for `src/kernels.rs`") && msg.contains("this build compiles `src/kernels/mod.rs`"),
        "{msg}"
    );
}

#[test]
fn forcing_the_prebuilt_skips_the_toolchain_and_a_missing_dir_says_how_to_make_it() {
    let dir = copy_example("forced");
    let mut b = oxide_build::kernels("src/kernels.rs");
    b.manifest_dir(&dir)
        .out_dir(dir.join("out"))
        .prebuilt("kernels-prebuilt")
        .cargo_metadata(false)
        .env_override("OXIDE_FORCE_PREBUILT", Some("1"));
    let out = b.try_compile().unwrap();
    assert!(out.prebuilt.is_some() && out.toolchain.is_none());

    std::fs::remove_dir_all(dir.join("kernels-prebuilt")).unwrap();
    let msg = stable_only(&dir).try_compile().unwrap_err().to_string();
    assert!(msg.contains("kernels-prebuilt/kernels.manifest.json does not exist"), "{msg}");
    assert!(msg.contains("cargo oxide build --manifest-path"), "{msg}");

    // Without `.prebuilt(..)` a stable-only machine gets the toolchain error as before.
    let mut plain = oxide_build::kernels("src/kernels.rs");
    plain
        .manifest_dir(&dir)
        .out_dir(dir.join("out"))
        .cargo_metadata(false)
        .env_override("OXIDE_NO_DEVICE_TOOLCHAIN", Some("1"));
    assert_eq!(plain.try_compile().unwrap_err().kind(), ErrorKind::ToolchainNotFound);
}

#[test]
fn the_committed_prebuilt_matches_the_example_sources() {
    // If this fails, run `cargo oxide build --manifest-path examples/prebuilt/Cargo.toml`.
    let m = oxide_build::ManifestFile::read(&example().join("kernels-prebuilt/kernels.manifest.json")).unwrap();
    assert_eq!(oxide_build::prebuilt::stale_sources(&m, &example()), vec![]);
    assert_eq!(m.archs, ["sm_90"]);
}
