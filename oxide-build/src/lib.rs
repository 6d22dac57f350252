//! oxide-build: compile a crate's kernels module to PTX from `build.rs`.
//!
//! ```no_run
//! // build.rs
//! fn main() {
//!     oxide_build::kernels("src/kernels.rs").arch("sm_90").compile();
//! }
//! ```
//!
//! The pipeline, one stage per file, data flowing one way:
//! [`toolchain`] (find the device rustc/cargo/llc/ptxas) → `device_crate` (a generated
//! `no_std` crate that includes the module by `#[path]`) → `device_build` (cargo
//! `-Zbuild-std=core`, LLVM IR of the whole linked module) → `ir` (internalize, shared memory,
//! launch bounds, convergent) → `codegen` (libdevice, opt, llc → PTX) → `ptxas` (validation,
//! registers/spills) → [`manifest`] (kernels, parameter layouts, source hash).
//! With [`Build::prebuilt`], a machine without the device toolchain takes the PTX and cubins
//! from a committed directory instead ([`prebuilt`]), as long as the sources still match it.
//!
//! The PTX lands in `$OUT_DIR/oxide/<module>.ptx`; the build script sets `OXIDE_PTX` to that
//! path for the crate, and `#[kernel]`'s launchers embed it with `include_str!`.

// The crate doc shows a whole build.rs, `fn main` included.
#![allow(clippy::needless_doctest_main)]

mod codegen;
mod device_build;
mod device_crate;
mod env;
mod error;
mod ir;
mod llc_choice;
pub mod manifest;
pub mod prebuilt;
mod ptxas;
pub mod toolchain;

pub use error::{Error, ErrorKind};
pub use manifest::{KernelInfo, ManifestFile};
pub use ptxas::KernelResources;
pub use toolchain::Toolchain;

