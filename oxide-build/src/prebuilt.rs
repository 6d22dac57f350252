//! Prebuilt kernels: a directory committed with the crate (`cargo oxide build` writes it) that
//! holds the PTX, the cubins and the manifest with a hash of every kernel source. A machine
//! without the device toolchain uses it as long as the sources still hash the same; a stale
//! directory is an error naming the changed files and the command that refreshes it, never
//! silently used.

use crate::device_crate::write_if_changed;
use crate::error::{Error, ErrorKind};
use crate::manifest::{self, ManifestFile};
use crate::Output;
use std::path::{Path, PathBuf};

/// What a prebuilt directory supplies to the build, once found current.
pub(crate) struct Consumed {
    pub ptx: PathBuf,
    pub manifest: PathBuf,
    pub cubins: Vec<(String, PathBuf)>,
    pub cubins_rs: PathBuf,
    pub file: ManifestFile,
    /// The kernel sources, absolute, for `rerun-if-changed`.
    pub sources: Vec<PathBuf>,
    /// Requested archs the directory has no cubin for (their GPUs JIT-compile the PTX).
    pub missing_archs: Vec<String>,
}

pub(crate) struct Request<'a> {
    pub dir: &'a Path,
    pub manifest_dir: &'a Path,
    pub module: &'a str,
    /// The kernels module relative to the manifest directory, as the manifest records it.
    pub source: &'a str,
    pub archs: &'a [String],
    pub out_dir: &'a Path,
    /// Why the prebuilt directory is used (no toolchain, or forced), for messages.
    pub reason: &'a str,
}

/// How the build script's user regenerates `dir`.
pub(crate) fn refresh_command(manifest_dir: &Path, dir: &Path) -> String {
    let mut cmd = format!("cargo oxide build --manifest-path {}", manifest_dir.join("Cargo.toml").display());
    if dir != manifest_dir.join("kernels-prebuilt") {
        cmd.push_str(&format!(" --out {}", dir.display()));
    }
    cmd
}

/// A source of the manifest that no longer matches the file on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaleSource {
    /// As the manifest records it (relative to the crate's manifest directory).
    pub path: String,
    /// False when the file is gone.
    pub exists: bool,
    /// The `#[kernel]` functions the file defines now.
    pub kernels: Vec<String>,
}

/// Compares the manifest's source hashes with the files under `manifest_dir`.
pub fn stale_sources(file: &ManifestFile, manifest_dir: &Path) -> Vec<StaleSource> {
    let mut stale = Vec::new();
    for entry in &file.sources {
        let path = manifest_dir.join(&entry.path);
        match std::fs::read(&path) {
            Ok(bytes) if manifest::content_hash(&bytes) == entry.hash => {}
            Ok(bytes) => stale.push(StaleSource {
                path: entry.path.clone(),
                exists: true,
                kernels: kernels_in(&String::from_utf8_lossy(&bytes)),
            }),
            Err(_) => stale.push(StaleSource { path: entry.path.clone(), exists: false, kernels: Vec::new() }),
        }
    }
    stale
}

/// The names of `#[kernel]` functions in a source file (a textual scan: good enough to point
/// at what changed, never used to decide staleness).
fn kernels_in(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut pending = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with("//") {
            continue;
        }
        if line.starts_with("#[kernel") || line.starts_with("#[oxide_rt::kernel") {
            pending = true;
        }
        if pending {
            if let Some(rest) = line
                .split("fn ")
                .nth(1)
                .filter(|_| line.starts_with("pub") || line.starts_with("fn") || line.contains(" fn "))
            {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    names.push(name);
                    pending = false;
                }
            }
        }
    }
    names
}

