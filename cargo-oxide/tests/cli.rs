//! The `cargo oxide` binary: `doctor` against shim toolchains with each component missing,
//! `inspect` of the committed prebuilt directory, `build --trace` and `emit` of examples/saxpy
//! with the real device toolchain (installed by ci/setup.sh).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn cargo_oxide() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"));
    // As cargo runs it for `cargo oxide ...`.
    c.arg("oxide");
    c
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A machine made of shims: every component doctor checks, each removable.
struct Machine {
    dir: tempfile::TempDir,
}

impl Machine {
    fn complete() -> Machine {
        let m = Machine { dir: tempfile::tempdir().unwrap() };
        let sysroot = m.path("usr");
        let answers = format!(
            "case \"$1\" in\n  -vV) printf 'rustc 1.96.0 (x 2026-05-25)\\nhost: x86_64-unknown-linux-gnu\\nLLVM version: 22.1.8\\n' ;;\n  \
             --print) echo {} ;;\n  --version) printf 'ptxas: NVIDIA (R) Ptx optimizing assembler\\nCuda compilation tools, release 13.0, V13.0.88\\n' ;;\nesac\n",
            sysroot.display()
        );
        for tool in
            ["usr/bin/rustc", "usr/bin/cargo", "path/llc-22", "path/opt-22", "path/llvm-link-22", "cuda/bin/ptxas"]
        {
            m.write_program(tool, &format!("#!/bin/sh\n{answers}"));
        }
        m.write("usr/lib/rustlib/src/rust/library/core/Cargo.toml", "[package]\nname = \"core\"\n");
        m.write("cuda/nvvm/libdevice/libdevice.10.bc", "BC");
        m.write("lib/libcuda.so.1", "not really a library");
        fs::create_dir_all(m.path("home")).unwrap();
        m
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, contents: &str) {
        let p = self.path(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, contents).unwrap();
    }

