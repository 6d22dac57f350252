//! oxide-build: compile a crate's kernels module to PTX from `build.rs`.
//!
//! ```no_run
//! // build.rs
//! fn main() {
//!     oxide_build::kernels("src/kernels.rs").arch("sm_90").compile();
//! }
//! ```
//!
//! The pipeline, one stage per file, data flowing one way: `plan` (the kernels module, output
//! directory, archs) → [`toolchain`] (find the device rustc/cargo/llc/ptxas) → `device_crate`
//! (a generated `no_std` crate that includes the module by `#[path]`) → `device_build` (cargo
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

mod arch_gate;
mod codegen;
mod cuda_bindings;
mod cuda_bitcode;
mod cuda_sources;
mod device_build;
mod device_crate;
mod env;
mod error;
mod ir;
mod llc_choice;
pub mod manifest;
mod plan;
pub mod prebuilt;
mod ptxas;
pub mod toolchain;

pub use error::{Error, ErrorKind};
pub use manifest::{KernelInfo, ManifestFile};
pub use ptxas::KernelResources;
pub use toolchain::Toolchain;

use env::Env;
use plan::Plan;
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
    cuda: CudaConfig,
    env: Env,
}

/// The CUDA C++ side of a build: sources, shared headers, and what nvcc and libclang need.
#[derive(Clone, Debug, Default)]
struct CudaConfig {
    sources: Vec<PathBuf>,
    device_sources: Vec<PathBuf>,
    headers: Vec<PathBuf>,
    includes: Vec<PathBuf>,
    defines: Vec<(String, Option<String>)>,
    flags: Vec<String>,
    rust_structs: Vec<String>,
}

impl CudaConfig {
    fn is_empty(&self) -> bool {
        self.sources.is_empty() && self.headers.is_empty() && self.device_sources.is_empty()
    }
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
    /// What the CUDA C++ sources produced, when there are any.
    pub cuda: Option<CudaOutput>,
}

/// The CUDA C++ part of a build's output.
#[derive(Clone, Debug)]
pub struct CudaOutput {
    /// The generated Rust (`oxide_rt::include_cuda!()`): shared types and launchers.
    pub bindings: PathBuf,
    /// `(launcher base name, C++ symbol)` of every kernel: `("addk_f32", "_Z4addkIfEvPKT_PS0_j")`.
    pub kernels: Vec<(String, String)>,
    /// The PTX of each source.
    pub ptx: Vec<PathBuf>,
    /// `(arch, path)` of each cubin of each source.
    pub cubins: Vec<(String, PathBuf)>,
    /// Every file that reruns the build: the sources, each header they include, the shared headers.
    pub deps: Vec<PathBuf>,
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
            cuda: CudaConfig::default(),
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

    /// A CUDA C++ source (relative to the manifest directory) to compile next to the Rust
    /// kernels: nvcc builds it device-only to PTX and cubins for the configured archs, ptxas
    /// validates it, and every `__global__` function (explicit template instantiations too)
    /// gets typed launchers `launch_<name>` / `launch_<name>_with`, generated from what
    /// `bindgen` reads in it. The kernels module includes them with `oxide_rt::include_cuda!()`.
    /// Needs nvcc (found next to ptxas) and libclang.
    pub fn cuda_source(&mut self, path: impl AsRef<Path>) -> &mut Build {
        self.cuda.sources.push(path.as_ref().to_path_buf());
        self
    }

    /// A CUDA C++ source (relative to the manifest directory) of `extern "C" __host__ __device__`
    /// functions that Rust kernels call, declared in the kernels module as
    /// `extern "C" { fn clamp_index(v: i32, hi: i32) -> i32; }`. clang (LLVM 22, the device
    /// rustc's) compiles it to LLVM IR that is linked into the Rust module before `opt`, so the
    /// calls inline; `cc` compiles it for the host too, where the CPU executor calls it.
    pub fn cuda_device_source(&mut self, path: impl AsRef<Path>) -> &mut Build {
        self.cuda.device_sources.push(path.as_ref().to_path_buf());
        self
    }

