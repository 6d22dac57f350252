//! Finding the device toolchain, in the order ARCHITECTURE.md gives:
//! 1. explicit variables (`OXIDE_DEVICE_RUSTC`/`OXIDE_DEVICE_CARGO`, `OXIDE_LLC`, `LLC_PATH`,
//!    `CUDA_OXIDE_LLC`, `OXIDE_PTXAS`, `OXIDE_LIBDEVICE`);
//! 2. a rustup toolchain with `rust-src` (nightly first) and its `llvm-tools` llc;
//! 3. a system rustc whose sysroot has the library sources (Debian's `rustc-web`), driven with
//!    `RUSTC_BOOTSTRAP=1`, and `llc-<N>` matching its LLVM major;
//! 4. no llc of the right major: rustc emits the PTX itself.
//!    Every miss is remembered so the final error names what was looked for.

use crate::env::{is_executable, Env};
use crate::error::{Error, ErrorKind};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Install commands quoted in errors.
pub(crate) const INSTALL_RUSTUP: &str = "rustup toolchain install nightly --component rust-src,llvm-tools";
pub(crate) const INSTALL_DEBIAN: &str = "apt-get install rustc-web cargo-web rust-web-src llvm-22";
pub(crate) const INSTALL_PTXAS: &str =
    "pip install nvidia-cuda-nvcc (then OXIDE_PTXAS=<venv>/lib/python3.*/site-packages/nvidia/cu13/bin/ptxas), or install the CUDA toolkit";

#[derive(Clone, Debug)]
pub struct Toolchain {
    pub rustc: PathBuf,
    pub cargo: PathBuf,
    /// Where this toolchain came from, for messages and the manifest.
    pub origin: String,
    /// `rustc -V`.
    pub rustc_version: String,
    pub llvm_major: Option<u32>,
    /// A stable or distribution rustc needs `RUSTC_BOOTSTRAP=1` for `-Z` flags.
    pub bootstrap: bool,
    pub llc: Option<PathBuf>,
    pub opt: Option<PathBuf>,
    pub llvm_link: Option<PathBuf>,
    pub ptxas: Option<PathBuf>,
    pub libdevice: Option<PathBuf>,
}

impl crate::Traced for Toolchain {
    fn trace(&self) -> crate::Trace {
        crate::Trace { commands: vec![], inputs: vec![], outputs: vec![self.rustc.clone()], warnings: vec![] }
    }
}

struct Rustc {
    rustc: PathBuf,
    cargo: PathBuf,
    origin: String,
    version: String,
    llvm_major: Option<u32>,
    nightly: bool,
    sysroot: PathBuf,
}

/// What discovery tried; becomes the error text when nothing fits.
#[derive(Default)]
struct Tried {
    looked: Vec<String>,
    without_src: Vec<(String, String)>, // (what, fix)
    /// The first rustc that probed fine but lacks rust-src (`doctor` still checks its llc).
    partial: Option<Rustc>,
}

/// `OXIDE_NO_DEVICE_TOOLCHAIN=1` makes discovery find nothing: tests and CI use it to act as a
/// machine with only the stable toolchain (where prebuilt kernels are the only way).
fn disabled(env: &Env) -> bool {
    env.var("OXIDE_NO_DEVICE_TOOLCHAIN").is_some_and(|v| v != "0")
}

pub(crate) fn discover(env: &Env) -> Result<Toolchain, Error> {
    if disabled(env) {
        return Err(Error::new(
            ErrorKind::ToolchainNotFound,
            "no device toolchain: OXIDE_NO_DEVICE_TOOLCHAIN=1 is set (it hides every device rustc)\n  fix: unset OXIDE_NO_DEVICE_TOOLCHAIN",
        ));
    }
    let mut tried = Tried::default();
    let found = explicit(env, &mut tried)?.or_else(|| rustup(env, &mut tried)).or_else(|| system(env, &mut tried));
    let Some(rc) = found else {
        if let Some((what, fix)) = tried.without_src.first() {
            return Err(Error::new(
                ErrorKind::MissingRustSrc,
                format!(
                    "the device toolchain {what} has no standard library sources (rust-src), which `-Zbuild-std=core` needs \
                     to build `core` for nvptx64-nvidia-cuda.\n  fix: {fix}\n  looked for:\n    {}",
                    tried.looked.join("\n    ")
                ),
            ));
        }
        return Err(Error::new(
            ErrorKind::ToolchainNotFound,
            format!(
                "no device toolchain found: oxide needs a rustc with the `rust-src` component to compile kernels for \
                 nvptx64-nvidia-cuda.\n  looked for:\n    {}\n  fix: {INSTALL_RUSTUP}\n   or (Debian/Ubuntu): {INSTALL_DEBIAN}\n   \
                 or point OXIDE_DEVICE_RUSTC/OXIDE_DEVICE_CARGO at one",
                tried.looked.join("\n    ")
            ),
        ));
    };
    let (llc, opt, llvm_link) = llvm_tools(env, &rc)?;
    let ptxas = match env.path("OXIDE_PTXAS") {
        Some(p) => Some(explicit_tool(env, "OXIDE_PTXAS", p)?),
        None => find_ptxas(env),
    };
    let libdevice = match env.path("OXIDE_LIBDEVICE") {
        Some(p) => Some(explicit_libdevice(p)?),
        None => find_libdevice(env, ptxas.as_deref()),
    };
    Ok(Toolchain {
        bootstrap: !rc.nightly,
        rustc: rc.rustc,
        cargo: rc.cargo,
        origin: rc.origin,
        rustc_version: rc.version,
        llvm_major: rc.llvm_major,
        llc,
        opt,
        llvm_link,
        ptxas,
        libdevice,
    })
}