/// Checks `req.dir` against the current sources and copies its PTX and cubins into
/// `$OUT_DIR/oxide/`, exactly where a real build would write them.
pub(crate) fn consume(req: &Request<'_>) -> Result<Consumed, Error> {
    let manifest_path = req.dir.join(format!("{}.manifest.json", req.module));
    let refresh = refresh_command(req.manifest_dir, req.dir);
    if !manifest_path.is_file() {
        return Err(Error::new(
            ErrorKind::Config,
            format!(
                "{}, and there are no prebuilt kernels to use instead: {} does not exist.\n  \
                 fix: on a machine with the device toolchain run `{refresh}` and commit {}",
                req.reason,
                manifest_path.display(),
                req.dir.display()
            ),
        ));
    }
    let file = ManifestFile::read(&manifest_path)?;
    if file.module != req.module || file.source != req.source {
        return Err(Error::new(
            ErrorKind::Config,
            format!(
                "the prebuilt kernels in {} are for `{}` (module `{}`), but this build compiles `{}`.\n  fix: `{refresh}`",
                req.dir.display(),
                file.source,
                file.module,
                req.source
            ),
        ));
    }
    let stale = stale_sources(&file, req.manifest_dir);
    let current = manifest::source_entries(
        &file.sources.iter().map(|s| req.manifest_dir.join(&s.path)).collect::<Vec<_>>(),
        req.manifest_dir,
    );
    let hash_ok = current.as_ref().map(|c| manifest::tree_hash(c) == file.source_hash).unwrap_or(false);
    if !stale.is_empty() || !hash_ok || file.sources.is_empty() {
        return Err(Error::new(ErrorKind::Config, stale_message(req, &stale, &refresh)));
    }

    let out = req.out_dir.join("oxide");
    std::fs::create_dir_all(&out).map_err(|e| Error::io(format!("creating {}", out.display()), e))?;
    let copy = |name: &str| -> Result<PathBuf, Error> {
        let (from, to) = (req.dir.join(name), out.join(name));
        let bytes = std::fs::read(&from).map_err(|e| {
            Error::io(format!("reading prebuilt {} (listed in {})", from.display(), manifest_path.display()), e)
        })?;
        if std::fs::read(&to).ok().as_deref() != Some(&bytes[..]) {
            std::fs::write(&to, &bytes).map_err(|e| Error::io(format!("writing {}", to.display()), e))?;
        }
        Ok(to)
    };
    let ptx = copy(&file.ptx)?;
    let mut cubins = Vec::new();
    for (arch, name) in &file.cubins {
        cubins.push((arch.clone(), copy(name)?));
    }
    let manifest = copy(&manifest_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())?;
    let cubins_rs = out.join(format!("{}.cubins.rs", req.module));
    write_if_changed(&cubins_rs, &cubins_expr(&cubins))?;
    let missing_archs = req.archs.iter().filter(|a| !file.cubins.iter().any(|(c, _)| c == *a)).cloned().collect();
    let sources = file.sources.iter().map(|s| req.manifest_dir.join(&s.path)).collect();
    Ok(Consumed { ptx, manifest, cubins, cubins_rs, file, sources, missing_archs })
}

fn stale_message(req: &Request<'_>, stale: &[StaleSource], refresh: &str) -> String {
    let mut lines = Vec::new();
    for s in stale {
        let kernels =
            if s.kernels.is_empty() { String::new() } else { format!(" (kernels: {})", s.kernels.join(", ")) };
        lines.push(if s.exists { format!("changed: {}{kernels}", s.path) } else { format!("missing: {}", s.path) });
    }
    if lines.is_empty() {
        lines.push("the manifest's source hash does not match its own file list (edited by hand?)".into());
    }
    format!(
        "the prebuilt kernels in {} are stale: the kernel sources changed since they were built, and they cannot be \
         rebuilt here ({}).\n  {}\n  fix: run `{refresh}` on a machine with the device toolchain and commit {}",
        req.dir.display(),
        req.reason,
        lines.join("\n  "),
        req.dir.display()
    )
}

/// The cubins as the Rust expression `include!`d next to the PTX (`OXIDE_CUBINS`).
pub(crate) fn cubins_expr(cubins: &[(String, PathBuf)]) -> String {
    let entries: Vec<String> = cubins
        .iter()
        .map(|(a, p)| format!("({a:?}, include_bytes!({:?}) as &[u8])", p.display().to_string()))
        .collect();
    format!("&[{}]\n", entries.join(", "))
}

/// Copies a build's PTX, cubins and manifest into `dest` (the directory to commit), removing
/// cubins of archs no longer built. Returns the files written.
pub fn export(out: &Output, dest: &Path) -> Result<Vec<PathBuf>, Error> {
    std::fs::create_dir_all(dest).map_err(|e| Error::io(format!("creating {}", dest.display()), e))?;
    let module = out.ptx.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut written = Vec::new();
    let mut copy = |from: &Path| -> Result<(), Error> {
        let to = dest.join(from.file_name().unwrap_or_default());
        std::fs::copy(from, &to)
            .map_err(|e| Error::io(format!("copying {} to {}", from.display(), to.display()), e))?;
        written.push(to);
        Ok(())
    };
    copy(&out.ptx)?;
    copy(&out.manifest)?;
    for (_, cubin) in &out.cubins {
        copy(cubin)?;
    }
    // An old `kernels.sm_80.cubin` left behind would not be listed, but would confuse readers.
    if let Ok(entries) = std::fs::read_dir(dest) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(&format!("{module}.")) && name.ends_with(".cubin") && !written.contains(&e.path()) {
                std::fs::remove_file(e.path())
                    .map_err(|err| Error::io(format!("removing the old {}", e.path().display()), err))?;
            }
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_kernel_names_in_source_text() {
        let text = "use oxide_rt::device::*;\n// #[kernel] in a comment\n#[kernel]\npub fn affine(a: f32) {}\n\
                    fn helper() {}\n#[kernel(launch_bounds(128))]\npub unsafe fn raw(p: *mut f32) {}\n";
        assert_eq!(kernels_in(text), vec!["affine".to_string(), "raw".to_string()]);
    }

    #[test]
    fn refresh_command_names_the_crate_and_a_non_default_dir() {
        let m = Path::new("/src/app");
        assert_eq!(
            refresh_command(m, &m.join("kernels-prebuilt")),
            "cargo oxide build --manifest-path /src/app/Cargo.toml"
        );
        assert_eq!(
            refresh_command(m, &m.join("ptx")),
            "cargo oxide build --manifest-path /src/app/Cargo.toml --out /src/app/ptx"
        );
    }
}