    /// A C/C++ header (relative to the manifest directory) whose structs are shared by CUDA C++
    /// and Rust: each becomes a `#[repr(C)]` kernel argument in `oxide_rt::include_cuda!()`,
    /// with the C layout (size, alignment, every field offset) asserted on the host and on
    /// nvptx64. Structs that the sources' kernels take are shared without this.
    pub fn shared_header(&mut self, path: impl AsRef<Path>) -> &mut Build {
        self.cuda.headers.push(path.as_ref().to_path_buf());
        self
    }

    /// A struct of the CUDA C++ sources or shared headers that the kernels module defines in
    /// Rust itself (with `#[derive(KernelArg)] #[repr(C)]`) instead of taking the generated one;
    /// its layout is still asserted equal to C's, field by field.
    pub fn cuda_struct_in_rust(&mut self, name: &str) -> &mut Build {
        self.cuda.rust_structs.push(name.to_string());
        self
    }

    /// An include directory (relative to the manifest directory) for nvcc and libclang.
    pub fn cuda_include(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.cuda.includes.push(dir.as_ref().to_path_buf());
        self
    }

    /// A preprocessor definition for nvcc and libclang (`-DNAME` or `-DNAME=VALUE`).
    pub fn cuda_define(&mut self, name: &str, value: Option<&str>) -> &mut Build {
        self.cuda.defines.push((name.to_string(), value.map(str::to_string)));
        self
    }

