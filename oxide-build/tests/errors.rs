//! Every error a user can hit in the device pipeline, through the public API, with the real
//! device toolchain (installed by ci/setup.sh).

use oxide_build::{Build, ErrorKind};

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// A kernels crate in the workspace's target dir (so the device build reuses the workspace
/// lockfile and the shared `core` build).
fn crate_with(name: &str, kernels: &str) -> (PathBuf, Build) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("oxide-build-errors").join(name);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/kernels.rs"), kernels).unwrap();
    let mut b = oxide_build::kernels("src/kernels.rs");
    b.manifest_dir(&dir)
        .out_dir(dir.join("out"))
        .target_dir(workspace().join("target/oxide-device"))
        .oxide_rt_dir(workspace().join("oxide-rt"))
        .package(name)
        .arch("sm_90")
        .cargo_metadata(false);
    (dir, b)
}

/// Writes an executable script from a child process: written from this process, a test on
/// another thread could fork while the file is open for writing, and that child's copy of the
/// descriptor makes exec of the script fail with ETXTBSY ("text file busy").
fn write_program(path: &Path, script: &str) {
    use std::io::Write;
    let mut child = std::process::Command::new("sh")
        .args(["-c", "cat > \"$0\" && chmod 755 \"$0\""])
        .arg(path)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success(), "could not write {}", path.display());
}

/// ptxas comes from OXIDE_PTXAS or PATH; CI sets OXIDE_REQUIRE_PTXAS so its absence fails.
fn ptxas_available() -> bool {
    let on_path =
        std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("ptxas").is_file()));
    let found = std::env::var_os("OXIDE_PTXAS").is_some() || on_path;
    if !found && std::env::var_os("OXIDE_REQUIRE_PTXAS").is_some() {
        panic!("OXIDE_REQUIRE_PTXAS is set but no ptxas was found; run ci/setup.sh or set OXIDE_PTXAS");
    }
    found
}

#[test]
fn a_kernel_that_does_not_compile_shows_rustc_diagnostics_with_the_users_path() {
    let (dir, b) = crate_with(
        "compile_error",
        "use oxide_rt::device::*;\n#[kernel]\npub fn k(mut y: DisjointSlice<u32>) {\n    let v: u32 = \"not a number\";\n    if let Some(o) = y.get_mut(thread::index()) { *o = v; }\n}\n",
    );
    let err = b.try_compile().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::KernelCompile, "{err}");
    let msg = err.to_string();
    assert!(msg.contains("mismatched types"), "{msg}");
    let path = dir.join("src/kernels.rs");
    assert!(msg.contains(&format!("{}:4:", path.display())), "rustc's location in the user's file:\n{msg}");
    assert!(msg.contains("command: ") && msg.contains("-Zbuild-std=core"), "the failing command line:\n{msg}");
}

#[test]
fn two_kernels_of_one_name_in_different_modules_are_told_to_rename_one() {
    let (_, b) = crate_with(
        "duplicate_symbol",
        "use oxide_rt::device::*;\npub mod a {\n    use oxide_rt::device::*;\n    #[kernel]\n    pub fn fill(mut y: DisjointSlice<u32>) {\n        if let Some(o) = y.get_mut(thread::index()) { *o = 1; }\n    }\n}\npub mod b {\n    use oxide_rt::device::*;\n    #[kernel]\n    pub fn fill(mut y: DisjointSlice<u32>) {\n        if let Some(o) = y.get_mut(thread::index()) { *o = 2; }\n    }\n}\n#[allow(unused_imports)]\nuse a::fill as _a;\n#[kernel]\npub fn other(mut y: DisjointSlice<u32>) {\n    if let Some(o) = y.get_mut(thread::index()) { *o = 3; }\n}\n",
    );
    let err = b.try_compile().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::KernelCompile, "{err}");
    let msg = err.to_string();
    assert!(msg.contains("`fill`") && msg.contains("already defined"), "rustc's own error:\n{msg}");
    assert!(msg.contains("#[kernel(name = \"fill_2\")]"), "the hint names the option:\n{msg}");
}

#[test]
fn a_std_only_float_method_gets_the_float_trait_hint() {
    let (_, b) = crate_with(
        "std_float_method",
        "use oxide_rt::device::*;\n#[kernel]\npub fn pow(x: &[f32], mut y: DisjointSlice<f32>) {\n    let i = thread::index();\n    if let Some(o) = y.get_mut(i) { *o = x[i.get()].powf(2.5); }\n}\n",
    );
    let err = b.try_compile().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::KernelCompile, "{err}");
    let msg = err.to_string();
    assert!(msg.contains("no method named `powf`"), "rustc's own error:\n{msg}");
    assert!(msg.contains("`f32::powf` comes from `std`") && msg.contains("`x.pow(..)`"), "{msg}");
}