fn explicit(env: &Env, tried: &mut Tried) -> Result<Option<Rustc>, Error> {
    let (rustc, cargo) = (env.path("OXIDE_DEVICE_RUSTC"), env.path("OXIDE_DEVICE_CARGO"));
    let sibling = |p: &Path, name: &str| p.parent().map(|d| d.join(name)).filter(|s| is_executable(s));
    let (rustc, cargo) = match (rustc, cargo) {
        (None, None) => {
            tried.looked.push("OXIDE_DEVICE_RUSTC / OXIDE_DEVICE_CARGO: not set".into());
            return Ok(None);
        }
        (Some(r), Some(c)) => (r, c),
        (Some(r), None) => {
            let c = sibling(&r, "cargo").ok_or_else(|| {
                Error::new(
                    ErrorKind::Config,
                    format!(
                        "OXIDE_DEVICE_RUSTC={} is set but no cargo is next to it; set OXIDE_DEVICE_CARGO too",
                        r.display()
                    ),
                )
            })?;
            (r, c)
        }
        (None, Some(c)) => {
            let r = sibling(&c, "rustc").ok_or_else(|| {
                Error::new(
                    ErrorKind::Config,
                    format!(
                        "OXIDE_DEVICE_CARGO={} is set but no rustc is next to it; set OXIDE_DEVICE_RUSTC too",
                        c.display()
                    ),
                )
            })?;
            (r, c)
        }
    };
    for (var, p) in [("OXIDE_DEVICE_RUSTC", &rustc), ("OXIDE_DEVICE_CARGO", &cargo)] {
        if !is_executable(p) {
            return Err(Error::new(ErrorKind::Config, format!("{var}={} is not an executable file", p.display())));
        }
    }
    let origin = format!("OXIDE_DEVICE_RUSTC={}", rustc.display());
    let rc = probe(env, rustc, cargo, origin.clone())?;
    if !has_rust_src(&rc.sysroot) {
        // The variable says which compiler to use: building with another one instead would be a
        // surprise, so a miss here is an error, not a step to the next candidate.
        let sysroot = rc.sysroot.clone();
        let fix = match rustup_toolchain_name(&sysroot) {
            Some(name) => format!("rustup component add rust-src --toolchain {name}"),
            None => "install the library sources (rust-src) of that toolchain".into(),
        };
        tried.looked.push(format!("{origin}: no rust-src under {}", sysroot.display()));
        tried.without_src.push((origin.clone(), fix.clone()));
        tried.partial.get_or_insert(rc);
        return Err(Error::new(
            ErrorKind::MissingRustSrc,
            format!(
                "{origin} has no standard library sources (rust-src): {} does not exist, and `-Zbuild-std=core` needs \
                 them to build `core` for nvptx64-nvidia-cuda. oxide does not fall back to another rustc while \
                 OXIDE_DEVICE_RUSTC is set.\n  fix: {fix}, or point OXIDE_DEVICE_RUSTC at a rustc that has them (or unset it)",
                sysroot.join("lib/rustlib/src/rust/library/core/Cargo.toml").display()
            ),
        ));
    }
    Ok(Some(rc))
}

/// `nightly-x86_64-unknown-linux-gnu` for a sysroot `…/toolchains/nightly-x86_64-unknown-linux-gnu`.
fn rustup_toolchain_name(sysroot: &Path) -> Option<String> {
    if sysroot.parent()?.file_name()? != "toolchains" {
        return None;
    }
    Some(sysroot.file_name()?.to_string_lossy().into_owned())
}

/// A tool named by an environment variable: it must be an executable file that runs
/// (`--version` succeeds), checked before anything is built so the error names the variable.
fn explicit_tool(env: &Env, var: &str, path: PathBuf) -> Result<PathBuf, Error> {
    if !is_executable(&path) {
        let why = if path.exists() { "is not an executable file" } else { "does not exist" };
        return Err(Error::new(
            ErrorKind::Config,
            format!("{var}={} {why}\n  fix: point {var} at the tool itself, or unset it", path.display()),
        ));
    }
    if let Err(e) = run_capture(env, Command::new(&path).arg("--version")) {
        return Err(Error::new(
            ErrorKind::Config,
            format!("{var}={} does not run: {e}\n  fix: point {var} at a working tool, or unset it", path.display()),
        ));
    }
    Ok(path)
}

/// `OXIDE_LIBDEVICE` must be an LLVM bitcode file (libdevice.10.bc).
fn explicit_libdevice(path: PathBuf) -> Result<PathBuf, Error> {
    let fix = format!("point OXIDE_LIBDEVICE at <cuda>/nvvm/libdevice/libdevice.10.bc, or unset it ({INSTALL_PTXAS})");
    let mut magic = [0u8; 4];
    let read = std::fs::File::open(&path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic));
    let why = match read {
        Err(_) if !path.is_file() => "does not exist",
        Err(_) => "cannot be read as LLVM bitcode",
        // Raw bitcode (`BC\xC0\xDE`) or the bitcode wrapper (0x0B17C0DE, little-endian).
        Ok(()) if magic == *b"BC\xC0\xDE" || magic == [0xDE, 0xC0, 0x17, 0x0B] => return Ok(path),
        Ok(()) => "is not LLVM bitcode",
    };
    Err(Error::new(ErrorKind::Config, format!("OXIDE_LIBDEVICE={} {why}\n  fix: {fix}", path.display())))
}

fn rustup(env: &Env, tried: &mut Tried) -> Option<Rustc> {
    let home = env.path("RUSTUP_HOME").or_else(|| env.path("HOME").map(|h| h.join(".rustup")))?;
    let dir = home.join("toolchains");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if names.is_empty() {
        tried.looked.push(format!("rustup toolchains in {}: none", dir.display()));
        return None;
    }
    // Nightly first (no RUSTC_BOOTSTRAP needed), newest name first within each group.
    names.sort_by(|a, b| (!a.starts_with("nightly"), b).cmp(&(!b.starts_with("nightly"), a)));
    for name in names {
        let root = dir.join(&name);
        let (rustc, cargo) = (root.join("bin/rustc"), root.join("bin/cargo"));
        if !is_executable(&rustc) || !is_executable(&cargo) {
            continue;
        }
        if !has_rust_src(&root) {
            tried.looked.push(format!("rustup toolchain {name}: no rust-src"));
            tried.without_src.push((
                format!("rustup toolchain `{name}`"),
                format!("rustup component add rust-src --toolchain {name}"),
            ));
            continue;
        }
        match probe(env, rustc, cargo, format!("rustup toolchain {name}")) {
            Ok(rc) => return Some(rc),
            Err(e) => tried.looked.push(format!("rustup toolchain {name}: {e}")),
        }
    }
    None
}