    /// An extra nvcc flag (e.g. `"-std=c++20"`, `"--use_fast_math"`).
    pub fn cuda_flag(&mut self, flag: &str) -> &mut Build {
        self.cuda.flags.push(flag.to_string());
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
    ///
    /// The stages, one file each: plan → (prebuilt kernels, or) toolchain → device crate →
    /// device build → IR → codegen → ptxas → manifest.
    pub fn try_compile(&self) -> Result<Output, Error> {
        let mut rec = Recorder::new(self);
        let plan = Plan::new(self)?;
        if let Some(reason) = plan.forced_prebuilt(self) {
            return self.use_prebuilt(&plan, &reason, rec);
        }
        let tc = match rec.run("discover toolchain", || toolchain::discover(&self.env)) {
            Ok(tc) => tc,
            Err(e) => match plan.prebuilt_fallback(&e) {
                Some(reason) => return self.use_prebuilt(&plan, &reason, rec),
                None => return Err(e),
            },
        };
        let cuda = self.cuda_stages(&plan, &tc, &mut rec)?;
        let spec = device_crate::Spec::new(self, &plan)?;
        let built = rec.run("device build (cargo + rustc)", || {
            let options = device_build::Options {
                arch: &plan.lowest,
                opt_level: self.opt_level,
                cfgs: &self.cfgs,
                kernels_file: &plan.source,
                module: &plan.module,
                cuda_bindings: cuda.as_ref().map(|c| c.bindings.path.as_path()),
            };
            device_build::run(&tc, &self.env, &device_crate::generate(&spec)?, &options)
        })?;
        let ir = rec.run("IR post-processing", || {
            ir::run(&ir::Input {
                raw: &built.ir,
                module: &plan.module,
                module_file: &plan.rel,
                panic_messages: spec.panic_messages,
                fmad: self.fmad,
                work_dir: &plan.work_dir(),
            })
        })?;
        let ptx = rec.run("llc", || {
            codegen::run(
                &tc,
                &codegen::Input {
                    module: &plan.module,
                    ir: &ir,
                    rustc_ptx: built.asm.as_deref(),
                    ptx: &plan.oxide_dir().join(format!("{}.ptx", plan.module)),
                    arch: &plan.lowest,
                    archs: &plan.archs,
                    choose_flags: !spec.panic_messages,
                    opt_level: self.opt_level,
                    fmad: self.fmad,
                    work_dir: &plan.work_dir(),
                    linked_ir: cuda.as_ref().map(|c| c.device_ir.as_slice()).unwrap_or_default(),
                },
            )
        })?;
        // Operations newer than the oldest architecture: one clear error, with or without ptxas.
        arch_gate::check(&ptx.text, &plan.lowest, &plan.archs)?;
        let checked = rec.run("ptxas", || {
            ptxas::run(&ptxas::Input {
                ptxas: tc.ptxas.as_deref(),
                ptx: &ptx,
                module: &plan.module,
                archs: &plan.archs,
                lowest: &plan.lowest,
                dir: &plan.oxide_dir(),
                cache: &spec.dir.join("ptxas"),
                local_arrays: !spec.panic_messages,
            })
        })?;
        let written = rec.run("manifest", || {
            manifest::write(&manifest::Input {
                plan: &plan,
                toolchain: &tc,
                sources: &built.sources,
                meta: &ir.processed.meta,
                ptx: &ptx,
                checked: &checked,
            })
        })?;
        if self.cargo_metadata {
            tell_cargo(&plan, &tc, &ptx, &written, &built.sources);
            if let Some(c) = &cuda {
                tell_cargo_cuda(c);
            }
        }
        let (stages, timings, commands) = rec.finish();
        Ok(Output {
            ptx: ptx.path,
            manifest: written.manifest,
            cubins: checked.cubins,
            ir: Some(ir.path),
            kernels: checked.kernels,
            sources: built.sources,
            source_hash: written.source_hash,
            toolchain: Some(tc),
            prebuilt: None,
            stages,
            timings,
            commands,
            validated: checked.validated,
            cuda: cuda.map(|c| CudaOutput {
                bindings: c.bindings.path,
                kernels: c.bindings.kernels,
                ptx: c.modules.iter().map(|m| m.ptx.clone()).collect(),
                cubins: c.modules.iter().flat_map(|m| m.cubins.clone()).collect(),
                deps: c.deps,
            }),
        })
    }

    /// The CUDA C++ stages, when there are sources or shared headers: nvcc and ptxas
    /// (`cuda_sources`), then bindgen and the launchers (`cuda_bindings`).
    fn cuda_stages(&self, plan: &Plan, tc: &Toolchain, rec: &mut Recorder) -> Result<Option<CudaBuilt>, Error> {
        if self.cuda.is_empty() {
            return Ok(None);
        }
        let nvcc = toolchain::find_nvcc(&self.env, tc.ptxas.as_deref()).ok_or_else(|| {
            Error::new(
                ErrorKind::ToolchainNotFound,
                format!(
                    "CUDA C++ sources need nvcc, and none was found (looked for: OXIDE_NVCC, nvcc next to ptxas, NVCC, \
                     nvcc on PATH, $CUDA_HOME/bin)\n  fix: {}",
                    toolchain::INSTALL_NVCC
                ),
            )
        })?;
        let abs = |paths: &[PathBuf]| -> Vec<PathBuf> { paths.iter().map(|p| plan.manifest_dir.join(p)).collect() };
        let (sources, headers, includes) = (abs(&self.cuda.sources), abs(&self.cuda.headers), abs(&self.cuda.includes));
        let compiled = rec.run("CUDA C++ (nvcc + ptxas)", || {
            cuda_sources::run(&cuda_sources::Input {
                sources: &sources,
                manifest_dir: &plan.manifest_dir,
                includes: &includes,
                defines: &self.cuda.defines,
                flags: &self.cuda.flags,
                archs: &plan.archs,
                lowest: &plan.lowest,
                opt_level: self.opt_level,
                nvcc: &nvcc,
                ptxas: tc.ptxas.as_deref(),
                dir: &plan.oxide_dir(),
                work_dir: &plan.work_dir().join("cuda"),
                env: &self.env,
            })
        })?;
        let bindings = rec.run("CUDA C++ launchers (bindgen)", || {
            cuda_bindings::run(&cuda_bindings::Input {
                modules: &compiled.modules,
                headers: &headers,
                rust_structs: &self.cuda.rust_structs,
                manifest_dir: &plan.manifest_dir,
                includes: &includes,
                defines: &self.cuda.defines,
                lowest: &plan.lowest,
                nvcc: &nvcc,
                work_dir: &plan.work_dir().join("cuda"),
                out: &plan.oxide_dir().join("cuda.rs"),
                env: &self.env,
            })
        })?;
        let device_sources = abs(&self.cuda.device_sources);
        let bitcode = match device_sources.is_empty() {
            true => None,
            false => Some(rec.run("CUDA C++ device functions (clang -emit-llvm + cc)", || {
                let clang = toolchain::find_clang(&self.env).ok_or_else(|| {
                    Error::new(
                        ErrorKind::ToolchainNotFound,
                        format!(
                            "CUDA C++ device functions need clang 22 (the device rustc's LLVM), and none was found \
                             (looked for: OXIDE_CLANG, clang-22, clang on PATH)\n  fix: {}",
                            toolchain::INSTALL_LIBCLANG
                        ),
                    )
                })?;
                let work_dir = plan.work_dir().join("cuda");
                let cuda_args = cuda_bindings::clang_args(&cuda_bindings::ClangInput {
                    includes: &includes,
                    defines: &self.cuda.defines,
                    lowest: &plan.lowest,
                    nvcc: &nvcc,
                    work_dir: &work_dir,
                    env: &self.env,
                })?;
                cuda_bitcode::run(&cuda_bitcode::Input {
                    sources: &device_sources,
                    manifest_dir: &plan.manifest_dir,
                    clang: &clang,
                    cuda_args: &cuda_args,
                    opt_level: self.opt_level,
                    work_dir: &work_dir,
                    out_dir: &plan.out_dir,
                    cargo_metadata: self.cargo_metadata,
                    package: &plan.package,
                    env: &self.env,
                })
            })?),
        };
        let mut deps: Vec<PathBuf> = compiled.modules.iter().flat_map(|m| m.deps.iter().cloned()).collect();
        deps.extend(sources.iter().chain(&headers).chain(&device_sources).cloned());
        deps.extend(bitcode.iter().flat_map(|b| b.deps.iter().cloned()));
        deps.sort();
        deps.dedup();
        let device_ir = bitcode.map(|b| b.ir).unwrap_or_default();
        Ok(Some(CudaBuilt { modules: compiled.modules, bindings, deps, device_ir }))
    }

    /// The build's result taken from a prebuilt directory (after checking it is current).
    fn use_prebuilt(&self, plan: &Plan, reason: &str, mut rec: Recorder) -> Result<Output, Error> {
        if !self.cuda.is_empty() {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "prebuilt kernels ({reason}) cannot stand in for CUDA C++ sources, which need nvcc and libclang at \
                     build time; fix: {}",
                    toolchain::INSTALL_NVCC
                ),
            ));
        }
        let dir = plan.prebuilt_dir.as_deref().unwrap_or(Path::new("."));
        let req = prebuilt::Request {
            dir,
            manifest_dir: &plan.manifest_dir,
            module: &plan.module,
            source: &plan.source_rel,
            archs: &plan.archs,
            out_dir: &plan.out_dir,
            reason,
        };
        let used = rec.run("prebuilt kernels (check + copy)", || prebuilt::consume(&req))?;
        if self.cargo_metadata {
            let archs: Vec<&str> = used.cubins.iter().map(|(a, _)| a.as_str()).collect();
            println!(
                "cargo:warning=oxide-build: using the prebuilt kernels in {} ({}; sources unchanged; cubins: {})",
                dir.display(),
                reason,
                if archs.is_empty() { "none, PTX only".to_string() } else { archs.join(", ") }
            );
            if !used.missing_archs.is_empty() {
                println!(
                    "cargo:warning=oxide-build: the prebuilt kernels have no cubin for {} (those GPUs JIT-compile the PTX); add them with `{} --arch ..`",
                    used.missing_archs.join(", "),
                    prebuilt::refresh_command(&plan.manifest_dir, dir)
                );
            }
            println!("cargo:rustc-env=OXIDE_PTX={}", used.ptx.display());
            println!("cargo:rustc-env=OXIDE_CUBINS={}", used.cubins_rs.display());
            println!("cargo:rustc-env=OXIDE_MANIFEST={}", used.manifest.display());
            println!("cargo:rustc-env=OXIDE_KERNELS_ORIGIN=prebuilt {}", dir.display());
            for s in &used.sources {
                println!("cargo:rerun-if-changed={}", s.display());
            }
            println!("cargo:rerun-if-changed={}", dir.display());
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
            prebuilt: Some(dir.to_path_buf()),
            stages,
            timings,
            commands,
            validated,
            cuda: None,
        })
    }
}

