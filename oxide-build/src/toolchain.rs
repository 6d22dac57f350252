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
}

pub(crate) fn discover(env: &Env) -> Result<Toolchain, Error> {
    let mut tried = Tried::default();
    let found = explicit(env, &mut tried)?
        .or_else(|| rustup(env, &mut tried))
        .or_else(|| system(env, &mut tried));
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
    let ptxas = env.path("OXIDE_PTXAS").or_else(|| find_ptxas(env));
    if let Some(p) = &ptxas {
        if !is_executable(p) {
            return Err(Error::new(ErrorKind::Config, format!("OXIDE_PTXAS={} is not an executable file", p.display())));
        }
    }
    let libdevice = env.path("OXIDE_LIBDEVICE").or_else(|| find_libdevice(env, ptxas.as_deref()));
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
                Error::new(ErrorKind::Config, format!("OXIDE_DEVICE_RUSTC={} is set but no cargo is next to it; set OXIDE_DEVICE_CARGO too", r.display()))
            })?;
            (r, c)
        }
        (None, Some(c)) => {
            let r = sibling(&c, "rustc").ok_or_else(|| {
                Error::new(ErrorKind::Config, format!("OXIDE_DEVICE_CARGO={} is set but no rustc is next to it; set OXIDE_DEVICE_RUSTC too", c.display()))
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
        tried.looked.push(format!("{origin}: no rust-src under {}", rc.sysroot.display()));
        tried.without_src.push((origin, "install the rust-src component for that toolchain".into()));
        return Ok(None);
    }
    Ok(Some(rc))
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
            tried.without_src.push((format!("rustup toolchain `{name}`"), format!("rustup component add rust-src --toolchain {name}")));
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
    let mut candidates: Vec<PathBuf> = vec!["/usr/bin/rustc".into(), "/usr/local/bin/rustc".into()];
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
    let llvm_major = vv
        .lines()
        .find_map(|l| l.strip_prefix("LLVM version:"))
        .and_then(|v| v.trim().split('.').next()?.parse().ok());
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
    let out = cmd
        .output()
        .map_err(|e| Error::new(ErrorKind::ToolExec, format!("failed to run `{}`: {e}", crate::error::command_line(cmd))))?;
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
        Some((_, p)) if is_executable(&p) => Some(p),
        Some((var, p)) => return Err(Error::new(ErrorKind::Config, format!("{var}={} is not an executable file", p.display()))),
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
                    .or_else(|| Some(PathBuf::from(format!("/usr/lib/llvm-{m}/bin/llc"))).filter(|p| is_executable(p)))
                    .or_else(|| env.which("llc").filter(|p| llc_major(env, p) == Some(m)))
            })
        }
    };
    // opt and llvm-link sit next to llc with the same suffix (`llc-22` → `opt-22`).
    let sibling = |tool: &str, var: &str| -> Option<PathBuf> {
        if let Some(p) = env.path(var) {
            return Some(p);
        }
        let llc = llc.as_ref()?;
        let name = llc.file_name()?.to_string_lossy().replacen("llc", tool, 1);
        Some(llc.with_file_name(name)).filter(|p| is_executable(p))
    };
    let opt = sibling("opt", "OXIDE_OPT");
    let llvm_link = sibling("llvm-link", "OXIDE_LLVM_LINK");
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
    env.which("ptxas").or_else(|| cuda_roots(env).into_iter().map(|r| r.join("bin/ptxas")).find(|p| is_executable(p)))
}

fn find_libdevice(env: &Env, ptxas: Option<&Path>) -> Option<PathBuf> {
    let mut roots = cuda_roots(env);
    // ptxas lives in <root>/bin both in the toolkit and in the nvidia-cuda-nvcc wheel.
    if let Some(root) = ptxas.and_then(|p| p.parent()?.parent()) {
        roots.insert(0, root.to_path_buf());
    }
    roots.into_iter().map(|r| r.join("nvvm/libdevice/libdevice.10.bc")).find(|p| p.is_file())
}