#[test]
fn an_llc_abort_is_a_short_error_naming_the_module_and_llvms_message() {
    // NVPTX has no f32 -> u128 conversion: llc aborts with "unsupported library call".
    let (_, b) = crate_with(
        "llc_abort",
        "use oxide_rt::device::*;\n#[kernel]\npub fn to_wide(x: &[f32], mut y: DisjointSlice<u64>) {\n    let i = thread::index();\n    if let Some(o) = y.get_mut(i) { *o = ((x[i.get()] as u128) >> 3) as u64; }\n}\n",
    );
    let err = b.try_compile().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Llc, "{err}");
    let msg = err.to_string();
    assert!(msg.contains("kernels module `kernels`"), "{msg}");
    assert!(msg.contains("LLVM ERROR") && msg.contains("unsupported library call"), "{msg}");
    assert!(msg.lines().count() < 12, "no crash dump, got {} lines:\n{msg}", msg.lines().count());
}

#[test]
fn a_ptxas_rejection_carries_its_message() {
    // 64 KiB of static shared memory: llc accepts it, ptxas refuses (48 KiB static limit).
    let (_, b) = crate_with(
        "ptxas_reject",
        "use oxide_rt::device::*;\n\
         #[unsafe(link_section = \"oxide.shared\")]\nstatic mut BIG: [u32; 16384] = [0; 16384];\n\
         #[kernel]\npub fn k(mut y: DisjointSlice<u32>) {\n    let i = thread::index();\n\
         \x20   // SAFETY: test kernel; each thread writes its own element.\n\
         \x20   let v = unsafe { let p = (&raw mut BIG) as *mut u32; p.add(i.get() % 16384).write(i.get() as u32); p.add((i.get() + 1) % 16384).read() };\n\
         \x20   if let Some(o) = y.get_mut(i) { *o = v; }\n}\n",
    );
    if !ptxas_available() {
        eprintln!("skipped: ptxas not found (set OXIDE_PTXAS; ci/setup.sh installs it)");
        return;
    }
    let err = b.try_compile().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Ptxas, "{err}");
    let msg = err.to_string();
    assert!(msg.contains("ptxas rejected the PTX of kernels module `kernels` for sm_90"), "{msg}");
    assert!(msg.contains("shared data"), "ptxas's own message:\n{msg}");
}

#[test]
fn no_device_toolchain_names_what_was_looked_for_and_the_install_command() {
    let (dir, mut b) = crate_with("no_toolchain", "pub fn nothing() {}\n");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    b.isolated_env()
        .env_override("PATH", Some(empty.to_str().unwrap()))
        .env_override("HOME", Some(empty.to_str().unwrap()))
        .system_bins(&[&empty]);
    let err = b.try_compile().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ToolchainNotFound, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("looked for:") && msg.contains("rustup toolchain install nightly --component rust-src,llvm-tools"),
        "{msg}"
    );
    assert!(msg.contains("apt-get install rustc-web cargo-web rust-web-src llvm-22"), "{msg}");
}

#[test]
fn missing_rust_src_gets_the_fix() {
    let (dir, mut b) = crate_with("no_rust_src", "pub fn nothing() {}\n");
    // A real rustc without library sources: the host's rustup stable toolchain has none here,
    // but to be independent of the machine, fake one with a sysroot that lacks them.
    let root = dir.join("fake-toolchain");
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["rustc", "cargo"] {
        let p = bin.join(tool);
        write_program(&p, &format!("#!/bin/sh\ncase \"$1\" in -vV) echo 'rustc 1.96.0 (x 2026-05-25)'; echo 'LLVM version: 22.1.8';; --print) echo {};; esac\n", root.display()));
    }
    b.isolated_env().env_override("OXIDE_DEVICE_RUSTC", Some(bin.join("rustc").to_str().unwrap())).system_bins(&[&dir]);
    let err = b.try_compile().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::MissingRustSrc, "{err}");
    assert!(err.to_string().contains("rust-src"), "{err}");
}