fn system(env: &Env, tried: &mut Tried) -> Option<Rustc> {
    let mut candidates: Vec<PathBuf> = env.system_bins().into_iter().map(|d| d.join("rustc")).collect();
    // A `rustc` on PATH that is not a rustup proxy (those were covered above).
    if let Some(p) = env.which("rustc") {
        if !p.components().any(|c| c.as_os_str() == ".cargo") {
            candidates.insert(0, p);
        }
    }
    candidates.dedup();
    for rustc in candidates {
        if !is_executable(&rustc) {
            tried.looked.push(format!("{}: not found", rustc.display()));
            continue;
        }
        let Some(cargo) = rustc.parent().map(|d| d.join("cargo")).filter(|c| is_executable(c)) else {
            tried.looked.push(format!("{}: found, but no cargo next to it", rustc.display()));
            continue;
        };
        match probe(env, rustc.clone(), cargo, format!("system rustc {}", rustc.display())) {
            Ok(rc) if has_rust_src(&rc.sysroot) => return Some(rc),
            Ok(rc) => {
                tried.looked.push(format!("{}: no library sources under {}", rustc.display(), rc.sysroot.display()));
                tried.without_src.push((
                    rustc.display().to_string(),
                    "apt-get install rust-web-src (Debian's rustc-web), or the library sources of that rustc".into(),
                ));
                tried.partial.get_or_insert(rc);
            }
            Err(e) => tried.looked.push(format!("{}: {e}", rustc.display())),
        }
    }
    None
}

fn has_rust_src(sysroot: &Path) -> bool {
    sysroot.join("lib/rustlib/src/rust/library/core/Cargo.toml").is_file()
}

/// Runs `rustc -vV` and `--print sysroot`.
fn probe(env: &Env, rustc: PathBuf, cargo: PathBuf, origin: String) -> Result<Rustc, Error> {
    let vv = run_capture(env, Command::new(&rustc).arg("-vV"))?;
    let version = vv.lines().next().unwrap_or("rustc (unknown version)").trim().to_string();
    let llvm_major =
        vv.lines().find_map(|l| l.strip_prefix("LLVM version:")).and_then(|v| v.trim().split('.').next()?.parse().ok());
    let nightly = version.contains("-nightly") || version.contains("-dev");
    let sysroot = PathBuf::from(run_capture(env, Command::new(&rustc).args(["--print", "sysroot"]))?.trim());
    Ok(Rustc { rustc, cargo, origin, version, llvm_major, nightly, sysroot })
}

