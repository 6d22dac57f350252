//! Prebuilt kernels through oxide-build's public API, on a copy of examples/prebuilt with the
//! device toolchain hidden (`OXIDE_NO_DEVICE_TOOLCHAIN=1`, a stable-only machine): current
//! sources use the committed PTX and cubins; an edited kernel is a stale error that names the
//! file, the kernel and the refresh command; an edited PTX or cubin, a missing or unlisted file,
//! and a manifest that does not hash the kernels module are errors naming the file, never used.

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
fn a_prebuilt_of_another_oxide_build_version_is_not_used() {
    let dir = copy_example("version");
    let manifest = dir.join("kernels-prebuilt/kernels.manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let ours = format!("\"oxide_build\": \"{}\"", env!("CARGO_PKG_VERSION"));
    assert!(text.contains(&ours), "the committed manifest names this oxide-build: {text}");
    std::fs::write(&manifest, text.replace(&ours, "\"oxide_build\": \"0.0.1\"")).unwrap();
    let msg = stable_only(&dir).try_compile().unwrap_err().to_string();
    assert!(msg.contains("were built by oxide-build 0.0.1, and this is oxide-build"), "{msg}");
    assert!(msg.contains("cargo oxide build --manifest-path"), "{msg}");
    assert!(!dir.join("out/oxide/kernels.ptx").exists(), "nothing was copied");
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
    assert_eq!(oxide_build::prebuilt::check_files(&m), vec![]);
    assert!(m.sources.iter().any(|s| s.path == "src/kernels.rs"), "{:?}", m.sources);
    assert_eq!(m.archs, ["sm_90"]);
}

/// The build's error, after checking nothing was copied where the crate would embed it.
fn refused(dir: &Path) -> String {
    let err = stable_only(dir).try_compile().unwrap_err();
    let msg = err.to_string();
    eprintln!("{msg}");
    assert_eq!(err.kind(), ErrorKind::Config, "{msg}");
    assert!(!dir.join("out/oxide/kernels.ptx").exists(), "nothing was copied for embedding");
    assert!(
        msg.contains(&format!("`cargo oxide build --manifest-path {}`", dir.join("Cargo.toml").display())),
        "the refresh command: {msg}"
    );
    msg
}

fn sha256(path: &Path) -> String {
    oxide_build::manifest::content_hash(&std::fs::read(path).unwrap())
}

/// Rewrites the copied manifest as JSON.
fn edit_manifest(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = dir.join("kernels-prebuilt/kernels.manifest.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn a_ptx_edited_by_one_byte_is_refused_naming_the_file_and_both_hashes() {
    let dir = copy_example("tampered_ptx");
    let ptx = dir.join("kernels-prebuilt/kernels.ptx");
    let recorded = sha256(&ptx);
    let text = std::fs::read_to_string(&ptx).unwrap();
    assert!(text.contains("fma.rn.f32"), "the example's PTX computes a * x + b with one fma");
    // Round toward zero instead of to nearest: one byte, still valid PTX, different results.
    std::fs::write(&ptx, text.replacen("fma.rn.f32", "fma.rz.f32", 1)).unwrap();
    let msg = refused(&dir);
    assert!(
        msg.contains(&format!(
            "the prebuilt kernels in {} do not match their manifest",
            dir.join("kernels-prebuilt").display()
        )),
        "{msg}"
    );
    assert!(
        msg.contains(&format!(
            "changed: kernels.ptx (the manifest records sha256 {recorded}, the file has sha256 {})",
            sha256(&ptx)
        )),
        "{msg}"
    );
    assert!(!msg.contains("kernels.sm_90.cubin"), "only the edited file is named: {msg}");
}

#[test]
fn a_ptx_replaced_by_garbage_is_refused() {
    let dir = copy_example("garbage_ptx");
    std::fs::write(dir.join("kernels-prebuilt/kernels.ptx"), "not PTX at all\n").unwrap();
    let msg = refused(&dir);
    assert!(msg.contains("changed: kernels.ptx"), "{msg}");
}

#[test]
fn an_edited_cubin_is_refused_naming_it() {
    let dir = copy_example("tampered_cubin");
    let cubin = dir.join("kernels-prebuilt/kernels.sm_90.cubin");
    let mut bytes = std::fs::read(&cubin).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&cubin, &bytes).unwrap();
    let msg = refused(&dir);
    assert!(msg.contains("changed: kernels.sm_90.cubin (the manifest records sha256"), "{msg}");
    assert!(!msg.contains("changed: kernels.ptx"), "{msg}");
}