    /// Writes an executable script from a child process: written from this process, a test on
    /// another thread could fork while the file is open for writing, and that child's copy of
    /// the descriptor makes exec of the script fail with ETXTBSY ("text file busy").
    fn write_program(&self, rel: &str, script: &str) {
        let p = self.path(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        let mut child = Command::new("sh")
            .args(["-c", "cat > \"$0\" && chmod 755 \"$0\""])
            .arg(&p)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
        assert!(child.wait().unwrap().success(), "could not write {}", p.display());
    }

    fn remove(&self, rel: &str) {
        let p = self.path(rel);
        if p.is_dir() { fs::remove_dir_all(p) } else { fs::remove_file(p) }.unwrap();
    }

    fn doctor(&self, extra: &[(&str, &str)]) -> (bool, String) {
        let mut c = cargo_oxide();
        c.arg("doctor").env_clear();
        let path = std::env::join_paths([self.path("path"), self.path("cuda/bin")]).unwrap();
        c.env("PATH", path)
            .env("HOME", self.path("home"))
            .env("OXIDE_SYSTEM_BINS", self.path("usr/bin"))
            .env("OXIDE_LIBCUDA_DIRS", self.path("lib"));
        for (k, v) in extra {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        (out.status.success(), text(&out))
    }
}

/// The doctor line for `component`, and the fix line under it if any.
fn line<'a>(report: &'a str, component: &str) -> (&'a str, Option<&'a str>) {
    let mut lines = report.lines();
    while let Some(l) = lines.next() {
        if l.split_whitespace().nth(1) == Some(component) || l.contains(&format!(" {component}  ")) {
            let next = lines.next().filter(|n| n.trim_start().starts_with("fix: "));
            return (l, next);
        }
    }
    panic!("no line for {component} in:\n{report}")
}

/// A real CUDA install would be found through its fixed location and hide the miss.
fn system_cuda() -> bool {
    Path::new("/usr/local/cuda/bin/ptxas").exists()
}

#[test]
fn doctor_with_everything_present() {
    let m = Machine::complete();
    let (ok, report) = m.doctor(&[]);
    eprintln!("{report}");
    assert!(ok, "{report}");
    let (rustc, _) = line(&report, "device");
    assert!(
        rustc.trim_start().starts_with("ok") && rustc.contains(&m.path("usr/bin/rustc").display().to_string()),
        "{report}"
    );
    for c in ["rust-src", "llc", "opt", "llvm-link", "ptxas", "libdevice", "libcuda"] {
        let (l, fix) = line(&report, c);
        assert!(l.trim_start().starts_with("ok"), "{c}: {report}");
        assert!(fix.is_none(), "{c}: {report}");
    }
    assert!(line(&report, "llc").0.contains(&m.path("path/llc-22").display().to_string()));
    assert!(report.contains("Cuda compilation tools, release 13.0"), "ptxas version: {report}");
    assert!(report.contains("kernels can be built here"), "{report}");
}

#[test]
fn doctor_names_each_missing_component_and_its_fix() {
    // (what to remove, component, status, text the fix must contain, doctor still succeeds)
    let cases: &[(&str, &str, &str, &str, bool)] = &[
        (
            "usr/bin/rustc",
            "device",
            "MISSING",
            "rustup toolchain install nightly --component rust-src,llvm-tools",
            false,
        ),
        ("usr/lib/rustlib/src", "rust-src", "MISSING", "apt-get install rust-web-src", false),
        ("path/llc-22", "llc", "missing", "apt-get install llvm-22", true),
        ("path/opt-22", "opt", "missing", "apt-get install llvm-22", true),
        ("path/llvm-link-22", "llvm-link", "missing", "apt-get install llvm-22", true),
        ("cuda/bin/ptxas", "ptxas", "missing", "pip install nvidia-cuda-nvcc", true),
        ("cuda/nvvm", "libdevice", "missing", "pip install nvidia-cuda-nvcc", true),
        ("lib/libcuda.so.1", "libcuda", "missing", "install the NVIDIA driver", true),
    ];
    for (remove, component, status, fix, ok) in cases {
        if system_cuda() && matches!(*component, "ptxas" | "libdevice") {
            eprintln!("skipped {component}: /usr/local/cuda provides it on this machine");
            continue;
        }
        let m = Machine::complete();
        m.remove(remove);
        let (success, report) = m.doctor(&[]);
        let (l, fix_line) = line(&report, component);
        assert!(l.trim_start().starts_with(status), "{component} should be {status}:\n{report}");
        let fix_line = fix_line.unwrap_or_else(|| panic!("no fix for {component}:\n{report}"));
        assert!(fix_line.contains(fix), "{component}: {fix_line}\n{report}");
        assert_eq!(success, *ok, "exit status with {component} missing:\n{report}");
        if !ok {
            assert!(report.contains("kernels cannot be built here"), "{report}");
        }
    }
}

#[test]
fn doctor_reports_a_hidden_toolchain_and_bad_variables() {
    let m = Machine::complete();
    let (ok, report) = m.doctor(&[("OXIDE_NO_DEVICE_TOOLCHAIN", "1")]);
    assert!(!ok);
    assert!(line(&report, "device").1.unwrap().contains("unset OXIDE_NO_DEVICE_TOOLCHAIN"), "{report}");
    let (ok, report) = m.doctor(&[("OXIDE_LLC", "/nonexistent/llc")]);
    assert!(ok, "llc is optional: {report}");
    assert!(line(&report, "llc").0.contains("OXIDE_LLC=/nonexistent/llc does not exist"), "{report}");
}

#[test]
fn inspect_shows_kernels_resources_and_sizes_of_a_prebuilt_dir() {
    let dir = workspace().join("examples/prebuilt/kernels-prebuilt");
    let out = cargo_oxide().arg("inspect").arg(&dir).output().unwrap();
    let report = text(&out);
    eprintln!("{report}");
    assert!(out.status.success(), "{report}");
    assert!(report.contains("kernels module `kernels` (src/kernels.rs)"), "{report}");
    assert!(report.contains(": current"), "sources checked against the crate: {report}");
    let ptx_len = fs::metadata(dir.join("kernels.ptx")).unwrap().len();
    assert!(report.contains(&format!("PTX: kernels.ptx ({ptx_len} bytes, .target sm_90)")), "{report}");
    assert!(report.contains("cubin sm_90: kernels.sm_90.cubin ("), "{report}");
    assert!(report.contains("files: match the manifest's SHA-256"), "{report}");

    // An edited copy is reported, naming the file.
    let copy = Path::new(env!("CARGO_TARGET_TMPDIR")).join("inspect-tampered");
    let _ = fs::remove_dir_all(&copy);
    fs::create_dir_all(&copy).unwrap();
    for f in ["kernels.manifest.json", "kernels.ptx", "kernels.sm_90.cubin"] {
        fs::copy(dir.join(f), copy.join(f)).unwrap();
    }
    fs::write(copy.join("kernels.ptx"), "garbage").unwrap();
    let report = text(&cargo_oxide().arg("inspect").arg(&copy).output().unwrap());
    assert!(report.contains("files: DO NOT MATCH the manifest") && report.contains("changed: kernels.ptx"), "{report}");
    let row = report.lines().find(|l| l.trim_start().starts_with("affine")).expect("a row for affine");
    let regs: u32 = row.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(regs > 0, "{row}");
    assert!(row.contains("(f32, f32, u64, u64, u64, u64)"), "a, b, then ptr+len of x and out: {row}");
}

#[test]
fn build_trace_shows_every_stage_with_its_commands_and_writes_the_prebuilt_dir() {
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-build-saxpy");
    let _ = fs::remove_dir_all(&out_dir);
    let out = cargo_oxide()
        .args(["build", "--trace", "--manifest-path"])
        .arg(workspace().join("examples/saxpy/Cargo.toml"))
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    let report = text(&out);
    eprintln!("{report}");
    assert!(out.status.success(), "{report}");
    for stage in [
        "[discover toolchain]",
        "[device build (cargo + rustc)]",
        "[IR post-processing]",
        "[llc]",
        "[ptxas]",
        "[manifest]",
    ] {
        assert!(report.contains(stage), "{stage} missing:\n{report}");
    }
    assert!(
        report.contains("$ ") && report.contains("-Zbuild-std=core") && report.contains("--target nvptx64-nvidia-cuda"),
        "{report}"
    );
    assert!(report.contains("-mcpu=sm_90"), "the llc command line: {report}");
    assert!(
        report.contains(&format!("in:  {}", workspace().join("examples/saxpy/src/kernels.rs").display())),
        "{report}"
    );
    let m = oxide_build::ManifestFile::read(&out_dir.join("kernels.manifest.json")).unwrap();
    assert_eq!(m.kernels[0].name, "saxpy");
    assert_eq!(m.source, "src/kernels.rs");
    assert_eq!(
        m.sources.iter().map(|s| s.path.as_str()).collect::<Vec<_>>(),
        ["src/kernels.rs"],
        "paths relative to the crate"
    );
    assert!(m.toolchain["rustc"].as_str().unwrap().starts_with("rustc "));
    let mut hashed: Vec<&str> = m.file_hashes.keys().map(String::as_str).collect();
    let mut shipped = vec![m.ptx.as_str()];
    shipped.extend(m.cubins.iter().map(|(_, f)| f.as_str()));
    hashed.sort();
    shipped.sort();
    assert_eq!(hashed, shipped, "a SHA-256 for the PTX and every cubin");
    assert_eq!(oxide_build::prebuilt::check_files(&m), vec![], "the written files match their manifest");
    assert!(out_dir.join("kernels.ptx").is_file());
    if !m.cubins.is_empty() {
        assert!(report.contains("ptxas -arch=sm_90 -v"), "{report}");
        assert!(out_dir.join("kernels.sm_90.cubin").is_file());
    }
}

#[test]
fn emit_prints_ptx_and_ir() {
    let manifest = workspace().join("examples/saxpy/Cargo.toml");
    let ptx = cargo_oxide().args(["emit", "ptx", "--manifest-path"]).arg(&manifest).output().unwrap();
    assert!(ptx.status.success(), "{}", text(&ptx));
    let ptx = String::from_utf8_lossy(&ptx.stdout);
    assert!(ptx.contains(".visible .entry saxpy(") && ptx.contains(".target sm_90"), "{ptx}");
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("saxpy.ll");
    let ir =
        cargo_oxide().args(["emit", "ir", "--manifest-path"]).arg(&manifest).arg("-o").arg(&file).output().unwrap();
    assert!(ir.status.success(), "{}", text(&ir));
    let ir = fs::read_to_string(&file).unwrap();
    assert!(ir.contains("define") && ir.contains("@saxpy("), "{}", &ir[..ir.len().min(2000)]);
}

#[test]
fn usage_works_as_a_cargo_subcommand_and_directly() {
    let out = cargo_oxide().args(["build", "--help"]).output().unwrap();
    let help = text(&out);
    assert!(
        out.status.success() && help.contains("--manifest-path") && help.contains("--arch") && help.contains("--out"),
        "{help}"
    );
    let direct = Command::new(env!("CARGO_BIN_EXE_cargo-oxide")).arg("--help").output().unwrap();
    let help = text(&direct);
    for cmd in ["new", "build", "doctor", "inspect", "emit"] {
        assert!(help.contains(cmd), "{help}");
    }
    let bad = cargo_oxide().arg("frobnicate").output().unwrap();
    assert!(!bad.status.success());
}