use env::Env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Starts a build of the kernels module at `path` (relative to the crate's manifest directory).
pub fn kernels(path: impl AsRef<Path>) -> Build {
    let mut b = Build::new();
    b.source(path);
    b
}

/// A kernels-module build, configured like `cc::Build`.
#[derive(Clone, Debug)]
pub struct Build {
    source: Option<PathBuf>,
    archs: Vec<String>,
    opt_level: u8,
    fmad: bool,
    panic_messages: Option<bool>,
    cfgs: Vec<String>,
    dependencies: Vec<(String, String)>,
    edition: Option<String>,
    out_dir: Option<PathBuf>,
    target_dir: Option<PathBuf>,
    manifest_dir: Option<PathBuf>,
    package: Option<String>,
    oxide_rt: Option<PathBuf>,
    prebuilt: Option<PathBuf>,
    cargo_metadata: bool,
    env: Env,
}

/// What a successful build produced.
#[derive(Clone, Debug)]
pub struct Output {
    pub ptx: PathBuf,
    pub manifest: PathBuf,
    /// `(arch, path)` of each cubin ptxas wrote (or the prebuilt directory supplied).
    pub cubins: Vec<(String, PathBuf)>,
    /// The post-processed LLVM IR that llc compiled (none when the PTX came prebuilt).
    pub ir: Option<PathBuf>,
    pub kernels: Vec<KernelInfo>,
    /// Every file the device build read (the kernels module and what it includes).
    pub sources: Vec<PathBuf>,
    /// The hash of the sources that prebuilt kernels are checked against.
    pub source_hash: String,
    /// The device toolchain used; `None` when the kernels came from a prebuilt directory.
    pub toolchain: Option<Toolchain>,
    /// The prebuilt directory the PTX and cubins were taken from, if any.
    pub prebuilt: Option<PathBuf>,
    /// Every pipeline stage that ran, with its commands, inputs, outputs and time.
    pub stages: Vec<Stage>,
    /// (stage, time) for each pipeline stage that ran.
    pub timings: Vec<(&'static str, Duration)>,
    /// Each external command that ran, as a shell line.
    pub commands: Vec<String>,
    /// Whether ptxas validated the PTX.
    pub validated: bool,
}

/// One pipeline stage as `OXIDE_TRACE=1` and `cargo oxide build --trace` show it.
#[derive(Clone, Debug)]
pub struct Stage {
    pub name: &'static str,
    pub time: Duration,
    /// The external commands it ran, as shell lines.
    pub commands: Vec<String>,
    pub inputs: Vec<PathBuf>,
    pub outputs: Vec<PathBuf>,
}

impl Default for Build {
    fn default() -> Self {
        Self::new()
    }
}

impl Build {
    pub fn new() -> Build {
        let mut env = Env::default();
        env.emit_rerun = true;
        Build {
            source: None,
            archs: Vec::new(),
            opt_level: 3,
            fmad: true,
            panic_messages: None,
            cfgs: Vec::new(),
            dependencies: Vec::new(),
            edition: None,
            out_dir: None,
            target_dir: None,
            manifest_dir: None,
            package: None,
            oxide_rt: None,
            prebuilt: None,
            cargo_metadata: true,
            env,
        }
    }

    /// The kernels module, relative to the crate's manifest directory.
    pub fn source(&mut self, path: impl AsRef<Path>) -> &mut Build {
        self.source = Some(path.as_ref().to_path_buf());
        self
    }

    /// Adds a target architecture (`sm_75`, `sm_80`, `sm_90`, …). The PTX is generated for the
    /// lowest one (the driver JIT-compiles it forward) and ptxas validates it for each.
    /// Default: `sm_75` (Turing, the oldest GPU CUDA 13 supports).
    pub fn arch(&mut self, arch: &str) -> &mut Build {
        self.archs.push(arch.to_string());
        self
    }

    /// LLVM optimisation level for the kernels, 0–3 (default 3).
    pub fn opt_level(&mut self, level: u8) -> &mut Build {
        self.opt_level = level.min(3);
        self
    }

    /// Whether `a * b + c` may be contracted into one `fma` (one rounding), like nvcc's default
    /// `--fmad=true` (default true). With false, the GPU rounds like the CPU: product, then sum.
    pub fn fmad(&mut self, on: bool) -> &mut Build {
        self.fmad = on;
        self
    }

    /// Whether a panicking kernel formats its message on the device for the host's
    /// `Error::KernelPanic` (the location is always recorded). Formatting links `core::fmt`
    /// into the module, which makes ptxas reserve registers for it in every kernel, so the
    /// default is on for debug builds and off for release builds (cargo's `PROFILE`).
    pub fn panic_messages(&mut self, on: bool) -> &mut Build {
        self.panic_messages = Some(on);
        self
    }

    /// Passes `--cfg <cfg>` to the device compilation of the kernels module only
    /// (e.g. `"fast_math"` or `feature="fast"`).
    pub fn cfg(&mut self, cfg: &str) -> &mut Build {
        self.cfgs.push(cfg.to_string());
        self
    }

    /// A `no_std` dependency of the kernels module on the device, as a Cargo.toml entry:
    /// `.device_dependency("libm", "\"0.2\"")` or `.device_dependency("shared", "{ path = \"../shared\" }")`.
    /// Relative paths are resolved against the crate's manifest directory.
    pub fn device_dependency(&mut self, name: &str, toml_value: &str) -> &mut Build {
        self.dependencies.push((name.to_string(), toml_value.to_string()));
        self
    }

    /// Rust edition of the kernels module (default: the crate's, read from its Cargo.toml).
    pub fn edition(&mut self, edition: &str) -> &mut Build {
        self.edition = Some(edition.to_string());
        self
    }

    /// Where the PTX and manifest go (default: `$OUT_DIR`).
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The device build's cargo target directory, shared by all crates of a workspace so
    /// `core` is built once (default: `OXIDE_TARGET_DIR`, else `<target>/oxide-device`).
    pub fn target_dir(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.target_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Whether to print `cargo:` lines (default true; false when used outside build.rs).
    pub fn cargo_metadata(&mut self, on: bool) -> &mut Build {
        self.cargo_metadata = on;
        self.env.emit_rerun = on;
        self
    }

    /// The crate's manifest directory (default: `CARGO_MANIFEST_DIR`).
    pub fn manifest_dir(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.manifest_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The host package name (default: `CARGO_PKG_NAME`).
    pub fn package(&mut self, name: &str) -> &mut Build {
        self.package = Some(name.to_string());
        self
    }

    /// oxide-rt's source directory (default: `DEP_OXIDE_RT_ROOT`, set because the crate
    /// depends on oxide-rt).
    pub fn oxide_rt_dir(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.oxide_rt = Some(dir.as_ref().to_path_buf());
        self
    }

    /// A directory of prebuilt kernels (relative to the manifest directory), written and refreshed
    /// by `cargo oxide build`, used when no device toolchain is found (or when
    /// `OXIDE_PREFER_PREBUILT=1`/`OXIDE_FORCE_PREBUILT=1`), provided every kernel source still
    /// hashes as recorded; otherwise the build fails naming the changed files and the command that
    /// refreshes the directory. With a toolchain the kernels are built and a stale directory only
    /// warns.
    pub fn prebuilt(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.prebuilt = Some(dir.as_ref().to_path_buf());
        self
    }

    /// What device-toolchain discovery finds, component by component, with fixes for misses
    /// (`cargo oxide doctor`). Honours the same variables and overrides as a build.
    pub fn doctor(&self) -> toolchain::Report {
        toolchain::doctor(&self.env)
    }

    /// Overrides an environment variable for this build only (`None` unsets it).
    #[doc(hidden)]
    pub fn env_override(&mut self, key: &str, value: Option<&str>) -> &mut Build {
        self.env.set(key, value.map(OsString::from));
        self
    }

    /// Directories searched for a distribution rustc (default `/usr/bin`, `/usr/local/bin`).
    #[doc(hidden)]
    pub fn system_bins(&mut self, dirs: &[&Path]) -> &mut Build {
        self.env.system_bins = Some(dirs.iter().map(|d| d.to_path_buf()).collect());
        self
    }

    /// Ignores the process environment except for overrides (tests).
    #[doc(hidden)]
    pub fn isolated_env(&mut self) -> &mut Build {
        self.env.isolate();
        self
    }

    /// Runs the build; on failure prints `error occurred in oxide-build: …` and exits 1,
    /// like `cc::Build::compile`. The `cargo:rerun-if-env-changed` lines are printed only on
    /// success: cargo shows a failed build script's whole stdout, and reruns it anyway.
    pub fn compile(&self) -> Output {
        self.env.buffer_rerun();
        let result = self.try_compile();
        self.env.flush_rerun(result.is_ok());
        match result {
            Ok(out) => out,
            Err(e) => {
                eprintln!("\n\nerror occurred in oxide-build: {e}\n\n");
                std::process::exit(1);
            }
        }
    }

    /// Runs the build and returns what it produced, or an error naming the cause and the fix.
    pub fn try_compile(&self) -> Result<Output, Error> {
        let mut rec = Recorder {
            trace: self.env.var("OXIDE_TRACE").is_some_and(|v| v != "0") && self.cargo_metadata,
            stages: Vec::new(),
        };
        let config = |msg: String| Error::new(ErrorKind::Config, msg);
        let manifest_dir = match &self.manifest_dir {
            Some(d) => d.clone(),
            None => self.env.path("CARGO_MANIFEST_DIR").ok_or_else(|| {
                config(
                    "CARGO_MANIFEST_DIR is not set; run oxide-build from a build script or call .manifest_dir(..)"
                        .into(),
                )
            })?,
        };
        let rel = self
            .source
            .clone()
            .ok_or_else(|| config("no kernels module given; use oxide_build::kernels(\"src/kernels.rs\")".into()))?;
        let source = manifest_dir.join(&rel);
        if !source.is_file() {
            return Err(config(format!(
                "the kernels module {} does not exist (resolved to {})",
                rel.display(),
                source.display()
            )));
        }
        // `src/kernels.rs` → module `kernels`; `src/kernels/mod.rs` → `kernels` too.
        let (src_dir, module) = if source.file_name().is_some_and(|n| n == "mod.rs") {
            let dir = source.parent().unwrap_or(Path::new("."));
            (
                dir.parent().unwrap_or(Path::new(".")).to_path_buf(),
                dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            )
        } else {
            let stem = source.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            (source.parent().unwrap_or(Path::new(".")).to_path_buf(), stem)
        };
        if module.is_empty()
            || !module.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || module.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(config(format!(
                "the kernels module file {} must be named like a Rust module (e.g. src/kernels.rs)",
                rel.display()
            )));
        }
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => self.env.path("OUT_DIR").ok_or_else(|| {
                config("OUT_DIR is not set; run oxide-build from a build script or call .out_dir(..)".into())
            })?,
        };
        let package =
            self.package.clone().or_else(|| self.env.var("CARGO_PKG_NAME")).unwrap_or_else(|| "kernels".into());
        let archs = if self.archs.is_empty() { vec!["sm_75".to_string()] } else { self.archs.clone() };
        for a in &archs {
            if !a
                .strip_prefix("sm_")
                .is_some_and(|n| n.len() >= 2 && n.trim_end_matches('a').chars().all(|c| c.is_ascii_digit()))
            {
                return Err(config(format!("`{a}` is not a CUDA architecture; use e.g. .arch(\"sm_90\")")));
            }
        }
        let lowest = archs
            .iter()
            .min_by_key(|a| a.trim_start_matches("sm_").trim_end_matches('a').parse::<u32>().unwrap_or(0))
            .cloned()
            .unwrap_or_default();
        let source_rel = manifest::relative(&source, &manifest_dir);

        // Prebuilt kernels: forced, or the fallback when no device toolchain is here.
        let prebuilt_dir = self.prebuilt.as_ref().map(|d| manifest_dir.join(d));
        let on = |k: &str| self.env.var(k).is_some_and(|v| v != "0");
        let prebuilt_request = |dir: &Path, reason: &str| {
            self.use_prebuilt(
                &prebuilt::Request {
                    dir,
                    manifest_dir: &manifest_dir,
                    module: &module,
                    source: &source_rel,
                    archs: &archs,
                    out_dir: &out_dir,
                    reason,
                },
                rec.trace,
            )
        };
        if let Some(dir) = &prebuilt_dir {
            for var in ["OXIDE_FORCE_PREBUILT", "OXIDE_PREFER_PREBUILT"] {
                if on(var) {
                    return prebuilt_request(dir, &format!("{var}=1 is set"));
                }
            }
        }

        let t = Instant::now();
        let tc = match toolchain::discover(&self.env) {
            Ok(tc) => tc,
            Err(e)
                if matches!(e.kind, ErrorKind::ToolchainNotFound | ErrorKind::MissingRustSrc)
                    && prebuilt_dir.is_some() =>
            {
                let reason = e.message.lines().next().unwrap_or_default().trim_end_matches(':').to_string();
                return prebuilt_request(prebuilt_dir.as_deref().unwrap_or(Path::new(".")), &reason);
            }
            Err(e) => return Err(e),
        };
        rec.stage("discover toolchain", t, vec![], vec![], vec![tc.rustc.clone()]);

        let oxide_rt = match &self.oxide_rt {
            Some(d) => d.clone(),
            None => self.env.path("DEP_OXIDE_RT_ROOT").ok_or_else(|| config(
                "oxide-rt's sources were not found (DEP_OXIDE_RT_ROOT is unset); add `oxide-rt` to this crate's [dependencies]".into(),
            ))?,
        };
        let target_dir = match (self.target_dir.clone(), self.env.path("OXIDE_TARGET_DIR")) {
            (Some(d), _) | (None, Some(d)) => d,
            // OUT_DIR = <target>[/<triple>]/<profile>/build/<pkg>-<hash>/out
            (None, None) => out_dir
                .ancestors()
                .nth(4)
                .map(|t| t.join("oxide-device"))
                .unwrap_or_else(|| out_dir.join("oxide-device")),
        };
        let dependencies: Vec<(String, String)> =
            self.dependencies.iter().map(|(n, v)| (n.clone(), absolutize_paths(v, &manifest_dir))).collect();
        let edition = self.edition.clone().unwrap_or_else(|| read_edition(&manifest_dir));
        let lockfile = manifest_dir.ancestors().map(|d| d.join("Cargo.lock")).find(|p| p.is_file());

        let panic_messages =
            self.panic_messages.unwrap_or_else(|| self.env.var("PROFILE").as_deref() != Some("release"));
        let t = Instant::now();
        let krate = device_crate::generate(&device_crate::Spec {
            dir: target_dir.join("crates").join(format!("{}-{module}", device_crate::sanitize(&package))),
            host_package: &package,
            module_name: &module,
            src_dir: &src_dir,
            edition: &edition,
            oxide_rt: &oxide_rt,
            dependencies: &dependencies,
            lockfile: lockfile.as_deref(),
            panic_messages,
        })?;
        let built = device_build::run(
            &tc,
            &self.env,
            &krate,
            &target_dir,
            &device_build::Options {
                arch: &lowest,
                opt_level: self.opt_level,
                cfgs: &self.cfgs,
                emit_asm: tc.llc.is_none(),
                no_libdevice: tc.libdevice.is_none(),
                kernels_file: &source,
                module: &module,
            },
        )?;
        let mut outputs = vec![built.ir.clone()];
        outputs.extend(built.asm.clone());
        rec.stage(
            "device build (cargo + rustc)",
            t,
            vec![built.command.clone()],
            vec![source.clone(), krate.dir.join("lib.rs")],
            outputs,
        );

        let t = Instant::now();
        let raw_ir =
            std::fs::read_to_string(&built.ir).map_err(|e| Error::io(format!("reading {}", built.ir.display()), e))?;
        let mut processed =
            ir::process(&raw_ir).map_err(|e| Error::new(ErrorKind::Ir, format!("kernels module `{module}`: {e}")))?;
        if !panic_messages {
            processed.ir = ir::inline_panic_paths(&processed.ir);
        }
        if processed.kernels.is_empty() && self.cargo_metadata {
            println!("cargo:warning=oxide-build: {} defines no #[kernel] functions", rel.display());
        }
        let work = out_dir.join("oxide").join("work");
        std::fs::create_dir_all(&work).map_err(|e| Error::io(format!("creating {}", work.display()), e))?;
        let ir_path = work.join(format!("{module}.ll"));
        std::fs::write(&ir_path, &processed.ir).map_err(|e| Error::io(format!("writing {}", ir_path.display()), e))?;
        rec.stage("IR post-processing", t, vec![], vec![built.ir.clone()], vec![ir_path.clone()]);

        let t = Instant::now();
        let dir = out_dir.join("oxide");
        let ptx_path = dir.join(format!("{module}.ptx"));
        let mut llc_commands = Vec::new();
        let ptx_text = if tc.llc.is_some() {
            let (ptx, cmds) = codegen::ptx(
                &tc,
                &codegen::Input {
                    module: &module,
                    ir: &ir_path,
                    kernels: &processed.kernels,
                    needs_libdevice: processed.needs_libdevice,
                    unroll_private_loops: processed.unroll_private_loops,
                    counted_exits: processed.counted_exits,
                    arch: &lowest,
                    archs: &archs,
                    choose_flags: !panic_messages,
                    opt_level: self.opt_level,
                    fmad: self.fmad,
                    work_dir: &work,
                },
            )?;
            llc_commands = cmds;
            ptx
        } else {
            let needs = [
                (!processed.shared_statics.is_empty()).then_some("shared memory"),
                processed.needs_libdevice.then_some("libdevice math"),
                processed.meta.iter().any(|m| m.name.starts_with("__oxide_launch_bounds_")).then_some("launch bounds"),
                processed.meta.iter().any(|m| m.name.starts_with("__oxide_block_")).then_some("a required block shape"),
            ];
            let needs: Vec<&str> = needs.into_iter().flatten().collect();
            if !needs.is_empty() {
                return Err(Error::new(
                    ErrorKind::Llc,
                    format!(
                        "kernels module `{module}` uses {} which needs LLVM's llc {} next to the device rustc, and none was found.\n  \
                         looked for: OXIDE_LLC, LLC_PATH, CUDA_OXIDE_LLC, the toolchain's llvm-tools, llc-{} on PATH\n  fix: {} (or {})",
                        needs.join(", "),
                        tc.llvm_major.map(|m| m.to_string()).unwrap_or_default(),
                        tc.llvm_major.map(|m| m.to_string()).unwrap_or_else(|| "N".into()),
                        toolchain::INSTALL_DEBIAN,
                        "rustup component add llvm-tools"
                    ),
                ));
            }
            let asm = built.asm.as_ref().ok_or_else(|| Error::new(ErrorKind::Llc, "rustc wrote no PTX"))?;
            if self.cargo_metadata {
                println!(
                    "cargo:warning=oxide-build: no llc matching rustc's LLVM found; using the PTX rustc emitted itself"
                );
            }
            std::fs::read_to_string(asm).map_err(|e| Error::io(format!("reading {}", asm.display()), e))?
        };
        device_crate::write_if_changed(&ptx_path, &ptx_text)?;
        let mut llc_inputs = vec![ir_path.clone()];
        llc_inputs.extend(tc.libdevice.clone().filter(|_| processed.needs_libdevice));
        rec.stage("llc", t, llc_commands, llc_inputs, vec![ptx_path.clone()]);
        let mut kernels = manifest::parse_entries(&ptx_text);

        let t = Instant::now();
        let mut validated = false;
        let mut cubins = Vec::new();
        let mut ptxas_commands = Vec::new();
        if let Some(ptxas) = &tc.ptxas {
            for arch in &archs {
                let cubin = dir.join(format!("{module}.{arch}.cubin"));
                let report = ptxas::validate(ptxas, &ptx_path, arch, &module, &cubin)?;
                cubins.push((arch.clone(), cubin));
                ptxas_commands.push(report.command);
                for k in kernels.iter_mut() {
                    if let Some(r) = report.resources.get(&k.name) {
                        if (r.spill_stores > 0 || r.spill_loads > 0) && self.cargo_metadata {
                            println!(
                                "cargo:warning=oxide-build: kernel `{}` spills registers on {arch}: {} bytes stores, {} bytes loads ({} registers)",
                                k.name, r.spill_stores, r.spill_loads, r.registers
                            );
                        }
                        if self.cargo_metadata {
                            for w in ptxas::resource_warnings(&k.name, arch, r, !panic_messages) {
                                println!("cargo:warning=oxide-build: {w}");
                            }
                        }
                        if arch == &lowest {
                            k.resources = Some(r.clone());
                        }
                    }
                }
            }
            validated = true;
        } else if self.cargo_metadata {
            println!(
                "cargo:warning=oxide-build: ptxas not found, PTX not validated; fix: {}",
                toolchain::INSTALL_PTXAS
            );
        }
        rec.stage("ptxas", t, ptxas_commands, vec![ptx_path.clone()], cubins.iter().map(|(_, p)| p.clone()).collect());

        let t = Instant::now();
        // Files the device build read, minus the toolchain's own sources and our generated root.
        let sources: Vec<PathBuf> = built
            .sources
            .iter()
            .filter(|p| !p.starts_with(&krate.dir) && !p.components().any(|c| c.as_os_str() == "rustlib"))
            .cloned()
            .collect();
        // The crate's own kernel sources define the prebuilt hash; oxide-rt/oxide-macros are
        // versioned dependencies, tracked for rebuilds (below) but not part of the kernels' identity.
        // The kernels module itself is always among them: prebuilt kernels are refused when their
        // manifest does not hash it.
        let mut own: Vec<PathBuf> = sources.iter().filter(|p| p.starts_with(&manifest_dir)).cloned().collect();
        own.push(source.clone());
        let entries =
            manifest::source_entries(&own, &manifest_dir).map_err(|e| Error::io("hashing kernel sources", e))?;
        let hash = manifest::tree_hash(&entries);
        let meta: Vec<(String, Vec<u64>)> = processed.meta.iter().map(|m| (m.name.clone(), m.values.clone())).collect();
        let manifest_path = dir.join(format!("{module}.manifest.json"));
        let cubin_files: Vec<(String, String)> = cubins
            .iter()
            .map(|(a, p)| (a.clone(), p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()))
            .collect();
        // What the manifest vouches for: the PTX and cubins exactly as written (a prebuilt
        // directory is checked against these before anything is embedded).
        let mut file_hashes = vec![(format!("{module}.ptx"), manifest::content_hash(ptx_text.as_bytes()))];
        for ((_, path), (_, name)) in cubins.iter().zip(&cubin_files) {
            let bytes = std::fs::read(path).map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
            file_hashes.push((name.clone(), manifest::content_hash(&bytes)));
        }
        let manifest = manifest::Manifest {
            module: &module,
            source: &source_rel,
            source_hash: hash.clone(),
            sources: &entries,
            archs: &archs,
            ptx_file: &format!("{module}.ptx"),
            cubins: &cubin_files,
            file_hashes: &file_hashes,
            kernels: &kernels,
            meta: &meta,
            toolchain: serde_json::json!({
                "origin": tc.origin,
                "rustc": tc.rustc_version,
                "llvm_major": tc.llvm_major,
                "llc": tc.llc.as_ref().map(|p| p.display().to_string()),
                "ptxas": tc.ptxas.as_ref().map(|p| p.display().to_string()),
                "libdevice": tc.libdevice.as_ref().map(|p| p.display().to_string()),
                "oxide_build": env!("CARGO_PKG_VERSION"),
            }),
        };
        device_crate::write_if_changed(&manifest_path, &manifest.to_json())?;

        // The cubins as a Rust expression that `include!` embeds next to the PTX.
        let cubins_rs = dir.join(format!("{module}.cubins.rs"));
        device_crate::write_if_changed(&cubins_rs, &prebuilt::cubins_expr(&cubins))?;
        rec.stage("manifest", t, vec![], sources.clone(), vec![manifest_path.clone(), cubins_rs.clone()]);

        // With a toolchain the prebuilt directory is not used, but say when it fell behind.
        if let (Some(dir), true) = (&prebuilt_dir, self.cargo_metadata) {
            let current = ManifestFile::read(&dir.join(format!("{module}.manifest.json"))).ok();
            if current.is_none_or(|m| m.source_hash != hash || !prebuilt::check_files(&m).is_empty()) {
                println!(
                    "cargo:warning=oxide-build: the prebuilt kernels in {} do not match the current sources (built from source here); refresh them with `{}`",
                    dir.display(),
                    prebuilt::refresh_command(&manifest_dir, dir)
                );
            }
        }
        if self.cargo_metadata {
            println!("cargo:rustc-env=OXIDE_PTX={}", ptx_path.display());
            println!("cargo:rustc-env=OXIDE_CUBINS={}", cubins_rs.display());
            println!("cargo:rustc-env=OXIDE_MANIFEST={}", manifest_path.display());
            println!("cargo:rustc-env=OXIDE_KERNELS_ORIGIN=built by {}", tc.rustc_version);
            println!("cargo:rerun-if-changed={}", source.display());
            for s in &sources {
                println!("cargo:rerun-if-changed={}", s.display());
            }
        }
        let (stages, timings, commands) = rec.finish();
        Ok(Output {
            ptx: ptx_path,
            manifest: manifest_path,
            cubins,
            ir: Some(ir_path),
            kernels,
            sources,
            source_hash: hash,
            toolchain: Some(tc),
            prebuilt: None,
            stages,
            timings,
            commands,
            validated,
        })
    }

    /// The build's result taken from a prebuilt directory (after checking it is current).
    fn use_prebuilt(&self, req: &prebuilt::Request<'_>, trace: bool) -> Result<Output, Error> {
        let mut rec = Recorder { trace, stages: Vec::new() };
        let t = Instant::now();
        let used = prebuilt::consume(req)?;
        let mut outputs = vec![used.ptx.clone(), used.manifest.clone(), used.cubins_rs.clone()];
        outputs.extend(used.cubins.iter().map(|(_, p)| p.clone()));
        rec.stage("prebuilt kernels (check + copy)", t, vec![], vec![used.file.path.clone()], outputs);
        if self.cargo_metadata {
            let archs: Vec<&str> = used.cubins.iter().map(|(a, _)| a.as_str()).collect();
            println!(
                "cargo:warning=oxide-build: using the prebuilt kernels in {} ({}; sources unchanged; cubins: {})",
                req.dir.display(),
                req.reason,
                if archs.is_empty() { "none, PTX only".to_string() } else { archs.join(", ") }
            );
            if !used.missing_archs.is_empty() {
                println!(
                    "cargo:warning=oxide-build: the prebuilt kernels have no cubin for {} (those GPUs JIT-compile the PTX); add them with `{} --arch ..`",
                    used.missing_archs.join(", "),
                    prebuilt::refresh_command(req.manifest_dir, req.dir)
                );
            }
            println!("cargo:rustc-env=OXIDE_PTX={}", used.ptx.display());
            println!("cargo:rustc-env=OXIDE_CUBINS={}", used.cubins_rs.display());
            println!("cargo:rustc-env=OXIDE_MANIFEST={}", used.manifest.display());
            println!("cargo:rustc-env=OXIDE_KERNELS_ORIGIN=prebuilt {}", req.dir.display());
            for s in &used.sources {
                println!("cargo:rerun-if-changed={}", s.display());
            }
            println!("cargo:rerun-if-changed={}", req.dir.display());
            println!("cargo:rerun-if-changed={}", used.file.path.display());
        }
        let validated = used.file.kernels.iter().any(|k| k.resources.is_some());
        let (stages, timings, commands) = rec.finish();
        Ok(Output {
            ptx: used.ptx,
            manifest: used.manifest,
            cubins: used.cubins,
            ir: None,
            kernels: used.file.kernels,
            sources: used.sources,
            source_hash: used.file.source_hash,
            toolchain: None,
            prebuilt: Some(req.dir.to_path_buf()),
            stages,
            timings,
            commands,
            validated,
        })
    }
}

/// Collects the stages of one build; with `OXIDE_TRACE=1` prints each as it finishes.
struct Recorder {
    trace: bool,
    stages: Vec<Stage>,
}

type Finished = (Vec<Stage>, Vec<(&'static str, Duration)>, Vec<String>);

impl Recorder {
    fn stage(
        &mut self,
        name: &'static str,
        start: Instant,
        commands: Vec<String>,
        inputs: Vec<PathBuf>,
        outputs: Vec<PathBuf>,
    ) {
        let time = start.elapsed();
        if self.trace {
            // `oxide-build: <stage>: <secs>s` is what ci/build-times.sh sums.
            println!("cargo:warning=oxide-build: {name}: {:.3}s", time.as_secs_f64());
            for c in &commands {
                println!("cargo:warning=oxide-build:   ran {c}");
            }
            for (what, files) in [("in", &inputs), ("out", &outputs)] {
                for f in files {
                    println!("cargo:warning=oxide-build:   {what} {}", f.display());
                }
            }
        }
        self.stages.push(Stage { name, time, commands, inputs, outputs });
    }

    fn finish(self) -> Finished {
        let timings = self.stages.iter().map(|s| (s.name, s.time)).collect();
        let commands = self.stages.iter().flat_map(|s| s.commands.clone()).collect();
        (self.stages, timings, commands)
    }
}

/// The crate's edition from its Cargo.toml (following `edition.workspace = true`).
fn read_edition(manifest_dir: &Path) -> String {
    let find = |text: &str| {
        text.lines().map(str::trim).find_map(|l| {
            let v = l.strip_prefix("edition")?.trim_start().strip_prefix('=')?.trim();
            Some(v.trim_matches('"').to_string())
        })
    };
    let own = std::fs::read_to_string(manifest_dir.join("Cargo.toml")).unwrap_or_default();
    if let Some(e) = find(&own).filter(|e| e.chars().all(|c| c.is_ascii_digit())) {
        return e;
    }
    for dir in manifest_dir.ancestors().skip(1) {
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
        if text.contains("[workspace") {
            if let Some(e) = find(&text).filter(|e| e.chars().all(|c| c.is_ascii_digit())) {
                return e;
            }
        }
    }
    "2021".into()
}

/// Makes `path = "rel"` in a dependency spec absolute (the device crate lives elsewhere).
fn absolutize_paths(spec: &str, base: &Path) -> String {
    let Some(i) = spec.find("path") else { return spec.to_string() };
    let rest = &spec[i + 4..];
    let Some(q1) = rest.find('"') else { return spec.to_string() };
    let Some(q2) = rest[q1 + 1..].find('"') else { return spec.to_string() };
    let rel = &rest[q1 + 1..q1 + 1 + q2];
    if Path::new(rel).is_absolute() {
        return spec.to_string();
    }
    let abs = base.join(rel);
    format!("{}{}\"{}\"{}", &spec[..i + 4], &rest[..q1], abs.display(), &rest[q1 + 2 + q2..])
}