#[test]
fn a_missing_or_unlisted_cubin_is_refused_naming_it() {
    let dir = copy_example("missing_cubin");
    std::fs::rename(dir.join("kernels-prebuilt/kernels.sm_90.cubin"), dir.join("kernels-prebuilt/kernels.sm_80.cubin"))
        .unwrap();
    let msg = refused(&dir);
    assert!(msg.contains("missing: kernels.sm_90.cubin (listed in the manifest)"), "{msg}");
    assert!(msg.contains("not listed in the manifest: kernels.sm_80.cubin"), "{msg}");
}

#[test]
fn a_manifest_whose_sources_omit_the_kernels_module_is_refused() {
    let dir = copy_example("no_sources");
    // Consistent otherwise: no sources, and the hash of no sources.
    edit_manifest(&dir, |m| {
        m["sources"] = serde_json::json!([]);
        m["source_hash"] = oxide_build::manifest::tree_hash(&[]).into();
    });
    let msg = refused(&dir);
    assert!(
        msg.contains("does not hash the kernels module src/kernels.rs (its sources: none)"),
        "names the kernels module: {msg}"
    );
    assert!(msg.contains(&dir.join("kernels-prebuilt/kernels.manifest.json").display().to_string()), "{msg}");
}

#[test]
fn a_manifest_listing_another_file_instead_of_the_kernels_module_is_refused() {
    let dir = copy_example("other_source");
    // `src/main.rs` with its true hash: that file never changes with the kernels, so the old
    // check would have called the directory current whatever src/kernels.rs became.
    let entry =
        oxide_build::manifest::SourceEntry { path: "src/main.rs".into(), hash: sha256(&dir.join("src/main.rs")) };
    edit_manifest(&dir, |m| {
        m["sources"] = serde_json::json!([{"path": entry.path, "hash": entry.hash}]);
        m["source_hash"] = oxide_build::manifest::tree_hash(std::slice::from_ref(&entry)).into();
    });
    let text = std::fs::read_to_string(dir.join("src/kernels.rs")).unwrap();
    std::fs::write(dir.join("src/kernels.rs"), text.replace("a * x[i.get()] + b", "a * x[i.get()] - b")).unwrap();
    let msg = refused(&dir);
    assert!(msg.contains("does not hash the kernels module src/kernels.rs (its sources: src/main.rs)"), "{msg}");
}

#[test]
fn a_manifest_whose_kernels_differ_from_the_ptx_is_refused() {
    let dir = copy_example("kernel_layout");
    // The PTX is untouched (its hash matches) but the manifest lies about `affine`'s parameters,
    // which the host launchers are checked against.
    edit_manifest(&dir, |m| {
        m["kernels"][0]["params"].as_array_mut().unwrap().pop();
    });
    let msg = refused(&dir);
    assert!(
        msg.contains(
            "it declares the kernels [affine(f32, f32, u64, u64, u64)] but kernels.ptx defines \
             [affine(f32, f32, u64, u64, u64, u64)]"
        ),
        "{msg}"
    );
}

#[test]
fn a_manifest_naming_a_file_outside_the_directory_is_refused() {
    let dir = copy_example("outside");
    let outside = sha256(&dir.join("src/kernels.rs"));
    edit_manifest(&dir, |m| {
        m["ptx"] = "../src/kernels.rs".into();
        m["file_sha256"]["../src/kernels.rs"] = outside.into();
    });
    let msg = refused(&dir);
    assert!(
        msg.contains("not in the directory: the manifest names `../src/kernels.rs`, not a file next to it"),
        "{msg}"
    );
}

#[test]
fn a_format_1_manifest_without_file_hashes_is_refused_with_the_refresh_command() {
    let dir = copy_example("format_1");
    edit_manifest(&dir, |m| {
        m["format"] = 1.into();
        m.as_object_mut().unwrap().remove("file_sha256");
    });
    let msg = refused(&dir);
    assert!(msg.contains("\"format\": 1") && msg.contains("cannot be checked"), "{msg}");
}
