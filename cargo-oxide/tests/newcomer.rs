//! A newcomer's crate, outside this workspace: the README's "Your own crate" files (read from
//! README.md itself) and `cargo oxide new`'s scaffold both build and run on the CPU executor,
//! cleanly, and a kernel with a type error shows rustc's error at the user's file:line first.
//!
//! The crates live in the system temp dir but build into this workspace's target dir, with the
//! workspace's Cargo.lock, so oxide-rt, cudarc and the device `core` are compiled once for all.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().canonicalize().unwrap()
}

/// The workspace's target dir (`CARGO_TARGET_TMPDIR` is `<target>/tmp`).
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap().to_path_buf()
}

/// The `<!-- file: NAME -->` blocks of README.md: (NAME, the fenced block's contents).
fn readme_files() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let mut files = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line.strip_prefix("<!-- file: ").and_then(|l| l.strip_suffix(" -->")) else {
            continue;
        };
        let fence = lines.next().unwrap_or_default();
        assert!(fence.starts_with("```"), "README: `{line}` must be followed by a fenced block, got `{fence}`");
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        files.push((name.to_string(), body.join("\n") + "\n"));
    }
    files
}

/// A fresh, empty directory outside the workspace, the same one on every run (so cargo's
/// freshness checks and the target dir do not pile up a copy per run).
fn scratch(name: &str) -> PathBuf {
    let mut h = DefaultHasher::new();
    workspace().hash(&mut h);
    let dir = std::env::temp_dir().join(format!("oxide-{name}-{:016x}", h.finish()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, files: &[(String, String)]) {
    for (rel, text) in files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// The README's dependencies (`../oxide/<crate>`) pointed at this workspace.
fn at_this_checkout(toml: &str) -> String {
    assert_eq!(toml.matches("path = \"../oxide/").count(), 2, "README Cargo.toml: two path dependencies:\n{toml}");
    toml.replace("path = \"../oxide/", &format!("path = \"{}/", workspace().display()))
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// `cargo build` of the crate in `dir` into the shared target dir, with the workspace's lockfile
/// (the same dependency versions, so nothing new to compile or download).
fn cargo_build(dir: &Path) -> Output {
    std::fs::copy(workspace().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(dir).args(["build", "--color", "never"]).env("CARGO_TARGET_DIR", target_dir());
    // The workspace's dev profile (Cargo.toml), so the dependencies built for it are reused.
    cmd.args(["--config", "profile.dev.debug=\"line-tables-only\""]);
    cmd.args(["--config", "profile.dev.package.corosensei.opt-level=3"]);
    // What cargo set for this test binary describes this package, not the crate being built.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_CRATE_", "CARGO_BIN_", "CARGO_PRIMARY_", "CARGO_TARGET_TMPDIR"]
            .iter()
            .any(|p| key.starts_with(p))
            || key == "OUT_DIR"
        {
            cmd.env_remove(&*key);
        }
    }
    cmd.output().unwrap()
}

/// Builds the crate, checks the build printed no warning, runs it on the CPU executor and
/// returns its output.
fn build_and_run(dir: &Path, package: &str) -> String {
    let out = cargo_build(dir);
    let log = text(&out);
    assert!(out.status.success(), "the crate in {} does not build:\n{log}", dir.display());
    // ptxas missing is the machine's, not the code's (CI requires it: OXIDE_REQUIRE_PTXAS).
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains("warning") && !l.contains("ptxas not found")).collect();
    assert!(warnings.is_empty(), "a user's build shows no warnings, got:\n{log}");
    // Cargo still learns which variables to watch: the build script's output (the newest run's)
    // names each once.
    let outputs = std::fs::read_dir(target_dir().join("debug/build")).unwrap().filter_map(|e| {
        let e = e.unwrap();
        let out = e.path().join("output");
        let ours = e.file_name().to_string_lossy().starts_with(&format!("{package}-"));
        (ours && out.is_file()).then(|| (out.metadata().unwrap().modified().unwrap(), out))
    });
    let (_, newest) = outputs.max().expect("the build script's output");
    let script = std::fs::read_to_string(newest).unwrap();
    for var in ["OXIDE_DEVICE_RUSTC", "OXIDE_PTXAS", "PATH"] {
        let line = format!("cargo:rerun-if-env-changed={var}\n");
        assert_eq!(script.matches(&line).count(), 1, "{line:?} once in the build script's output:\n{script}");
    }
    let run = Command::new(target_dir().join("debug").join(package)).env("OXIDE_BACKEND", "cpu").output().unwrap();
    let printed = text(&run);
    assert!(run.status.success(), "{package} failed:\n{printed}");
    printed
}

#[test]
fn the_readme_crate_is_the_template_and_builds_and_runs_on_the_cpu() {
    let files = readme_files();
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["Cargo.toml", "build.rs", "src/kernels.rs", "src/main.rs"]);
    // The template `cargo oxide new` writes is the README's text.
    let template = workspace().join("cargo-oxide/template");
    for (name, text) in &files {
        let file = if name == "Cargo.toml" { "Cargo.toml.in" } else { name };
        let want = std::fs::read_to_string(template.join(file)).unwrap();
        assert_eq!(text, &want, "README's {name} differs from cargo-oxide/template/{file}");
    }

    let dir = scratch("readme");
    let mut files = files;
    files[0].1 = at_this_checkout(&files[0].1);
    write(&dir, &files);
    let printed = build_and_run(&dir, "hello-gpu");
    assert_eq!(printed, "ran on the CPU executor\nsaxpy: y = 2x + 1 in all 1048576 elements\n");
    assert!(
        std::fs::read_to_string(workspace().join("README.md")).unwrap().contains(&format!("```text\n{printed}```")),
        "the README shows what the crate prints:\n{printed}"
    );
}

#[test]
fn cargo_oxide_new_writes_the_readme_crate_which_builds_and_runs_on_the_cpu() {
    let parent = scratch("new");
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
        .args(["oxide", "new", "newcomer-app"])
        .current_dir(&parent)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains(&format!("by path from {}", workspace().display())), "{}", text(&out));
    let dir = parent.join("newcomer-app");
    for (name, readme) in readme_files() {
        let got = std::fs::read_to_string(dir.join(&name)).unwrap();
        let want = if name == "Cargo.toml" {
            at_this_checkout(&readme).replace("name = \"hello-gpu\"", "name = \"newcomer-app\"")
        } else {
            readme
        };
        assert_eq!(got, want, "cargo oxide new's {name} is not the README's");
    }
    let printed = build_and_run(&dir, "newcomer-app");
    assert!(printed.ends_with("saxpy: y = 2x + 1 in all 1048576 elements\n"), "{printed}");

    // Never over an existing crate.
    let again = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
        .args(["oxide", "new", "newcomer-app"])
        .current_dir(&parent)
        .output()
        .unwrap();
    assert!(!again.status.success() && text(&again).contains("already exists and is not empty"), "{}", text(&again));
}

#[test]
fn a_kernel_with_a_type_error_shows_rustcs_error_at_the_users_line_first() {
    let dir = scratch("broken");
    let mut files = readme_files();
    files[0].1 = at_this_checkout(&files[0].1).replace("name = \"hello-gpu\"", "name = \"broken-gpu\"");
    let kernels = &mut files.iter_mut().find(|(n, _)| n == "src/kernels.rs").unwrap().1;
    let line = 1 + kernels.lines().position(|l| l.contains("*yi = a * xi + *yi;")).unwrap();
    *kernels = kernels.replace("*yi = a * xi + *yi;", "*yi = a * xi + \"one\";");
    write(&dir, &files);

    let out = cargo_build(&dir);
    let log = text(&out);
    assert!(!out.status.success(), "{log}");
    assert!(!log.contains("rerun-if"), "no cargo:rerun-if lines in a failed build's output:\n{log}");
    // cargo's own "warning: build failed, waiting for other jobs to finish..." is not oxide's.
    let warnings = log.lines().filter(|l| l.contains("warning") && !l.contains("waiting for other jobs"));
    assert_eq!(warnings.count(), 0, "no warnings from oxide's own code:\n{log}");
    // The build script's output (after cargo's own "failed to run custom build command" lines)
    // starts with oxide-build's one-line header: no stdout section, nothing before the error.
    let script: Vec<&str> = log
        .lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with("--- std"))
        .filter(|l| !l.is_empty())
        .take(2)
        .collect();
    assert_eq!(script.first().copied(), Some("--- stderr"), "{log}");
    assert!(script.get(1).is_some_and(|l| l.starts_with("error occurred in oxide-build")), "{log}");
    // After oxide-build's one-line header, rustc's own diagnostic, spanned in the user's file.
    let errors: Vec<&str> = log
        .lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with("error occurred in oxide-build"))
        .skip(1)
        .filter(|l| !l.is_empty())
        .take(2)
        .collect();
    assert_eq!(errors.first().copied(), Some("error[E0277]: cannot add `&str` to `f32`"), "{log}");
    let at = format!("--> {}:{line}:", dir.canonicalize().unwrap().join("src/kernels.rs").display());
    assert!(errors.get(1).is_some_and(|l| l.starts_with(&at)), "expected `{at}` second:\n{log}");
}