/// The build script's last word to cargo: where the PTX, cubins and manifest are, and which
/// files rerun it. Also says when a prebuilt directory, unused here, fell behind the sources.
fn tell_cargo(plan: &Plan, tc: &Toolchain, ptx: &codegen::Ptx, written: &manifest::Written, sources: &[PathBuf]) {
    if let Some(dir) = &plan.prebuilt_dir {
        let current = ManifestFile::read(&dir.join(format!("{}.manifest.json", plan.module))).ok();
        if current.is_none_or(|m| m.source_hash != written.source_hash || !prebuilt::check_files(&m).is_empty()) {
            println!(
                "cargo:warning=oxide-build: the prebuilt kernels in {} do not match the current sources (built from source here); refresh them with `{}`",
                dir.display(),
                prebuilt::refresh_command(&plan.manifest_dir, dir)
            );
        }
    }
    println!("cargo:rustc-env=OXIDE_PTX={}", ptx.path.display());
    println!("cargo:rustc-env=OXIDE_CUBINS={}", written.cubins_rs.display());
    println!("cargo:rustc-env=OXIDE_MANIFEST={}", written.manifest.display());
    println!("cargo:rustc-env=OXIDE_KERNELS_ORIGIN=built by {}", tc.rustc_version);
    println!("cargo:rerun-if-changed={}", plan.source.display());
    for s in sources {
        println!("cargo:rerun-if-changed={}", s.display());
    }
}