/// Runs a probe command with the isolated environment's PATH and returns stdout.
pub(crate) fn run_capture(env: &Env, cmd: &mut Command) -> Result<String, Error> {
    cmd.env_clear();
    for key in ["PATH", "HOME", "RUSTUP_HOME", "CARGO_HOME"] {
        if let Some(v) = env.var_os(key) {
            cmd.env(key, v);
        }
    }
    let out = cmd.output().map_err(|e| {
        Error::new(ErrorKind::ToolExec, format!("failed to run `{}`: {e}", crate::error::command_line(cmd)))
    })?;
    if !out.status.success() {
        return Err(Error::new(
            ErrorKind::ToolExec,
            format!(
                "`{}` failed ({}): {}",
                crate::error::command_line(cmd),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

type LlvmTools = (Option<PathBuf>, Option<PathBuf>, Option<PathBuf>);

fn llvm_tools(env: &Env, rc: &Rustc) -> Result<LlvmTools, Error> {
    let explicit = ["OXIDE_LLC", "LLC_PATH", "CUDA_OXIDE_LLC"].iter().find_map(|k| env.path(k).map(|p| (*k, p)));
    let llc = match explicit {
        Some((var, p)) => Some(explicit_tool(env, var, p)?),
        None => {
            let major = rc.llvm_major;
            // rustup's llvm-tools ship an llc of exactly rustc's LLVM.
            let host_bin = std::fs::read_dir(rc.sysroot.join("lib/rustlib"))
                .ok()
                .into_iter()
                .flatten()
                .filter_map(|e| e.ok())
                .map(|e| e.path().join("bin/llc"))
                .find(|p| is_executable(p));
            host_bin.or_else(|| {
                let m = major?;
                env.which(&format!("llc-{m}"))
                    .or_else(|| {
                        env.system_bins()
                            .iter()
                            .filter_map(|d| d.parent())
                            .map(|p| p.join(format!("lib/llvm-{m}/bin/llc")))
                            .find(|p| is_executable(p))
                    })
                    .or_else(|| env.which("llc").filter(|p| llc_major(env, p) == Some(m)))
            })
        }
    };
    // opt and llvm-link sit next to llc with the same suffix (`llc-22` → `opt-22`).
    let sibling = |tool: &str, var: &str| -> Result<Option<PathBuf>, Error> {
        if let Some(p) = env.path(var) {
            return explicit_tool(env, var, p).map(Some);
        }
        let Some(llc) = llc.as_ref() else { return Ok(None) };
        let name = llc.file_name().map(|n| n.to_string_lossy().replacen("llc", tool, 1));
        Ok(name.map(|n| llc.with_file_name(n)).filter(|p| is_executable(p)))
    };
    let opt = sibling("opt", "OXIDE_OPT")?;
    let llvm_link = sibling("llvm-link", "OXIDE_LLVM_LINK")?;
    Ok((llc, opt, llvm_link))
}

fn llc_major(env: &Env, llc: &Path) -> Option<u32> {
    let out = run_capture(env, Command::new(llc).arg("--version")).ok()?;
    let v = out.lines().find_map(|l| l.trim().strip_prefix("LLVM version "))?;
    v.trim().split('.').next()?.parse().ok()
}

fn cuda_roots(env: &Env) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"].iter().filter_map(|k| env.path(k)).collect();
    roots.push("/usr/local/cuda".into());
    roots
}

fn find_ptxas(env: &Env) -> Option<PathBuf> {
    env.which("ptxas")
        .or_else(|| cuda_roots(env).into_iter().map(|r| r.join("bin/ptxas")).find(|p| is_executable(p)))
        .or_else(|| setup_venv_ptxas(env))
}

/// Where `ci/setup.sh` installs the nvidia-cuda-nvcc wheel (`$OXIDE_VENV`, default
/// `~/.cache/oxide/venv`), so a plain `cargo build` finds ptxas after the setup.
fn setup_venv_ptxas(env: &Env) -> Option<PathBuf> {
    let venv = env.path("OXIDE_VENV").or_else(|| env.path("HOME").map(|h| h.join(".cache/oxide/venv")))?;
    let lib = std::fs::read_dir(venv.join("lib")).ok()?;
    lib.filter_map(|e| e.ok())
        .map(|e| e.path().join("site-packages/nvidia"))
        .flat_map(|nv| ["cu13", "cu12", "cuda_nvcc"].map(|d| nv.join(d).join("bin/ptxas")))
        .find(|p| is_executable(p))
}

/// nvcc for CUDA C++ sources: `OXIDE_NVCC`, else the one next to ptxas (the pinned wheel set
/// of `ci/setup.sh`, or a toolkit's bin), else `NVCC` (cc's variable), else `nvcc` on `PATH`.
pub(crate) fn find_nvcc(env: &Env, ptxas: Option<&Path>) -> Option<PathBuf> {
    env.path("OXIDE_NVCC")
        .or_else(|| ptxas.and_then(|p| p.parent()).map(|d| d.join("nvcc")).filter(|p| is_executable(p)))
        .or_else(|| env.path("NVCC"))
        .or_else(|| env.which("nvcc"))
        .or_else(|| cuda_roots(env).into_iter().map(|r| r.join("bin/nvcc")).find(|p| is_executable(p)))
}

/// clang for CUDA C++ device functions (and libclang's builtin headers): `OXIDE_CLANG`, else
/// `clang-22` (the LLVM of the device rustc), else `clang` on `PATH`.
pub(crate) fn find_clang(env: &Env) -> Option<PathBuf> {
    env.path("OXIDE_CLANG").or_else(|| env.which("clang-22")).or_else(|| env.which("clang"))
}

/// What installs libclang for bindgen (CUDA C++ launchers).
pub const INSTALL_LIBCLANG: &str =
    "apt-get install clang-22 libclang1-22 (bash ci/setup.sh does), or set LIBCLANG_PATH to the directory of libclang.so";

/// What installs nvcc matching ptxas.
pub const INSTALL_NVCC: &str = "bash ci/setup.sh (pins nvidia-cuda-nvcc, nvidia-nvvm, nvidia-cuda-crt and nvidia-cuda-runtime to one release), or install the CUDA toolkit and set OXIDE_NVCC";

fn find_libdevice(env: &Env, ptxas: Option<&Path>) -> Option<PathBuf> {
    let mut roots = cuda_roots(env);
    // ptxas lives in <root>/bin both in the toolkit and in the nvidia-cuda-nvcc wheel.
    if let Some(root) = ptxas.and_then(|p| p.parent()?.parent()) {
        roots.insert(0, root.to_path_buf());
    }
    roots.into_iter().map(|r| r.join("nvvm/libdevice/libdevice.10.bc")).find(|p| p.is_file())
}

/// One line of `cargo oxide doctor`: a component, where it was found, or why not and the fix.
#[derive(Clone, Debug)]
pub struct Check {
    pub component: &'static str,
    /// Where it was found (a path, with a version when known); `None` when missing.
    pub found: Option<String>,
    /// What was looked for / why it is missing, or a note about what was found.
    pub detail: String,
    /// The one command that fixes a miss.
    pub fix: Option<String>,
    /// Kernels cannot be built without it (the others only degrade: no validation, no math, …).
    pub required: bool,
}

/// Everything discovery can tell, also when it fails part way.
#[derive(Clone, Debug)]
pub struct Report {
    pub checks: Vec<Check>,
    /// The toolchain a build would use, when discovery succeeds.
    pub toolchain: Option<Toolchain>,
}

impl Report {
    pub fn check(&self, component: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.component == component)
    }

    /// True when every required component was found.
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.found.is_some() || !c.required)
    }
}

/// Runs discovery step by step, keeping partial results, for `cargo oxide doctor`.
pub(crate) fn doctor(env: &Env) -> Report {
    let mut checks = Vec::new();
    let mut check = |component, found: Option<String>, detail: String, fix: Option<String>, required| {
        checks.push(Check { component, found, detail, fix, required })
    };
    let mut tried = Tried::default();
    let mut config_error = None;
    let found = if disabled(env) {
        tried.looked.push("OXIDE_NO_DEVICE_TOOLCHAIN=1 hides every device rustc".into());
        None
    } else {
        match explicit(env, &mut tried) {
            Ok(rc) => rc.or_else(|| rustup(env, &mut tried)).or_else(|| system(env, &mut tried)),
            Err(e) => {
                config_error = Some(e.message);
                None
            }
        }
    };
    let rc = found.as_ref().or(tried.partial.as_ref());
    match (&found, rc, &config_error) {
        (_, _, Some(msg)) => {
            check("device rustc", None, msg.clone(), Some("fix or unset the variable named above".into()), true)
        }
        (_, Some(rc), _) => check(
            "device rustc",
            Some(format!("{} ({}; cargo {})", rc.rustc.display(), rc.version, rc.cargo.display())),
            format!("{}{}", rc.origin, if rc.nightly { "" } else { ", driven with RUSTC_BOOTSTRAP=1" }),
            None,
            true,
        ),
        (None, None, None) if disabled(env) => {
            check("device rustc", None, tried.looked.join("; "), Some("unset OXIDE_NO_DEVICE_TOOLCHAIN".into()), true)
        }
        (_, None, None) => check(
            "device rustc",
            None,
            format!("looked for: {}", tried.looked.join("; ")),
            Some(format!("{INSTALL_RUSTUP}   (Debian/Ubuntu: {INSTALL_DEBIAN})")),
            true,
        ),
    }
    match (&found, rc) {
        (Some(rc), _) => check(
            "rust-src",
            Some(rc.sysroot.join("lib/rustlib/src/rust/library").display().to_string()),
            String::new(),
            None,
            true,
        ),
        (None, Some(rc)) => {
            let fix = tried.without_src.first().map(|(_, f)| f.clone());
            check("rust-src", None, format!("no library sources under {}", rc.sysroot.display()), fix, true)
        }
        (None, None) => check("rust-src", None, "needs a device rustc first".into(), None, true),
    }
    let tools = rc.map(|rc| llvm_tools(env, rc));
    let llvm_fix = rc
        .and_then(|rc| rc.llvm_major)
        .map(|m| format!("apt-get install llvm-{m}   (or: rustup component add llvm-tools)"));
    let major = rc.and_then(|rc| rc.llvm_major).map(|m| m.to_string()).unwrap_or_else(|| "N".into());
    match &tools {
        Some(Ok((llc, opt, link))) => {
            let tool =
                |name: &'static str,
                 p: &Option<PathBuf>,
                 why: &str,
                 check: &mut dyn FnMut(&'static str, Option<String>, String, Option<String>, bool)| {
                    match p {
                        Some(p) => check(name, Some(p.display().to_string()), String::new(), None, false),
                        None => check(name, None, why.to_string(), llvm_fix.clone(), false),
                    }
                };
            tool(
                "llc",
                llc,
                &format!("no llc of LLVM {major} (OXIDE_LLC, LLC_PATH, CUDA_OXIDE_LLC, llvm-tools, llc-{major} on PATH); rustc emits PTX itself, without shared memory, libdevice or launch bounds"),
                &mut check,
            );
            tool("opt", opt, &format!("no opt-{major} next to llc (or OXIDE_OPT)"), &mut check);
            tool(
                "llvm-link",
                link,
                &format!("no llvm-link-{major} next to llc (or OXIDE_LLVM_LINK); needed to link libdevice"),
                &mut check,
            );
        }
        Some(Err(e)) => {
            check("llc", None, e.message.clone(), Some("fix or unset the variable named above".into()), false);
            check("opt", None, "needs llc first".into(), None, false);
            check("llvm-link", None, "needs llc first".into(), None, false);
        }
        None => {
            for name in ["llc", "opt", "llvm-link"] {
                check(name, None, "not checked: the device rustc's LLVM version picks it".into(), None, false);
            }
        }
    }
    let explicit_ptxas = env.path("OXIDE_PTXAS").map(|p| explicit_tool(env, "OXIDE_PTXAS", p));
    let ptxas = match &explicit_ptxas {
        Some(Ok(p)) => Some(p.clone()),
        Some(Err(_)) => None,
        None => find_ptxas(env),
    };
    match (&ptxas, explicit_ptxas) {
        (_, Some(Err(e))) => check("ptxas", None, e.message, Some(INSTALL_PTXAS.into()), false),
        (Some(p), _) => {
            let version = run_capture(env, Command::new(p).arg("--version")).ok().and_then(|v| v.lines().find(|l| l.contains("release")).or(v.lines().last()).map(|l| l.trim().to_string()));
            check("ptxas", Some(p.display().to_string()), version.unwrap_or_default(), None, false)
        }
        (None, _) => check("ptxas", None, "not in OXIDE_PTXAS, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin: PTX is not validated and no cubins are built".into(), Some(INSTALL_PTXAS.into()), false),
    }
    match env
        .path("OXIDE_LIBDEVICE")
        .map(explicit_libdevice)
        .transpose()
        .map(|p| p.or_else(|| find_libdevice(env, ptxas.as_deref())))
    {
        Ok(Some(p)) => check("libdevice", Some(p.display().to_string()), String::new(), None, false),
        Err(e) => check("libdevice", None, e.message, Some(INSTALL_PTXAS.into()), false),
        Ok(None) => check(
            "libdevice",
            None,
            "no nvvm/libdevice/libdevice.10.bc next to ptxas or under CUDA_HOME: kernels use oxide's own no_std math"
                .into(),
            Some(INSTALL_PTXAS.into()),
            false,
        ),
    }
    match find_libcuda(env) {
        Some(p) => check("libcuda", Some(p.display().to_string()), String::new(), None, false),
        None => check(
            "libcuda",
            None,
            "no libcuda.so.1 in LD_LIBRARY_PATH, the linker cache or the usual library directories: kernels run on the CPU executor".into(),
            Some("install the NVIDIA driver (it ships libcuda); containers need the NVIDIA container toolkit".into()),
            false,
        ),
    }
    // CUDA C++ sources (`Build::cuda_source`) only: nvcc of ptxas's release, and libclang.
    match find_nvcc(env, ptxas.as_deref()) {
        Some(p) => {
            let version = Command::new(&p)
                .arg("--version")
                .output()
                .ok()
                .and_then(|o| {
                    String::from_utf8_lossy(&o.stdout).lines().find(|l| l.contains("release")).map(str::to_string)
                })
                .unwrap_or_default();
            check("nvcc", Some(p.display().to_string()), version, None, false)
        }
        None => check(
            "nvcc",
            None,
            "not in OXIDE_NVCC, next to ptxas, NVCC, PATH or $CUDA_HOME/bin: CUDA C++ sources cannot be built".into(),
            Some(INSTALL_NVCC.into()),
            false,
        ),
    }
    match find_clang(env) {
        Some(p) => check("clang", Some(p.display().to_string()), String::new(), None, false),
        None => check(
            "clang",
            None,
            "no OXIDE_CLANG, clang-22 or clang on PATH: Rust kernels cannot call CUDA C++ device functions".into(),
            Some(INSTALL_LIBCLANG.into()),
            false,
        ),
    }
    match clang_sys::get_library().map(|l| l.path().to_path_buf()).map(Ok).unwrap_or_else(|| {
        clang_sys::load().map(|_| clang_sys::get_library().map(|l| l.path().to_path_buf()).unwrap_or_default())
    }) {
        Ok(p) => check("libclang", Some(p.display().to_string()), String::new(), None, false),
        Err(e) => check(
            "libclang",
            None,
            format!("{e}: the launchers of CUDA C++ sources cannot be generated"),
            Some(INSTALL_LIBCLANG.into()),
            false,
        ),
    }
    let toolchain = if config_error.is_none() && found.is_some() { discover(env).ok() } else { None };
    Report { checks, toolchain }
}

/// The CUDA driver library, found the way the dynamic loader would (without loading it).
fn find_libcuda(env: &Env) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        env.var_os("LD_LIBRARY_PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    if let Some(root) = env.var("OXIDE_LIBCUDA_DIRS") {
        // Tests point this at a sandbox instead of the real system directories.
        dirs.extend(std::env::split_paths(&root));
    } else {
        if let Ok(out) = Command::new("ldconfig").arg("-p").output() {
            let text = String::from_utf8_lossy(&out.stdout);
            if let Some(p) =
                text.lines().find(|l| l.trim_start().starts_with("libcuda.so.1 ")).and_then(|l| l.split("=> ").nth(1))
            {
                return Some(PathBuf::from(p.trim()));
            }
        }
        for d in [
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib/aarch64-linux-gnu",
            "/usr/lib64",
            "/usr/lib",
            "/usr/local/cuda/compat",
            "/usr/lib/wsl/lib",
        ] {
            dirs.push(d.into());
        }
    }
    dirs.into_iter().map(|d| d.join("libcuda.so.1")).find(|p| p.exists())
}

