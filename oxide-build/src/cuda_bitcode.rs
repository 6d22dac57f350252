//! CUDA C++ `__device__` functions that Rust kernels call (`Build::cuda_device_source`): clang
//! (the LLVM of the device rustc) compiles the source device-only to LLVM IR, which codegen
//! links into the Rust kernels' module before `opt`, so the calls inline like Rust code. The
//! same source is compiled for the host by `cc` (clang in CUDA host mode), so the CPU executor
//! runs the very same functions: they must be `extern "C" __host__ __device__`.

use crate::device_crate::write_if_changed;
use crate::env::Env;
use crate::error::{command_line, Error, ErrorKind};
use crate::toolchain;
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) struct Input<'a> {
    pub sources: &'a [PathBuf],
    pub manifest_dir: &'a Path,
    pub clang: &'a Path,
    /// clang's CUDA arguments shared with bindgen (`-x cuda`, `--cuda-path`, includes, …).
    pub cuda_args: &'a [String],
    pub opt_level: u8,
    pub work_dir: &'a Path,
    /// Where cc puts the host library (`$OUT_DIR`), and whether it tells cargo to link it.
    pub out_dir: &'a Path,
    pub cargo_metadata: bool,
    pub package: &'a str,
    pub env: &'a Env,
}

pub(crate) struct Bitcode {
    /// The device IR of each source, for codegen's link step.
    pub ir: Vec<PathBuf>,
    /// Every file clang read.
    pub deps: Vec<PathBuf>,
    commands: Vec<String>,
}

impl crate::Traced for Bitcode {
    fn trace(&self) -> crate::Trace {
        crate::Trace { commands: self.commands.clone(), inputs: vec![], outputs: self.ir.clone(), warnings: vec![] }
    }
}

pub(crate) fn run(input: &Input<'_>) -> Result<Bitcode, Error> {
    std::fs::create_dir_all(input.work_dir)
        .map_err(|e| Error::io(format!("creating {}", input.work_dir.display()), e))?;
    let mut out = Bitcode { ir: Vec::new(), deps: Vec::new(), commands: Vec::new() };
    for src in input.sources {
        let (ir, deps, command) = device_ir(input, src)?;
        out.ir.push(ir);
        out.deps.extend(deps);
        out.commands.push(command);
    }
    out.commands.push(host_library(input)?);
    out.deps.sort();
    out.deps.dedup();
    Ok(out)
}

/// `clang -x cuda --cuda-device-only -S -emit-llvm` of one source, its target features removed.
fn device_ir(input: &Input<'_>, src: &Path) -> Result<(PathBuf, Vec<PathBuf>, String), Error> {
    let rel = crate::manifest::relative(src, input.manifest_dir);
    let stem = src.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let raw = input.work_dir.join(format!("{stem}.device.raw.ll"));
    let ir = input.work_dir.join(format!("{stem}.device.ll"));
    let depfile = input.work_dir.join(format!("{stem}.device.d"));
    let mut cmd = Command::new(input.clang);
    cmd.current_dir(input.manifest_dir)
        .args(input.cuda_args)
        .arg(format!("-O{}", input.opt_level.min(3)))
        .args(["-S", "-emit-llvm", "-MD", "-MF"])
        .arg(&depfile)
        .arg("-o")
        .arg(&raw)
        .arg(&rel);
    let command = command_line(&cmd);
    let out = cmd.output().map_err(|e| {
        Error::new(
            ErrorKind::ToolExec,
            format!("failed to start clang: {e}\n  command: {command}\n  fix: {}", toolchain::INSTALL_LIBCLANG),
        )
    })?;
    if !out.status.success() {
        return Err(Error::new(
            ErrorKind::CudaCompile,
            format!(
                "clang could not compile the CUDA C++ device functions of {rel} ({}):\n{}\n  command: {command}\n  fix: \
                 correct the source at the lines above",
                out.status,
                String::from_utf8_lossy(&out.stderr).lines().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n")
            ),
        ));
    }
    let text = std::fs::read_to_string(&raw).map_err(|e| Error::io(format!("reading {}", raw.display()), e))?;
    write_if_changed(&ir, &without_target_features(&text))?;
    let deps = std::fs::read_to_string(&depfile)
        .map(|d| crate::cuda_sources::parse_depfile(&d, input.manifest_dir))
        .map_err(|e| Error::io(format!("reading clang's dependency list {}", depfile.display()), e))?;
    Ok((ir, deps, command))
}

/// clang pins each function to its PTX version (`"target-features"="+ptx88,+sm_90"`); LLVM
/// inlines only between functions of equal features, and the Rust functions have none beyond
/// their `target-cpu` (the same arch), so the C++ functions take the Rust module's.
fn without_target_features(ir: &str) -> String {
    let mut out = String::with_capacity(ir.len());
    let mut rest = ir;
    while let Some(at) = rest.find("\"target-features\"=\"") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "\"target-features\"=\"".len()..];
        rest = after.find('"').map(|end| &after[end + 1..]).unwrap_or("");
    }
    out.push_str(rest);
    out
}

/// The same sources for the host, as a static library cargo links into the crate (the CPU
/// executor calls the functions there). Returns the command for the trace.
fn host_library(input: &Input<'_>) -> Result<String, Error> {
    let mut build = cc::Build::new();
    build.compiler(input.clang).cargo_metadata(input.cargo_metadata).out_dir(input.out_dir).warnings(false);
    // Outside a build script (tests, `cargo oxide`) cargo's variables are absent.
    let env = input.env;
    if env.var("TARGET").is_none() || env.var("HOST").is_none() {
        build.target(crate::cuda_sources::HOST_TRIPLE).host(crate::cuda_sources::HOST_TRIPLE);
    }
    if env.var("OPT_LEVEL").is_none() {
        build.opt_level(input.opt_level.into());
    }
    if env.var("DEBUG").is_none() {
        build.debug(false);
    }
    // The device arguments less the device-only ones: host mode, same headers and defines.
    for arg in input.cuda_args.iter().filter(|a| *a != "--cuda-device-only" && !a.starts_with("--cuda-gpu-arch")) {
        build.flag(arg);
    }
    build.flag("--cuda-host-only");
    for src in input.sources {
        build.file(src);
    }
    let name = format!("oxide_cuda_host_{}", input.package.replace('-', "_"));
    build.try_compile(&name).map_err(|e| {
        Error::new(
            ErrorKind::CudaCompile,
            format!(
                "clang could not compile the CUDA C++ device functions for the host (the CPU executor calls them there): \
                 {e}\n  fix: make every function Rust calls `extern \"C\" __host__ __device__`"
            ),
        )
    })?;
    Ok(format!(
        "cc (clang --cuda-host-only) {} -> lib{name}.a",
        input.sources.iter().map(|s| s.display().to_string()).collect::<Vec<_>>().join(" ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_features_are_dropped_and_nothing_else() {
        let ir = "attributes #0 = { nounwind \"target-cpu\"=\"sm_90\" \"target-features\"=\"+ptx88,+sm_90\" }\n\
                  attributes #1 = { \"target-features\"=\"+ptx88\" }\n";
        assert_eq!(
            without_target_features(ir),
            "attributes #0 = { nounwind \"target-cpu\"=\"sm_90\"  }\nattributes #1 = {  }\n"
        );
    }
}