/// What the CUDA C++ stages produced.
struct CudaBuilt {
    modules: Vec<cuda_sources::CudaModule>,
    bindings: cuda_bindings::Bindings,
    /// Every file nvcc read (sources and each header they include) and the shared headers.
    deps: Vec<PathBuf>,
    /// The device functions' LLVM IR, linked into the Rust module.
    device_ir: Vec<PathBuf>,
}

/// Where the generated CUDA C++ bindings are, and which files rerun the build script.
fn tell_cargo_cuda(cuda: &CudaBuilt) {
    println!("cargo:rustc-env=OXIDE_CUDA={}", cuda.bindings.path.display());
    for d in &cuda.deps {
        println!("cargo:rerun-if-changed={}", d.display());
    }
}

/// What a stage did besides producing its result: the commands it ran, the files it read and
/// wrote (shown by `OXIDE_TRACE=1`), and its warnings for cargo.
pub(crate) struct Trace {
    pub commands: Vec<String>,
    pub inputs: Vec<PathBuf>,
    pub outputs: Vec<PathBuf>,
    /// Without the `cargo:warning=oxide-build: ` prefix.
    pub warnings: Vec<String>,
}

/// A stage's result, which can say what the stage did.
pub(crate) trait Traced {
    fn trace(&self) -> Trace;
}

/// Runs the stages of one build, timing each; prints their warnings for cargo and, with
/// `OXIDE_TRACE=1`, each stage as it finishes.
struct Recorder {
    cargo_metadata: bool,
    trace: bool,
    stages: Vec<Stage>,
}

type Finished = (Vec<Stage>, Vec<(&'static str, Duration)>, Vec<String>);

impl Recorder {
    fn new(build: &Build) -> Recorder {
        let trace = build.env.var("OXIDE_TRACE").is_some_and(|v| v != "0") && build.cargo_metadata;
        Recorder { cargo_metadata: build.cargo_metadata, trace, stages: Vec::new() }
    }

    fn run<T: Traced>(&mut self, name: &'static str, stage: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
        let start = Instant::now();
        let out = stage()?;
        let Trace { commands, inputs, outputs, warnings } = out.trace();
        let time = start.elapsed();
        if self.cargo_metadata {
            for w in &warnings {
                println!("cargo:warning=oxide-build: {w}");
            }
        }
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
        Ok(out)
    }

    fn finish(self) -> Finished {
        let timings = self.stages.iter().map(|s| (s.name, s.time)).collect();
        let commands = self.stages.iter().flat_map(|s| s.commands.clone()).collect();
        (self.stages, timings, commands)
    }
}
