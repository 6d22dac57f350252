//! Runs the device toolchain's cargo on the generated crate: `-Zbuild-std=core`, LTO, and
//! `--emit=llvm-ir -Zno-link`, which writes the whole linked module (kernels plus every `core`
//! function they reach) as one `.ll` without invoking any linker.

use crate::device_crate::DeviceCrate;
use crate::env::Env;
use crate::error::{command_line, Error, ErrorKind};
use crate::toolchain::Toolchain;
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) const TARGET: &str = "nvptx64-nvidia-cuda";

pub(crate) struct Options<'a> {
    pub arch: &'a str,
    pub opt_level: u8,
    pub cfgs: &'a [String],
    /// Also have rustc write PTX itself (used when no matching llc exists).
    pub emit_asm: bool,
    /// No libdevice: the device API falls back to its own `no_std` math (`--cfg oxide_no_libdevice`).
    pub no_libdevice: bool,
}

pub(crate) struct DeviceBuild {
    pub ir: PathBuf,
    pub asm: Option<PathBuf>,
    /// Every source file rustc read for the device crate (from its dep-info).
    pub sources: Vec<PathBuf>,
    pub command: String,
}

pub(crate) fn run(
    tc: &Toolchain,
    env: &Env,
    krate: &DeviceCrate,
    target_dir: &Path,
    opts: &Options<'_>,
) -> Result<DeviceBuild, Error> {
    let mut cmd = Command::new(&tc.cargo);
    cmd.current_dir(&krate.dir)
        .args(["rustc", "--release", "--lib", "--target", TARGET, "-Zbuild-std=core"])
        .arg("--manifest-path")
        .arg(krate.dir.join("Cargo.toml"))
        .args(["--color", "never", "--quiet", "--"])
        .arg(if opts.emit_asm { "--emit=llvm-ir,asm" } else { "--emit=llvm-ir" })
        .arg("-Zno-link")
        .arg(format!("-Copt-level={}", opts.opt_level));
    for cfg in opts.cfgs {
        cmd.arg("--cfg").arg(cfg);
    }
    // A clean environment: nothing of the outer (host) cargo build leaks in.
    cmd.env_clear();
    for key in [
        "PATH",
        "HOME",
        "CARGO_HOME",
        "RUSTUP_HOME",
        "TMPDIR",
        "CARGO_NET_OFFLINE",
        "CARGO_HTTP_PROXY",
        "HTTPS_PROXY",
        "https_proxy",
    ] {
        if let Some(v) = env.var_os(key) {
            cmd.env(key, v);
        }
    }
    cmd.env("RUSTC", &tc.rustc).env("CARGO_TARGET_DIR", target_dir);
    if tc.bootstrap {
        cmd.env("RUSTC_BOOTSTRAP", "1");
    }
    // The same flags for every crate of the device build (so `core` is shared between crates):
    // MIR jump threading can duplicate a barrier call into two branches, which breaks bar.sync.
    let mut rustflags = vec!["-Zmir-enable-passes=-JumpThreading".to_string(), format!("-Ctarget-cpu={}", opts.arch)];
    if opts.no_libdevice {
        rustflags.extend(["--cfg".to_string(), "oxide_no_libdevice".to_string()]);
    }
    cmd.env("CARGO_ENCODED_RUSTFLAGS", rustflags.join("\x1f"));

    let command = command_line(&cmd);
    let out = cmd.output().map_err(|e| {
        Error::new(
            ErrorKind::ToolExec,
            format!("failed to start the device cargo `{}`: {e}\n  command: {command}", tc.cargo.display()),
        )
    })?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(compile_error(&stderr, &command, tc));
    }
    let deps = target_dir.join(TARGET).join("release/deps");
    let ir = deps.join(format!("{}.ll", krate.lib_name));
    if !ir.is_file() {
        return Err(Error::new(
            ErrorKind::KernelCompile,
            format!("the device build succeeded but wrote no LLVM IR at {}\n  command: {command}", ir.display()),
        ));
    }
    let asm = opts.emit_asm.then(|| deps.join(format!("{}.s", krate.lib_name)));
    // Cargo's own dep-info lists the sources of every local crate the device build compiled
    // (the kernels module, oxide-rt, oxide-macros, no_std dependencies), so editing any of them
    // reruns the build script; rustc's per-crate file only has the kernels crate.
    let cargo_dep_info = target_dir.join(TARGET).join("release").join(format!("{}.d", krate.lib_name));
    let dep_info = if cargo_dep_info.is_file() { cargo_dep_info } else { deps.join(format!("{}.d", krate.lib_name)) };
    let sources = read_dep_info(&dep_info, &krate.dir)?;
    Ok(DeviceBuild { ir, asm, sources, command })
}

fn compile_error(stderr: &str, command: &str, tc: &Toolchain) -> Error {
    if stderr.contains("unable to build with the standard library") || stderr.contains("component add rust-src") {
        return Error::new(
            ErrorKind::MissingRustSrc,
            format!("the device toolchain ({}) cannot build `core`: its library sources are missing.\n{stderr}\n  fix: {}\n  command: {command}",
                tc.origin, crate::toolchain::INSTALL_RUSTUP),
        );
    }
    let body: Vec<&str> = stderr.lines().filter(|l| !l.trim_start().starts_with("Compiling ")).collect();
    Error::new(
        ErrorKind::KernelCompile,
        format!(
            "the kernels module does not compile for {TARGET} ({}):\n\n{}\n\n  command: {command}",
            tc.rustc_version,
            body.join("\n").trim_end()
        ),
    )
}

/// Parses a Makefile-style dep-info file: the first rule's prerequisites.
fn read_dep_info(path: &Path, base: &Path) -> Result<Vec<PathBuf>, Error> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Error::io(format!("reading dep-info {}", path.display()), e))?;
    let Some(line) = text.lines().find(|l| l.contains(": ")) else { return Ok(Vec::new()) };
    let deps = &line[line.find(": ").map(|i| i + 2).unwrap_or(line.len())..];
    let mut files = Vec::new();
    let mut cur = String::new();
    let mut chars = deps.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => {
                cur.push(' ');
                chars.next();
            }
            ' ' => {
                if !cur.is_empty() {
                    files.push(base.join(std::mem::take(&mut cur)));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        files.push(base.join(cur));
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn dep_info_paths_are_resolved_and_unescaped() -> TestResult {
        let dir = tempfile::tempdir()?;
        let d = dir.path().join("x.d");
        std::fs::write(&d, "/t/x.ll: lib.rs /src/my\\ kernels.rs /src/util.rs\n\nlib.rs:\n")?;
        let got = read_dep_info(&d, Path::new("/crate"))?;
        assert_eq!(
            got,
            vec![PathBuf::from("/crate/lib.rs"), PathBuf::from("/src/my kernels.rs"), PathBuf::from("/src/util.rs")]
        );
        Ok(())
    }
}