#[cfg(test)]
mod tests {
    //! Discovery against shim tools that record their argv (like cc's tests/support).
    use super::*;
    use std::fs;
    use std::io::Write;

    type TestResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

    /// Writes an executable script from a child process. Written from this process, a test on
    /// another thread could fork while the file is open for writing, and the child's copy of
    /// that descriptor makes exec of the script fail with ETXTBSY ("text file busy").
    fn write_program(path: &Path, script: &str) -> TestResult {
        let mut child = Command::new("sh")
            .args(["-c", "cat > \"$0\" && chmod 755 \"$0\""])
            .arg(path)
            .stdin(std::process::Stdio::piped())
            .spawn()?;
        child.stdin.take().ok_or("a piped stdin")?.write_all(script.as_bytes())?;
        if !child.wait()?.success() {
            return Err(format!("could not write {}", path.display()).into());
        }
        Ok(())
    }

    struct Sandbox {
        dir: tempfile::TempDir,
        env: Env,
    }

    impl Sandbox {
        fn new() -> TestResult<Sandbox> {
            let dir = tempfile::tempdir()?;
            let mut env = Env::default();
            env.isolate();
            env.system_bins = Some(vec![dir.path().join("usr/bin")]);
            env.set("HOME", Some(dir.path().join("home").into()));
            env.set("PATH", Some(dir.path().join("path").into()));
            fs::create_dir_all(dir.path().join("path"))?;
            Ok(Sandbox { dir, env })
        }

