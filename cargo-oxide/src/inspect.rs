//! `cargo oxide inspect`: what a kernels module contains, from a manifest (a build's or a
//! prebuilt directory's) or by building it now.

use crate::target;
use crate::{CrateArgs, Result};
use oxide_build::ManifestFile;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn run(path: Option<&Path>, args: &CrateArgs, build: bool) -> Result<ExitCode> {
    let (manifest, crate_dir) = locate(path, args, build)?;
    let m = ManifestFile::read(&manifest).map_err(|e| e.to_string())?;
    print!("{}", render(&m, crate_dir.as_deref()));
    Ok(ExitCode::SUCCESS)
}

/// The manifest to show and, when known, the crate whose sources it is checked against.
fn locate(path: Option<&Path>, args: &CrateArgs, build: bool) -> Result<(PathBuf, Option<PathBuf>)> {
    let find_in = |dir: &Path| -> Option<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().ends_with(".manifest.json"))
            .collect();
        found.sort();
        found.into_iter().next()
    };
    if let Some(p) = path {
        if p.is_file() {
            return Ok((p.to_path_buf(), None));
        }
        if !p.join("Cargo.toml").is_file() {
            let m = find_in(p).ok_or_else(|| {
                format!("{} holds no *.manifest.json; pass a manifest, a prebuilt directory or a crate", p.display())
            })?;
            // A prebuilt directory sits in its crate: check the sources against it too.
            let crate_dir = p
                .canonicalize()
                .ok()
                .and_then(|d| d.ancestors().find(|a| a.join("Cargo.toml").is_file()).map(Path::to_path_buf));
            return Ok((m, crate_dir));
        }
    }
    let mut args = args.clone();
    if let Some(p) = path {
        args.manifest_path = Some(p.join("Cargo.toml"));
    }
    let t = target::resolve(&args)?;
    if !build {
        if let Some(m) = find_in(&t.prebuilt) {
            return Ok((m, Some(t.manifest_dir)));
        }
    }
    let out = crate::build::run_build(&t, args.trace)?;
    Ok((out.manifest, None))
}

pub fn render(m: &ManifestFile, crate_dir: Option<&Path>) -> String {
    let mut s = String::new();
    let dir = m.dir();
    let ptx = std::fs::read_to_string(dir.join(&m.ptx)).unwrap_or_default();
    let target = ptx.lines().find_map(|l| l.trim().strip_prefix(".target ")).unwrap_or("?");
    s += &format!("kernels module `{}` ({}) from {}\n", m.module, m.source, m.path.display());
    s += &format!("  source hash {} over {} file(s)", m.source_hash, m.sources.len());
    if let Some(c) = crate_dir {
        let stale = oxide_build::prebuilt::stale_sources(m, c);
        if stale.is_empty() {
            s += ": current\n";
        } else {
            let names: Vec<&str> = stale.iter().map(|x| x.path.as_str()).collect();
            s += &format!(": STALE (changed: {})\n", names.join(", "));
        }
    } else {
        s += "\n";
    }
    s += &format!("  PTX: {} ({} bytes, .target {target})\n", m.ptx, ptx.len());
    for (arch, f) in &m.cubins {
        let size = std::fs::metadata(dir.join(f)).map(|x| x.len()).unwrap_or(0);
        s += &format!("  cubin {arch}: {f} ({size} bytes)\n");
    }
    if m.cubins.is_empty() {
        s += "  cubins: none (ptxas did not run)\n";
    }
    let problems = oxide_build::prebuilt::check_files(m);
    if problems.is_empty() {
        s += "  files: match the manifest's SHA-256\n";
    } else {
        let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
        s += &format!(
            "  files: DO NOT MATCH the manifest (not usable as prebuilt kernels):\n    {}\n",
            lines.join("\n    ")
        );
    }
    let tc = &m.toolchain;
    s += &format!(
        "  built by: {} (LLVM {})\n",
        tc["rustc"].as_str().unwrap_or("?"),
        tc["llvm_major"].as_u64().map(|v| v.to_string()).unwrap_or_else(|| "?".into())
    );
    let lowest = m.archs.iter().min().cloned().unwrap_or_default();
    s += &format!(
        "\n  {:<24} {:>5} {:>12} {:>6} {:>7}  params (PTX ABI)\n",
        "kernel", "regs", "spill st/ld", "stack", "smem"
    );
    for k in &m.kernels {
        let params: Vec<String> = k
            .params
            .iter()
            .map(|p| if p.ptx_type == "b8" { format!("[{}B align {}]", p.size, p.align) } else { p.ptx_type.clone() })
            .collect();
        let (regs, spill, stack, smem) = match &k.resources {
            Some(r) => (
                r.registers.to_string(),
                format!("{}/{}", r.spill_stores, r.spill_loads),
                r.stack_frame.to_string(),
                r.shared_bytes.to_string(),
            ),
            None => ("-".into(), "-".into(), "-".into(), "-".into()),
        };
        s += &format!("  {:<24} {regs:>5} {spill:>12} {stack:>6} {smem:>7}  ({})\n", k.name, params.join(", "));
        if let Some(b) = m.meta.get(&format!("__oxide_launch_bounds_{}", k.name)) {
            s += &format!(
                "  {:<24} launch bounds: max {} threads/block, min {} blocks/SM\n",
                "",
                b.first().unwrap_or(&0),
                b.get(1).unwrap_or(&0)
            );
        }
    }
    if m.kernels.iter().any(|k| k.resources.is_some()) {
        s += &format!("  (resources from ptxas for {lowest}; smem = static shared memory in bytes)\n");
    }
    s
}
