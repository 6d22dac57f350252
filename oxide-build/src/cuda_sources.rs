//! CUDA C++ sources (`Build::cuda_source`): each `.cu` file is compiled device-only by nvcc to
//! PTX for the lowest configured arch, then validated by ptxas for every arch (cubins), exactly
//! like the Rust module. Each file becomes one embedded module of its own. `cc` finds and
//! configures the host C++ compiler nvcc preprocesses with (`-ccbin`, honouring `CXX`); nvcc's
//! `-MD` dependency list names every header the file includes, for `cargo:rerun-if-changed`.

use crate::env::Env;
use crate::error::{command_line, Error, ErrorKind};
use crate::manifest::KernelInfo;
use crate::{codegen, ptxas, toolchain};
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) struct Input<'a> {
    /// The `.cu` files, absolute.
    pub sources: &'a [PathBuf],
    pub manifest_dir: &'a Path,
    pub includes: &'a [PathBuf],
    pub defines: &'a [(String, Option<String>)],
    pub flags: &'a [String],
    pub archs: &'a [String],
    pub lowest: &'a str,
    pub opt_level: u8,
    pub nvcc: &'a Path,
    pub ptxas: Option<&'a Path>,
    /// Where the PTX and cubins go (next to the Rust module's).
    pub dir: &'a Path,
    pub work_dir: &'a Path,
    pub env: &'a Env,
}

/// One compiled `.cu` file.
#[derive(Clone, Debug)]
pub(crate) struct CudaModule {
    pub source: PathBuf,
    /// The source as the build script names it (relative to the manifest directory).
    pub rel: String,
    /// `filters_cu` for `filters.cu`: the name of its PTX, cubins and embedded module.
    pub module: String,
    pub ptx: PathBuf,
    pub cubins: Vec<(String, PathBuf)>,
    /// The `.entry` functions of the PTX (mangled names) with their parameters.
    pub kernels: Vec<KernelInfo>,
    /// Every file nvcc read: the source and each header it includes.
    pub deps: Vec<PathBuf>,
}

pub(crate) struct Compiled {
    pub modules: Vec<CudaModule>,
    commands: Vec<String>,
    warnings: Vec<String>,
}

impl crate::Traced for Compiled {
    fn trace(&self) -> crate::Trace {
        let mut outputs = Vec::new();
        for m in &self.modules {
            outputs.push(m.ptx.clone());
            outputs.extend(m.cubins.iter().map(|(_, c)| c.clone()));
        }
        crate::Trace {
            commands: self.commands.clone(),
            inputs: self.modules.iter().map(|m| m.source.clone()).collect(),
            outputs,
            warnings: self.warnings.clone(),
        }
    }
}

/// Compiles every source (in parallel, one nvcc each), then validates each PTX with ptxas.
pub(crate) fn run(input: &Input<'_>) -> Result<Compiled, Error> {
    let names = module_names(input)?;
    std::fs::create_dir_all(input.work_dir)
        .map_err(|e| Error::io(format!("creating {}", input.work_dir.display()), e))?;
    let ccbin = host_compiler(input.env);
    let results: Vec<Result<Nvcc, Error>> = std::thread::scope(|s| {
        let jobs: Vec<_> = input
            .sources
            .iter()
            .zip(&names)
            .map(|(src, name)| s.spawn(|| nvcc_ptx(input, src, name, ccbin.as_deref())))
            .collect();
        jobs.into_iter()
            .map(|j| j.join().unwrap_or_else(|_| Err(Error::new(ErrorKind::ToolExec, "an nvcc job panicked"))))
            .collect()
    });
    let mut out = Compiled { modules: Vec::new(), commands: Vec::new(), warnings: Vec::new() };
    for ((result, src), module) in results.into_iter().zip(input.sources).zip(names) {
        let nvcc = result?;
        let checked = ptxas::run(&ptxas::Input {
            ptxas: input.ptxas,
            ptx: &codegen::Ptx::from_file(nvcc.ptx.clone(), nvcc.text),
            module: &module,
            archs: input.archs,
            lowest: input.lowest,
            dir: input.dir,
            cache: &input.work_dir.join("ptxas"),
            local_arrays: false,
        })?;
        let trace = crate::Traced::trace(&checked);
        out.commands.push(nvcc.command);
        out.commands.extend(trace.commands);
        out.warnings.extend(nvcc.warnings);
        out.warnings.extend(trace.warnings);
        out.modules.push(CudaModule {
            source: src.clone(),
            rel: crate::manifest::relative(src, input.manifest_dir),
            module,
            ptx: nvcc.ptx,
            cubins: checked.cubins,
            kernels: checked.kernels,
            deps: nvcc.deps,
        });
    }
    Ok(out)
}

/// `<stem>_cu` for each source; two sources of one stem would overwrite each other's PTX.
fn module_names(input: &Input<'_>) -> Result<Vec<String>, Error> {
    let mut names: Vec<String> = Vec::new();
    for src in input.sources {
        if !src.is_file() {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "the CUDA C++ source {} does not exist; fix: check the path given to .cuda_source(..)",
                    src.display()
                ),
            ));
        }
        let stem = src.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let name: String = stem.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        let name = format!("{name}_cu");
        if names.contains(&name) {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "two CUDA C++ sources are named {stem}.cu ({}); fix: rename one of them",
                    input
                        .sources
                        .iter()
                        .filter(|s| s.file_stem() == src.file_stem())
                        .map(|s| s.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        names.push(name);
    }
    Ok(names)
}

