//! `cargo oxide build` (prebuild into a directory to commit) and `cargo oxide emit`.

use crate::target::{self, Target};
use crate::{CrateArgs, Emit, Result};
use oxide_build::{Output, Stage};
use std::path::Path;
use std::process::ExitCode;

/// Builds the crate's kernels with the device toolchain into the CLI's work directory.
pub fn run_build(t: &Target, trace: bool) -> Result<Output> {
    let out =
        t.builder(&t.work_dir()).try_compile().map_err(|e| format!("building the kernels of `{}`: {e}", t.package))?;
    if trace {
        print_trace(&out.stages);
    }
    Ok(out)
}

pub fn prebuild(args: &CrateArgs, out: Option<&Path>) -> Result<ExitCode> {
    let t = target::resolve(args)?;
    let dest = match out {
        Some(d) if d.is_absolute() => d.to_path_buf(),
        Some(d) => std::env::current_dir().map_err(|e| e.to_string())?.join(d),
        None => t.prebuilt.clone(),
    };
    let built = run_build(&t, args.trace)?;
    let files = oxide_build::prebuilt::export(&built, &dest).map_err(|e| format!("writing {}: {e}", dest.display()))?;
    let tc = built.toolchain.as_ref().map(|tc| tc.rustc_version.clone()).unwrap_or_default();
    println!("prebuilt kernels of `{}` ({}) → {}", t.package, t.kernels.display(), dest.display());
    for f in &files {
        let size = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        println!("  {:<32} {size:>9} bytes", f.file_name().unwrap_or_default().to_string_lossy());
    }
    let names: Vec<&str> = built.kernels.iter().map(|k| k.name.as_str()).collect();
    println!("  kernels: {}", names.join(", "));
    println!("  sources: {} file(s), hash {}", built.sources.len(), built.source_hash);
    println!(
        "  toolchain: {tc}{}",
        if built.validated { ", validated by ptxas" } else { ", NOT validated (no ptxas: no cubins)" }
    );
    println!("commit {} so machines without the device toolchain can build the crate", dest.display());
    Ok(ExitCode::SUCCESS)
}

pub fn emit(what: Emit, args: &CrateArgs, output: Option<&Path>) -> Result<ExitCode> {
    let t = target::resolve(args)?;
    let built = run_build(&t, args.trace)?;
    let path = match what {
        Emit::Ptx => built.ptx.clone(),
        Emit::Ir => built.ir.clone().ok_or("the build produced no LLVM IR")?,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    match output {
        Some(o) => {
            std::fs::write(o, &text).map_err(|e| format!("writing {}: {e}", o.display()))?;
            eprintln!("wrote {} ({} bytes) from {}", o.display(), text.len(), path.display());
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// One block per stage: name and time, then each command, input and output.
fn print_trace(stages: &[Stage]) {
    let total: f64 = stages.iter().map(|s| s.time.as_secs_f64()).sum();
    eprintln!("oxide pipeline ({} stages, {total:.3}s):", stages.len());
    for s in stages {
        eprintln!("[{}] {:.3}s", s.name, s.time.as_secs_f64());
        for c in &s.commands {
            eprintln!("  $ {c}");
        }
        for i in &s.inputs {
            eprintln!("  in:  {}", i.display());
        }
        for o in &s.outputs {
            eprintln!("  out: {}", o.display());
        }
    }
}
