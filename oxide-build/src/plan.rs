//! The first stage: what to build, checked before anything runs. The kernels module and its
//! module name, where the outputs go, the architectures, and whether prebuilt kernels are asked
//! for; every later stage takes its paths and names from the [`Plan`].

use crate::error::{Error, ErrorKind};
use crate::{manifest, Build};
use std::path::{Path, PathBuf};

pub(crate) struct Plan {
    pub manifest_dir: PathBuf,
    /// The kernels module as the build script names it, for messages.
    pub rel: PathBuf,
    /// The kernels module file.
    pub source: PathBuf,
    /// `source` relative to the manifest directory, as manifests record it.
    pub source_rel: String,
    /// The directory holding the module file (`src` for `src/kernels.rs`).
    pub src_dir: PathBuf,
    /// `kernels` for `src/kernels.rs` and for `src/kernels/mod.rs`.
    pub module: String,
    pub out_dir: PathBuf,
    pub package: String,
    pub archs: Vec<String>,
    /// The one the PTX is generated for (the driver JIT-compiles it forward).
    pub lowest: String,
    /// The prebuilt kernels directory, absolute.
    pub prebuilt_dir: Option<PathBuf>,
}

fn config(msg: String) -> Error {
    Error::new(ErrorKind::Config, msg)
}

impl Plan {
    pub(crate) fn new(build: &Build) -> Result<Plan, Error> {
        let manifest_dir = match &build.manifest_dir {
            Some(d) => d.clone(),
            None => build.env.path("CARGO_MANIFEST_DIR").ok_or_else(|| {
                config(
                    "CARGO_MANIFEST_DIR is not set; run oxide-build from a build script or call .manifest_dir(..)"
                        .into(),
                )
            })?,
        };
        let rel = build
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
        let (src_dir, module) = module_name(&source);
        if module.is_empty()
            || !module.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || module.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(config(format!(
                "the kernels module file {} must be named like a Rust module (e.g. src/kernels.rs)",
                rel.display()
            )));
        }
        let out_dir = match &build.out_dir {
            Some(d) => d.clone(),
            None => build.env.path("OUT_DIR").ok_or_else(|| {
                config("OUT_DIR is not set; run oxide-build from a build script or call .out_dir(..)".into())
            })?,
        };
        let package =
            build.package.clone().or_else(|| build.env.var("CARGO_PKG_NAME")).unwrap_or_else(|| "kernels".into());
        let archs = if build.archs.is_empty() { vec!["sm_75".to_string()] } else { build.archs.clone() };
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
        let prebuilt_dir = build.prebuilt.as_ref().map(|d| manifest_dir.join(d));
        Ok(Plan {
            manifest_dir,
            rel,
            source,
            source_rel,
            src_dir,
            module,
            out_dir,
            package,
            archs,
            lowest,
            prebuilt_dir,
        })
    }

    /// Why the prebuilt kernels must be used even if a toolchain is here, if they must.
    pub(crate) fn forced_prebuilt(&self, build: &Build) -> Option<String> {
        self.prebuilt_dir.as_ref()?;
        ["OXIDE_FORCE_PREBUILT", "OXIDE_PREFER_PREBUILT"]
            .into_iter()
            .find(|var| build.env.var(var).is_some_and(|v| v != "0"))
            .map(|var| format!("{var}=1 is set"))
    }

    /// Why the prebuilt kernels stand in for a device toolchain that discovery did not find,
    /// if they can.
    pub(crate) fn prebuilt_fallback(&self, discovery: &Error) -> Option<String> {
        self.prebuilt_dir.as_ref()?;
        matches!(discovery.kind, ErrorKind::ToolchainNotFound | ErrorKind::MissingRustSrc)
            .then(|| discovery.message.lines().next().unwrap_or_default().trim_end_matches(':').to_string())
    }

    /// Where the PTX, cubins and manifest go.
    pub(crate) fn oxide_dir(&self) -> PathBuf {
        self.out_dir.join("oxide")
    }

    /// Where the IR and codegen stages keep their intermediate files.
    pub(crate) fn work_dir(&self) -> PathBuf {
        self.oxide_dir().join("work")
    }
}

/// The directory holding the module and the module's name: `src/kernels.rs` → (`src`,
/// `kernels`); `src/kernels/mod.rs` → (`src`, `kernels`) too.
fn module_name(source: &Path) -> (PathBuf, String) {
    if source.file_name().is_some_and(|n| n == "mod.rs") {
        let dir = source.parent().unwrap_or(Path::new("."));
        (
            dir.parent().unwrap_or(Path::new(".")).to_path_buf(),
            dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        )
    } else {
        let stem = source.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        (source.parent().unwrap_or(Path::new(".")).to_path_buf(), stem)
    }
}