#[test]
fn a_type_that_differs_between_host_and_gpu_is_an_error_at_the_argument() {
    let dir = scratch("split");
    let mut files = readme_files();
    files[0].1 = at_this_checkout(&files[0].1).replace("name = \"hello-gpu\"", "name = \"split-gpu\"");
    let kernels = &mut files.iter_mut().find(|(n, _)| n == "src/kernels.rs").unwrap().1;
    // The README's pattern for device-only code, applied to a type: the launcher would lend a
    // buffer of 4-byte elements to a kernel that stores 8-byte ones.
    kernels.push_str(
        "\n#[cfg(target_arch = \"nvptx64\")]\npub type Wide = f64;\n#[cfg(not(target_arch = \"nvptx64\"))]\npub type Wide = f32;\n\n\
         #[kernel]\npub fn fill(mut y: DisjointSlice<Wide>) {\n    if let Some(v) = y.get_mut(thread::index()) {\n        *v = 1.0;\n    }\n}\n",
    );
    let line = 1 + kernels.lines().position(|l| l.contains("pub fn fill(")).unwrap();
    write(&dir, &files);

    let out = cargo_build(&dir);
    let log = text(&out);
    assert!(!out.status.success(), "{log}");
    assert!(
        log.contains(
            "argument `y` of kernel `fill`: `Wide` differs between host and GPU: it is not 8 bytes with alignment 8"
        ),
        "{log}"
    );
    let at = format!("--> src/kernels.rs:{line}:");
    assert!(log.contains(&at), "the error points at the argument's type (`{at}`):\n{log}");
    // saxpy's arguments are the same on both sides: one error.
    assert_eq!(log.matches("differs between host and GPU").count(), 1, "{log}");
}