/// The host C++ compiler as `cc` finds it (`CXX`, the target's default), for nvcc's `-ccbin`;
/// `None` lets nvcc pick its default.
fn host_compiler(env: &Env) -> Option<PathBuf> {
    let mut build = cc::Build::new();
    build.cpp(true).cargo_metadata(false).warnings(false);
    // Outside a build script (tests, `cargo oxide`) cargo's variables are absent.
    if env.var("TARGET").is_none() || env.var("HOST").is_none() {
        build.target(HOST_TRIPLE).host(HOST_TRIPLE).opt_level(0).debug(false);
    }
    build.try_get_compiler().ok().map(|t| t.path().to_path_buf())
}

/// The host when no build script says (tests, `cargo oxide`): the only one oxide targets.
pub(crate) const HOST_TRIPLE: &str = "x86_64-unknown-linux-gnu";

struct Nvcc {
    ptx: PathBuf,
    text: String,
    deps: Vec<PathBuf>,
    command: String,
    warnings: Vec<String>,
}

/// `nvcc -ptx` of one source, with its dependency list.
fn nvcc_ptx(input: &Input<'_>, src: &Path, module: &str, ccbin: Option<&Path>) -> Result<Nvcc, Error> {
    let ptx = input.dir.join(format!("{module}.ptx"));
    let depfile = input.work_dir.join(format!("{module}.d"));
    let rel = crate::manifest::relative(src, input.manifest_dir);
    let mut cmd = Command::new(input.nvcc);
    // From the manifest directory, nvcc's messages name the source as the build script does.
    cmd.current_dir(input.manifest_dir);
    cmd.arg("-ptx").arg(format!("-arch={}", input.lowest)).arg(format!("-O{}", input.opt_level.min(3)));
    if let Some(cxx) = ccbin {
        cmd.arg(format!("-ccbin={}", cxx.display()));
    }
    for dir in input.includes {
        cmd.arg("-I").arg(dir);
    }
    for (name, value) in input.defines {
        cmd.arg(match value {
            Some(v) => format!("-D{name}={v}"),
            None => format!("-D{name}"),
        });
    }
    cmd.args(input.flags).arg("-MD").arg("-MF").arg(&depfile).arg("-o").arg(&ptx).arg(&rel);
    let command = command_line(&cmd);
    let out = cmd.output().map_err(|e| {
        Error::new(
            ErrorKind::ToolExec,
            format!("failed to start nvcc: {e}\n  command: {command}\n  fix: {}", toolchain::INSTALL_NVCC),
        )
    })?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(Error::new(
            ErrorKind::CudaCompile,
            format!(
                "nvcc could not compile the CUDA C++ source {rel} ({}):\n{}\n  command: {command}\n  fix: correct the source at the lines above",
                out.status,
                diagnostics(&stderr)
            ),
        ));
    }
    let warnings = stderr.lines().filter(|l| !l.trim().is_empty()).map(|l| format!("nvcc: {}", file_line(l))).collect();
    let text =
        std::fs::read_to_string(&ptx).map_err(|e| Error::io(format!("reading nvcc's PTX {}", ptx.display()), e))?;
    let deps = std::fs::read_to_string(&depfile)
        .map(|d| parse_depfile(&d, input.manifest_dir))
        .map_err(|e| Error::io(format!("reading nvcc's dependency list {}", depfile.display()), e))?;
    Ok(Nvcc { ptx, text, deps, command, warnings })
}

/// nvcc's messages, indented, with its `file(line): ` locations written `file:line: ` as
/// rustc and gcc write them (and editors link them).
fn diagnostics(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("  {}", file_line(l)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `f.cu(12): error: x` → `f.cu:12: error: x`; other lines unchanged.
pub(crate) fn file_line(line: &str) -> String {
    if let Some((head, rest)) = line.split_once("): ") {
        if let Some((file, num)) = head.rsplit_once('(') {
            if !file.is_empty() && !num.is_empty() && num.chars().all(|c| c.is_ascii_digit()) {
                return format!("{file}:{num}: {rest}");
            }
        }
    }
    line.to_string()
}

/// The files of a make-style dependency list (`out: a.cu \` / `  b.h \`), relative ones
/// resolved against `base` (nvcc runs in the build script's directory, the manifest's).
pub(crate) fn parse_depfile(text: &str, base: &Path) -> Vec<PathBuf> {
    let body = text.replace("\\\n", " ");
    let mut files = Vec::new();
    for line in body.lines() {
        let Some((_, deps)) = line.split_once(": ") else { continue };
        for dep in deps.split_whitespace() {
            let p = PathBuf::from(dep);
            let p = if p.is_absolute() { p } else { base.join(p) };
            if !files.contains(&p) {
                files.push(p);
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvcc_locations_read_like_rustc() {
        assert_eq!(
            file_line("src/legacy/bad.cu(7): error: identifier \"zz\" is undefined"),
            "src/legacy/bad.cu:7: error: identifier \"zz\" is undefined"
        );
        assert_eq!(
            file_line("1 error detected in the compilation of \"bad.cu\"."),
            "1 error detected in the compilation of \"bad.cu\"."
        );
        assert_eq!(file_line("f(x): error: y"), "f(x): error: y");
    }

    #[test]
    fn dependency_lists_name_every_header_once() {
        let d = "out.ptx : src/f.cu \\\n    /usr/include/x.h \\\n    shared/params.h \\\n    /usr/include/x.h\n";
        let base = Path::new("/crate");
        assert_eq!(
            parse_depfile(d, base),
            [PathBuf::from("/crate/src/f.cu"), "/usr/include/x.h".into(), "/crate/shared/params.h".into()]
        );
    }
}