        fn path(&self, rel: &str) -> PathBuf {
            self.dir.path().join(rel)
        }

        fn log(&self) -> String {
            fs::read_to_string(self.path("argv.log")).unwrap_or_default()
        }

        /// A shim that appends its name and argv to argv.log and answers like the real tool.
        fn shim(&self, rel: &str, version: &str, sysroot: &Path) -> TestResult<PathBuf> {
            let p = self.path(rel);
            fs::create_dir_all(p.parent().ok_or("a shim path has a parent")?)?;
            let script = format!(
                "#!/bin/sh\necho \"${{0##*/}} $*\" >> {log}\n\
                 case \"$1\" in\n  -vV) printf '{version}\\nhost: x86_64-unknown-linux-gnu\\nLLVM version: 22.1.8\\n' ;;\n  \
                 --print) echo {sysroot} ;;\n  --version) echo 'LLVM version 22.1.8' ;;\nesac\n",
                log = self.path("argv.log").display(),
                sysroot = sysroot.display(),
            );
            write_program(&p, &script)?;
            Ok(p)
        }

        /// A rustc + cargo pair under `root/bin` with sysroot `root`, optionally with rust-src.
        fn toolchain(&self, root: &str, version: &str, rust_src: bool) -> TestResult<(PathBuf, PathBuf)> {
            let sysroot = self.path(root);
            if rust_src {
                let core = sysroot.join("lib/rustlib/src/rust/library/core");
                fs::create_dir_all(&core)?;
                fs::write(core.join("Cargo.toml"), "[package]\nname = \"core\"\n")?;
            }
            let rustc = self.shim(&format!("{root}/bin/rustc"), version, &sysroot)?;
            let cargo = self.shim(&format!("{root}/bin/cargo"), version, &sysroot)?;
            Ok((rustc, cargo))
        }
    }

