//! The crate a command works on, found through `cargo metadata` (its package name, target
//! directory and the oxide-rt sources it depends on) plus the kernels settings its build.rs
//! gives oxide-build.

use crate::{CrateArgs, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Target {
    pub manifest_dir: PathBuf,
    pub package: String,
    pub target_dir: PathBuf,
    pub oxide_rt: PathBuf,
    /// The kernels module, relative to `manifest_dir`.
    pub kernels: PathBuf,
    pub archs: Vec<String>,
    /// Where prebuilt kernels live (absolute).
    pub prebuilt: PathBuf,
}

pub fn resolve(args: &CrateArgs) -> Result<Target> {
    let manifest = match &args.manifest_path {
        Some(p) => p.clone(),
        None => {
            let cwd = std::env::current_dir().map_err(|e| format!("reading the current directory: {e}"))?;
            cwd.ancestors().map(|d| d.join("Cargo.toml")).find(|p| p.is_file()).ok_or_else(|| {
                format!("no Cargo.toml in {} or above; pass --manifest-path <crate>/Cargo.toml", cwd.display())
            })?
        }
    };
    let manifest = manifest
        .canonicalize()
        .map_err(|e| format!("{}: {e}; pass --manifest-path <crate>/Cargo.toml", manifest.display()))?;
    let manifest_dir = manifest.parent().unwrap_or(Path::new("/")).to_path_buf();
    let meta = metadata(&manifest)?;
    let packages = meta["packages"].as_array().cloned().unwrap_or_default();
    let same = |v: &serde_json::Value| {
        v["manifest_path"].as_str().and_then(|p| Path::new(p).canonicalize().ok()).as_deref() == Some(&manifest)
    };
    let package = packages
        .iter()
        .find(|p| same(p))
        .and_then(|p| p["name"].as_str())
        .ok_or_else(|| format!("{} is not a package (a virtual workspace manifest?); pass the Cargo.toml of the crate with the kernels", manifest.display()))?
        .to_string();
    let oxide_rt = packages
        .iter()
        .find(|p| p["name"] == "oxide-rt")
        .and_then(|p| Path::new(p["manifest_path"].as_str()?).parent().map(Path::to_path_buf))
        .ok_or_else(|| {
            format!("`{package}` does not depend on oxide-rt, which kernels need; add `oxide-rt` to its [dependencies]")
        })?;
    let target_dir =
        meta["target_directory"].as_str().map(PathBuf::from).unwrap_or_else(|| manifest_dir.join("target"));

    // Defaults from build.rs: `kernels("..")`, `.arch("..")`, `.prebuilt("..")`.
    let build_rs = std::fs::read_to_string(manifest_dir.join("build.rs")).unwrap_or_default();
    let kernels = args
        .kernels
        .clone()
        .or_else(|| string_args(&build_rs, "kernels(").into_iter().next().map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("src/kernels.rs"));
    let prebuilt = manifest_dir
        .join(string_args(&build_rs, ".prebuilt(").into_iter().next().unwrap_or_else(|| "kernels-prebuilt".into()));
    let module = kernels.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let module = if module == "mod" {
        kernels.parent().and_then(|p| p.file_name()).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
    } else {
        module
    };
    let archs = if !args.archs.is_empty() {
        args.archs.clone()
    } else if let Ok(m) = oxide_build::ManifestFile::read(&prebuilt.join(format!("{module}.manifest.json"))) {
        m.archs
    } else {
        string_args(&build_rs, ".arch(")
    };
    Ok(Target { manifest_dir, package, target_dir, oxide_rt, kernels, archs, prebuilt })
}

impl Target {
    /// A builder for this crate outside a build script: explicit directories, no `cargo:` lines.
    /// `out` gets the PTX, cubins and manifest; the device build shares `<target>/oxide-device`
    /// with the crate's build script, so `core` and the kernels are not rebuilt twice.
    pub fn builder(&self, out: &Path) -> oxide_build::Build {
        let mut b = oxide_build::kernels(&self.kernels);
        b.manifest_dir(&self.manifest_dir)
            .out_dir(out)
            .target_dir(self.target_dir.join("oxide-device"))
            .oxide_rt_dir(&self.oxide_rt)
            .package(&self.package)
            .cargo_metadata(false);
        for a in &self.archs {
            b.arch(a);
        }
        b
    }

    /// A scratch directory for builds the CLI runs (never the crate's own OUT_DIR).
    pub fn work_dir(&self) -> PathBuf {
        self.target_dir.join("oxide-cli").join(&self.package)
    }
}

fn metadata(manifest: &Path) -> Result<serde_json::Value> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    cmd.args(["metadata", "--format-version", "1", "--manifest-path"]).arg(manifest);
    let out = cmd.output().map_err(|e| format!("running `{} metadata`: {e}", cargo.to_string_lossy()))?;
    if !out.status.success() {
        return Err(format!(
            "`cargo metadata --manifest-path {}` failed ({}):\n{}",
            manifest.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("parsing `cargo metadata` output: {e}"))
}

/// The string literals passed to `call` in `text` (`kernels("src/k.rs")` → `src/k.rs`),
/// skipping comments. A plain scan: build scripts that compute these need the CLI's flags.
fn string_args(text: &str, call: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines().map(|l| l.split("//").next().unwrap_or_default()) {
        let mut rest = line;
        while let Some(i) = rest.find(call) {
            rest = &rest[i + call.len()..];
            let arg = rest.trim_start();
            if let Some(s) = arg.strip_prefix('"') {
                if let Some(end) = s.find('"') {
                    found.push(s[..end].to_string());
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_build_rs_settings() {
        let rs = "fn main() {\n    // .arch(\"sm_50\")\n    oxide_build::kernels(\"src/gpu.rs\").arch(\"sm_80\").arch(\"sm_90\").prebuilt(\"ptx\").compile();\n}\n";
        assert_eq!(string_args(rs, "kernels("), vec!["src/gpu.rs"]);
        assert_eq!(string_args(rs, ".arch("), vec!["sm_80", "sm_90"]);
        assert_eq!(string_args(rs, ".prebuilt("), vec!["ptx"]);
    }
}