#[test]
fn a_crate_without_oxide_rt_is_told_to_add_it() {
    let (dir, _) = crate_with("no_oxide_rt", "pub fn nothing() {}\n");
    let mut b = oxide_build::kernels("src/kernels.rs");
    b.manifest_dir(&dir).out_dir(dir.join("out")).cargo_metadata(false).isolated_env();
    let err = b.try_compile().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config);
    assert!(err.to_string().contains("add `oxide-rt` to this crate's [dependencies]"), "{err}");
}

#[test]
fn a_missing_kernels_module_is_named() {
    let (_, mut b) = crate_with("missing_module", "");
    b.source("src/nope.rs");
    let err = b.try_compile().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config);
    assert!(err.to_string().contains("src/nope.rs does not exist"), "{err}");
}

#[test]
fn a_good_module_builds_validates_and_writes_a_manifest() {
    let (_, b) = crate_with(
        "good",
        "use oxide_rt::device::*;\n#[kernel]\npub fn scale(a: f32, x: &[f32], mut y: DisjointSlice<f32>) {\n    let i = thread::index();\n    if let Some(o) = y.get_mut(i) { *o = a * x[i.get()]; }\n}\n",
    );
    let out = b.try_compile().unwrap();
    let ptx = std::fs::read_to_string(&out.ptx).unwrap();
    assert!(ptx.contains(".visible .entry scale("), "{ptx}");
    assert!(ptx.contains(".target sm_90"));
    // No core function leaks as a visible symbol: everything but the kernels is internal.
    assert!(!ptx.contains(".visible .func"), "{ptx}");
    assert_eq!(out.kernels.len(), 1);
    let sizes: Vec<u32> = out.kernels[0].params.iter().map(|p| p.size).collect();
    assert_eq!(sizes, vec![4, 8, 8, 8, 8], "f32, then ptr+len for each slice");
    let manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out.manifest).unwrap()).unwrap();
    assert_eq!(manifest["kernels"][0]["name"], "scale");
    assert_eq!(manifest["source_hash"].as_str().unwrap().len(), 64, "SHA-256");
    let ptx_hash = oxide_build::manifest::content_hash(&std::fs::read(&out.ptx).unwrap());
    assert_eq!(manifest["file_sha256"]["kernels.ptx"].as_str(), Some(ptx_hash.as_str()));
    for (arch, cubin) in &out.cubins {
        let hash = oxide_build::manifest::content_hash(&std::fs::read(cubin).unwrap());
        assert_eq!(manifest["file_sha256"][format!("kernels.{arch}.cubin")].as_str(), Some(hash.as_str()));
    }
    assert!(out.sources.iter().any(|s| s.ends_with("src/kernels.rs")), "{:?}", out.sources);
    if ptxas_available() {
        assert!(out.validated);
        assert!(manifest["kernels"][0]["resources"]["registers"].as_u64().unwrap() > 0);
    }
}

#[test]
fn a_kernel_reaching_for_crate_items_gets_a_hint_about_the_device_crate() {
    // On the host `crate::helper` may well exist (in main.rs); on the device the kernels module
    // is all there is.
    let (dir, b) = crate_with(
        "crate_paths",
        "use oxide_rt::device::*;\n#[kernel]\npub fn k(mut y: DisjointSlice<f32>) {\n    let i = thread::index();\n    if let Some(o) = y.get_mut(i) { *o = crate::helper(); }\n}\n",
    );
    let err = b.try_compile().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::KernelCompile, "{err}");
    let msg = err.to_string();
    eprintln!("{msg}");
    assert!(msg.contains("cannot find function `helper` in the crate root"), "rustc's own error first:\n{msg}");
    let hint = msg.lines().find(|l| l.trim_start().starts_with("hint:")).unwrap_or_else(|| panic!("no hint:\n{msg}"));
    assert!(
        hint.contains(&format!(
            "`crate::helper` is not found because {} is compiled for the GPU on its own",
            dir.join("src/kernels.rs").display()
        )),
        "{hint}"
    );
    assert!(
        hint.contains("`self::…`") && hint.contains("move what the kernels need into the kernels module"),
        "{hint}"
    );

    // Any other compile error gets no such hint.
    let (_, b) = crate_with(
        "crate_paths_ok",
        "use oxide_rt::device::*;\n#[kernel]\npub fn k(mut y: DisjointSlice<f32>) {\n    let v: f32 = 1u32;\n    if let Some(o) = y.get_mut(thread::index()) { *o = self::helper() + v; }\n}\nfn helper() -> f32 { 1.0 }\n",
    );
    let msg = b.try_compile().unwrap_err().to_string();
    assert!(msg.contains("mismatched types") && !msg.contains("hint:"), "{msg}");
}