    #[test]
    fn explicit_variables_win_and_are_probed() -> TestResult {
        let mut sb = Sandbox::new()?;
        sb.toolchain(
            "home/.rustup/toolchains/nightly-x86_64-unknown-linux-gnu",
            "rustc 1.97.0-nightly (abc 2026-11-01)",
            true,
        )?;
        let (rustc, cargo) = sb.toolchain("custom", "rustc 1.96.0 (x 2026-05-25)", true)?;
        sb.env.set("OXIDE_DEVICE_RUSTC", Some(rustc.clone().into()));
        let tc = discover(&sb.env)?;
        assert_eq!(tc.rustc, rustc);
        assert_eq!(tc.cargo, cargo, "cargo next to OXIDE_DEVICE_RUSTC is used");
        assert!(tc.origin.starts_with("OXIDE_DEVICE_RUSTC="));
        assert!(tc.bootstrap, "a stable rustc needs RUSTC_BOOTSTRAP");
        assert_eq!(tc.llvm_major, Some(22));
        let log = sb.log();
        assert!(log.contains("rustc -vV") && log.contains("rustc --print sysroot"), "{log}");
        Ok(())
    }

    #[test]
    fn rustup_nightly_with_rust_src_is_preferred() -> TestResult {
        let sb = Sandbox::new()?;
        sb.toolchain("home/.rustup/toolchains/stable-x86_64-unknown-linux-gnu", "rustc 1.95.0 (x 2026-04-14)", true)?;
        sb.toolchain(
            "home/.rustup/toolchains/nightly-x86_64-unknown-linux-gnu",
            "rustc 1.97.0-nightly (abc 2026-11-01)",
            true,
        )?;
        sb.toolchain("usr", "rustc 1.96.0 (x 2026-05-25)", true)?;
        let tc = discover(&sb.env)?;
        assert!(tc.rustc.to_string_lossy().contains("nightly"), "{}", tc.rustc.display());
        assert!(!tc.bootstrap);
        assert_eq!(tc.origin, "rustup toolchain nightly-x86_64-unknown-linux-gnu");
        Ok(())
    }

    #[test]
    fn system_rustc_with_library_sources_and_matching_llc() -> TestResult {
        let sb = Sandbox::new()?;
        let (rustc, _) = sb.toolchain("usr", "rustc 1.96.0 (x 2026-05-25) (built from a source tarball)", true)?;
        let llc = sb.shim("path/llc-22", "", Path::new("/"))?;
        let opt = sb.shim("path/opt-22", "", Path::new("/"))?;
        let link = sb.shim("path/llvm-link-22", "", Path::new("/"))?;
        let tc = discover(&sb.env)?;
        assert_eq!(tc.rustc, rustc);
        assert!(tc.bootstrap);
        assert_eq!(tc.llc.as_deref(), Some(llc.as_path()));
        assert_eq!(tc.opt.as_deref(), Some(opt.as_path()));
        assert_eq!(tc.llvm_link.as_deref(), Some(link.as_path()));
        Ok(())
    }

    #[test]
    fn llc_overrides_in_order() -> TestResult {
        let mut sb = Sandbox::new()?;
        sb.toolchain("usr", "rustc 1.96.0 (x 2026-05-25)", true)?;
        sb.shim("path/llc-22", "", Path::new("/"))?;
        let mine = sb.shim("tools/my-llc", "", Path::new("/"))?;
        let theirs = sb.shim("tools/their-llc", "", Path::new("/"))?;
        sb.env.set("CUDA_OXIDE_LLC", Some(theirs.clone().into()));
        assert_eq!(discover(&sb.env)?.llc, Some(theirs.clone()));
        sb.env.set("LLC_PATH", Some(mine.clone().into()));
        assert_eq!(discover(&sb.env)?.llc, Some(mine.clone()));
        sb.env.set("OXIDE_LLC", Some(sb.path("nope/llc").into()));
        let Err(err) = discover(&sb.env) else { return Err("discovery should fail".into()) };
        assert_eq!(err.kind(), ErrorKind::Config);
        assert!(err.message.contains("OXIDE_LLC="), "{err}");
        Ok(())
    }

    #[test]
    fn llc_of_another_llvm_major_is_not_used() -> TestResult {
        let sb = Sandbox::new()?;
        sb.toolchain("usr", "rustc 1.96.0 (x 2026-05-25)", true)?;
        sb.shim("path/llc-19", "", Path::new("/"))?;
        let tc = discover(&sb.env)?;
        assert_eq!(tc.llc, None, "llc-19 does not match rustc's LLVM 22");
        Ok(())
    }

    #[test]
    fn ptxas_on_path_and_libdevice_next_to_it() -> TestResult {
        let sb = Sandbox::new()?;
        sb.toolchain("usr", "rustc 1.96.0 (x 2026-05-25)", true)?;
        let ptxas = sb.shim("cuda/bin/ptxas", "", Path::new("/"))?;
        let lib = sb.path("cuda/nvvm/libdevice/libdevice.10.bc");
        fs::create_dir_all(lib.parent().ok_or("libdevice has a parent")?)?;
        fs::write(&lib, b"BC")?;
        let mut env = sb.env.clone();
        env.set("PATH", Some(ptxas.parent().ok_or("ptxas has a parent")?.as_os_str().to_owned()));
        let tc = discover(&env)?;
        assert_eq!(tc.ptxas.as_deref(), Some(ptxas.as_path()));
        assert_eq!(tc.libdevice.as_deref(), Some(lib.as_path()));
        Ok(())
    }

    #[test]
    fn nothing_found_names_what_was_looked_for_and_the_install_command() -> TestResult {
        let sb = Sandbox::new()?;
        let Err(err) = discover(&sb.env) else { return Err("discovery should fail".into()) };
        assert_eq!(err.kind(), ErrorKind::ToolchainNotFound);
        let m = err.to_string();
        assert!(m.contains("OXIDE_DEVICE_RUSTC"), "{m}");
        assert!(m.contains("rustc: not found"), "{m}");
        assert!(m.contains(INSTALL_RUSTUP) && m.contains(INSTALL_DEBIAN), "{m}");
        Ok(())
    }

    #[test]
    fn toolchain_without_rust_src_gets_the_component_fix() -> TestResult {
        let sb = Sandbox::new()?;
        sb.toolchain(
            "home/.rustup/toolchains/nightly-x86_64-unknown-linux-gnu",
            "rustc 1.97.0-nightly (abc 2026-11-01)",
            false,
        )?;
        let Err(err) = discover(&sb.env) else { return Err("discovery should fail".into()) };
        assert_eq!(err.kind(), ErrorKind::MissingRustSrc);
        assert!(
            err.to_string().contains("rustup component add rust-src --toolchain nightly-x86_64-unknown-linux-gnu"),
            "{err}"
        );
        Ok(())
    }

    #[test]
    fn an_explicit_rustc_without_rust_src_is_an_error_not_a_fallback() -> TestResult {
        let mut sb = Sandbox::new()?;
        // A usable system toolchain that discovery would otherwise fall back to.
        sb.toolchain("usr", "rustc 1.96.0 (x 2026-05-25)", true)?;
        let (rustc, _) = sb.toolchain(
            "home/.rustup/toolchains/nightly-x86_64-unknown-linux-gnu",
            "rustc 1.97.0-nightly (abc 2026-11-01)",
            false,
        )?;
        sb.env.set("OXIDE_DEVICE_RUSTC", Some(rustc.clone().into()));
        let Err(err) = discover(&sb.env) else { return Err("an OXIDE_DEVICE_RUSTC without rust-src is used".into()) };
        assert_eq!(err.kind(), ErrorKind::MissingRustSrc);
        let m = err.to_string();
        assert!(
            m.starts_with(&format!("OXIDE_DEVICE_RUSTC={} has no standard library sources", rustc.display())),
            "{m}"
        );
        assert!(m.contains("does not fall back to another rustc"), "{m}");
        assert!(m.contains("rustup component add rust-src --toolchain nightly-x86_64-unknown-linux-gnu"), "{m}");

        // Not a rustup toolchain: the fix says what is missing without a rustup command.
        let (custom, _) = sb.toolchain("custom", "rustc 1.96.0 (x 2026-05-25)", false)?;
        sb.env.set("OXIDE_DEVICE_RUSTC", Some(custom.into()));
        let Err(err) = discover(&sb.env) else { return Err("an OXIDE_DEVICE_RUSTC without rust-src is used".into()) };
        assert!(
            err.to_string().contains(&format!(
                "{}/lib/rustlib/src/rust/library/core/Cargo.toml does not exist",
                sb.path("custom").display()
            )),
            "{err}"
        );

        // doctor shows the same error on the device rustc line and no toolchain.
        let report = doctor(&sb.env);
        let rustc_check = report.check("device rustc").ok_or("a device rustc line")?;
        assert!(rustc_check.found.is_none() && rustc_check.detail.contains("does not fall back"), "{rustc_check:?}");
        assert!(report.toolchain.is_none());
        Ok(())
    }

    #[test]
    fn explicit_llvm_tools_ptxas_and_libdevice_are_checked_up_front() -> TestResult {
        let mut sb = Sandbox::new()?;
        sb.toolchain("usr", "rustc 1.96.0 (x 2026-05-25)", true)?;
        let failing = sb.path("tools/broken");
        fs::create_dir_all(sb.path("tools"))?;
        write_program(&failing, "#!/bin/sh\necho 'cannot open shared object' >&2\nexit 127\n")?;
        let plain = sb.path("tools/plain");
        fs::write(&plain, "not a program")?;
        let err_for = |var: &str, value: &Path| -> TestResult<Error> {
            let mut env = sb.env.clone();
            env.set(var, Some(value.into()));
            match discover(&env) {
                Ok(_) => Err(format!("{var}={} was accepted", value.display()).into()),
                Err(e) => Ok(e),
            }
        };
        for var in ["OXIDE_OPT", "OXIDE_LLVM_LINK", "OXIDE_LLC", "OXIDE_PTXAS"] {
            let e = err_for(var, &sb.path("nope"))?;
            assert_eq!(e.kind(), ErrorKind::Config, "{e}");
            assert!(e.message.starts_with(&format!("{var}={} does not exist", sb.path("nope").display())), "{e}");
            let e = err_for(var, &plain)?;
            assert!(e.message.starts_with(&format!("{var}={} is not an executable file", plain.display())), "{e}");
            let e = err_for(var, &failing)?;
            assert!(e.message.starts_with(&format!("{var}={} does not run", failing.display())), "{e}");
            assert!(e.message.contains("cannot open shared object"), "the tool's own message: {e}");
        }
        let e = err_for("OXIDE_LIBDEVICE", &sb.path("nope.bc"))?;
        assert!(
            e.message.starts_with(&format!("OXIDE_LIBDEVICE={} does not exist", sb.path("nope.bc").display())),
            "{e}"
        );
        let e = err_for("OXIDE_LIBDEVICE", &plain)?;
        assert!(e.message.starts_with(&format!("OXIDE_LIBDEVICE={} is not LLVM bitcode", plain.display())), "{e}");

        // Working ones are used as given.
        let opt = sb.shim("tools/my-opt", "", Path::new("/"))?;
        let bc = sb.path("tools/libdevice.10.bc");
        fs::write(&bc, b"BC\xC0\xDE rest of the module")?;
        sb.env.set("OXIDE_OPT", Some(opt.clone().into()));
        sb.env.set("OXIDE_LIBDEVICE", Some(bc.clone().into()));
        let tc = discover(&sb.env)?;
        assert_eq!((tc.opt, tc.libdevice), (Some(opt), Some(bc)));
        Ok(())
    }

    #[test]
    fn system_rustc_without_sources_gets_the_debian_fix() -> TestResult {
        let sb = Sandbox::new()?;
        sb.toolchain("usr", "rustc 1.96.0 (x 2026-05-25)", false)?;
        let Err(err) = discover(&sb.env) else { return Err("discovery should fail".into()) };
        assert_eq!(err.kind(), ErrorKind::MissingRustSrc);
        assert!(err.to_string().contains("apt-get install rust-web-src"), "{err}");
        Ok(())
    }
}
