//! Prebuilt kernels: a directory committed with the crate (`cargo oxide build` writes it) that
//! holds the PTX, the cubins and the manifest with the SHA-256 of every kernel source (the
//! kernels module among them) and of every PTX and cubin file. A machine without the device
//! toolchain uses it only when every one of those hashes still matches; a stale or edited
//! directory is an error naming the files that differ and the command that refreshes it, never
//! silently used.
//!
//! The hashes catch accidental and partial edits (a hand-patched PTX, a bad merge, a truncated
//! or swapped file); they are not a signature: whoever edits the manifest too can make it vouch
//! for anything, so review changes to a prebuilt directory like code.

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

impl crate::Traced for Consumed {
    fn trace(&self) -> crate::Trace {
        let mut outputs = vec![self.ptx.clone(), self.manifest.clone(), self.cubins_rs.clone()];
        outputs.extend(self.cubins.iter().map(|(_, p)| p.clone()));
        crate::Trace { commands: vec![], inputs: vec![self.file.path.clone()], outputs, warnings: vec![] }
    }
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

/// A file of a prebuilt directory that does not match its manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileProblem {
    /// The file's name in the prebuilt directory.
    pub file: String,
    pub what: FileMismatch,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileMismatch {
    /// The file's SHA-256 is not the one the manifest records.
    Changed { recorded: String, actual: String },
    /// The manifest lists the file but it is not there.
    Missing,
    /// The manifest lists the file but records no hash for it.
    NoHash,
    /// The manifest names something other than a plain file next to it (`../x`, `/abs`).
    NotInDirectory,
    /// A `<module>.*.cubin` in the directory that the manifest does not list (not embedded,
    /// but a sign the directory was edited by hand).
    Unlisted,
}

impl std::fmt::Display for FileProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.what {
            FileMismatch::Changed { recorded, actual } => write!(
                f,
                "changed: {} (the manifest records sha256 {recorded}, the file has sha256 {actual})",
                self.file
            ),
            FileMismatch::Missing => write!(f, "missing: {} (listed in the manifest)", self.file),
            FileMismatch::NoHash => write!(f, "no hash: {} (the manifest lists it without its sha256)", self.file),
            FileMismatch::NotInDirectory => {
                write!(f, "not in the directory: the manifest names `{}`, not a file next to it", self.file)
            }
            FileMismatch::Unlisted => write!(f, "not listed in the manifest: {}", self.file),
        }
    }
}

/// Compares the PTX and cubins next to the manifest with the SHA-256 it records for each.
pub fn check_files(file: &ManifestFile) -> Vec<FileProblem> {
    let dir = file.dir();
    let mut problems = Vec::new();
    let mut listed = vec![file.ptx.clone()];
    listed.extend(file.cubins.iter().map(|(_, f)| f.clone()));
    for name in &listed {
        let problem = |what| FileProblem { file: name.clone(), what };
        let plain = !name.is_empty() && Path::new(name).file_name().is_some_and(|n| n == name.as_str());
        if !plain {
            problems.push(problem(FileMismatch::NotInDirectory));
            continue;
        }
        let Some(recorded) = file.file_hashes.get(name) else {
            problems.push(problem(FileMismatch::NoHash));
            continue;
        };
        match std::fs::read(dir.join(name)) {
            Ok(bytes) => {
                let actual = manifest::content_hash(&bytes);
                if &actual != recorded {
                    problems.push(problem(FileMismatch::Changed { recorded: recorded.clone(), actual }));
                }
            }
            Err(_) => problems.push(problem(FileMismatch::Missing)),
        }
    }
    // `export` removes a module's old cubins, so one left over was put there by hand.
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut unlisted: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&format!("{}.", file.module)) && n.ends_with(".cubin") && !listed.contains(n))
            .collect();
        unlisted.sort();
        problems.extend(unlisted.into_iter().map(|file| FileProblem { file, what: FileMismatch::Unlisted }));
    }
    problems
}

/// Checks `req.dir` against the current sources and its own manifest, then copies its PTX and
/// cubins into `$OUT_DIR/oxide/`, exactly where a real build would write them.
pub(crate) fn consume(req: &Request<'_>) -> Result<Consumed, Error> {
    let manifest_path = req.dir.join(format!("{}.manifest.json", req.module));
    let refresh = refresh_command(req.manifest_dir, req.dir);
    let fix = format!("fix: run `{refresh}` on a machine with the device toolchain and commit {}", req.dir.display());
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
    let file = ManifestFile::read(&manifest_path)
        .map_err(|e| Error::new(e.kind, format!("the prebuilt kernels cannot be used: {e}\n  {fix}")))?;
    // How launchers pass arguments and what the entries expect is oxide's own contract, which
    // may change between versions: a prebuilt made by another oxide-build is not used.
    let built_by = file.toolchain.get("oxide_build").and_then(|v| v.as_str()).unwrap_or("an unknown version");
    if built_by != env!("CARGO_PKG_VERSION") {
        return Err(Error::new(
            ErrorKind::Config,
            format!(
                "the prebuilt kernels in {} were built by oxide-build {built_by}, and this is oxide-build {}: how \
                 launchers pass arguments to kernels may differ between versions, so they are not used.\n  {fix}",
                req.dir.display(),
                env!("CARGO_PKG_VERSION")
            ),
        ));
    }
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
    // Without the kernels module among the hashed sources, no edit of it would ever be noticed.
    if !file.sources.iter().any(|s| s.path == req.source) {
        let listed: Vec<&str> = file.sources.iter().map(|s| s.path.as_str()).collect();
        return Err(Error::new(
            ErrorKind::Config,
            format!(
                "the prebuilt kernels in {} cannot be checked: their manifest {} does not hash the kernels module {} \
                 (its sources: {}), so they may not match it (edited by hand?).\n  {fix}",
                req.dir.display(),
                manifest_path.display(),
                req.source,
                if listed.is_empty() { "none".to_string() } else { listed.join(", ") }
            ),
        ));
    }
    let problems = check_files(&file);
    if !problems.is_empty() {
        let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(Error::new(
            ErrorKind::Config,
            format!(
                "the prebuilt kernels in {} do not match their manifest {} (edited or damaged since `cargo oxide build` \
                 wrote them), so they are not used:\n  {}\n  {fix}",
                req.dir.display(),
                manifest_path.display(),
                lines.join("\n  ")
            ),
        ));
    }
    let stale = stale_sources(&file, req.manifest_dir);
    let current = manifest::source_entries(
        &file.sources.iter().map(|s| req.manifest_dir.join(&s.path)).collect::<Vec<_>>(),
        req.manifest_dir,
    );
    let hash_ok = current.as_ref().map(|c| manifest::tree_hash(c) == file.source_hash).unwrap_or(false);
    if !stale.is_empty() || !hash_ok {
        return Err(Error::new(ErrorKind::Config, stale_message(req, &stale, &refresh)));
    }
    // The PTX is the one the manifest hashed; its entries must also be the kernels (and
    // parameter layouts) the manifest declares, which the host launchers are checked against.
    let ptx_path = req.dir.join(&file.ptx);
    let ptx_text = std::fs::read_to_string(&ptx_path).map_err(|e| {
        Error::io(format!("reading prebuilt {} (listed in {})", ptx_path.display(), manifest_path.display()), e)
    })?;
    let entries = manifest::parse_entries(&ptx_text);
    let declared: Vec<(&str, &[manifest::Param])> =
        file.kernels.iter().map(|k| (k.name.as_str(), k.params.as_slice())).collect();
    let found: Vec<(&str, &[manifest::Param])> =
        entries.iter().map(|k| (k.name.as_str(), k.params.as_slice())).collect();
    if declared != found {
        let names = |v: &[(&str, &[manifest::Param])]| {
            v.iter()
                .map(|(n, ps)| format!("{n}({})", ps.iter().map(param_text).collect::<Vec<_>>().join(", ")))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(Error::new(
            ErrorKind::Config,
            format!(
                "the prebuilt kernels in {} do not match their manifest {}: it declares the kernels [{}] but {} defines [{}] \
                 (edited by hand?), so they are not used.\n  {fix}",
                req.dir.display(),
                manifest_path.display(),
                names(&declared),
                file.ptx,
                names(&found)
            ),
        ));
    }

    let out = req.out_dir.join("oxide");
    std::fs::create_dir_all(&out).map_err(|e| Error::io(format!("creating {}", out.display()), e))?;
    // Each file is hashed again as it is copied: what lands in `$OUT_DIR` is what was checked.
    let copy = |name: &str, expected: Option<&String>| -> Result<PathBuf, Error> {
        let (from, to) = (req.dir.join(name), out.join(name));
        let bytes = std::fs::read(&from).map_err(|e| {
            Error::io(format!("reading prebuilt {} (listed in {})", from.display(), manifest_path.display()), e)
        })?;
        if let Some(expected) = expected.filter(|h| **h != manifest::content_hash(&bytes)) {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "the prebuilt {} changed while it was being used (the manifest records sha256 {expected}).\n  {fix}",
                    from.display()
                ),
            ));
        }
        if std::fs::read(&to).ok().as_deref() != Some(&bytes[..]) {
            std::fs::write(&to, &bytes).map_err(|e| Error::io(format!("writing {}", to.display()), e))?;
        }
        Ok(to)
    };
    let ptx = copy(&file.ptx, file.file_hashes.get(&file.ptx))?;
    let mut cubins = Vec::new();
    for (arch, name) in &file.cubins {
        cubins.push((arch.clone(), copy(name, file.file_hashes.get(name))?));
    }
    let manifest =
        copy(&manifest_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), None)?;
    let cubins_rs = out.join(format!("{}.cubins.rs", req.module));
    write_if_changed(&cubins_rs, &cubins_expr(&cubins))?;
    let missing_archs = req.archs.iter().filter(|a| !file.cubins.iter().any(|(c, _)| c == *a)).cloned().collect();
    let sources = file.sources.iter().map(|s| req.manifest_dir.join(&s.path)).collect();
    Ok(Consumed { ptx, manifest, cubins, cubins_rs, file, sources, missing_archs })
}

/// `f32`, or `b8[24B align 8]` for a parameter whose size or alignment is not its type's own.
fn param_text(p: &manifest::Param) -> String {
    let bytes = p.ptx_type.get(1..).and_then(|b| b.parse::<u32>().ok()).unwrap_or(0) / 8;
    if p.size == bytes && p.align == bytes {
        p.ptx_type.clone()
    } else {
        format!("{}[{}B align {}]", p.ptx_type, p.size, p.align)
    }
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
    // An old `kernels.sm_80.cubin` left behind would not be listed, but would confuse readers
    // (and makes `consume` refuse the directory).
    if let Ok(entries) = std::fs::read_dir(dest) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(&format!("{module}.")) && name.ends_with(".cubin") && !written.contains(&e.path()) {
                std::fs::remove_file(e.path())
                    .map_err(|err| Error::io(format!("removing the old {}", e.path().display()), err))?;
            }
        }
    }
    // What was written must pass the check a stable-only build will make.
    let manifest_path = dest.join(out.manifest.file_name().unwrap_or_default());
    let problems = check_files(&ManifestFile::read(&manifest_path)?);
    if !problems.is_empty() {
        let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(Error::new(
            ErrorKind::Io,
            format!(
                "the files copied to {} do not match their manifest (changed while being copied?):\n  {}\n  \
                 fix: run the command again",
                dest.display(),
                lines.join("\n  ")
            ),
        ));
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

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn check_files_names_each_file_that_differs_from_the_manifest() -> TestResult {
        let dir = tempfile::tempdir()?;
        let d = dir.path();
        std::fs::write(d.join("k.ptx"), "PTX")?;
        std::fs::write(d.join("k.sm_90.cubin"), "CUBIN")?;
        let hash = |name: &str| -> std::io::Result<(String, String)> {
            Ok((name.to_string(), manifest::content_hash(&std::fs::read(d.join(name))?)))
        };
        let cubins = [("sm_90".to_string(), "k.sm_90.cubin".to_string())];
        let write = |file_hashes: &[(String, String)], ptx: &str| {
            let m = manifest::Manifest {
                module: "k",
                source: "src/k.rs",
                source_hash: String::new(),
                sources: &[],
                archs: &[],
                ptx_file: ptx,
                cubins: &cubins,
                file_hashes,
                kernels: &[],
                meta: &[],
                toolchain: serde_json::Value::Null,
            };
            std::fs::write(d.join("k.manifest.json"), m.to_json())?;
            ManifestFile::read(&d.join("k.manifest.json")).map_err(|e| std::io::Error::other(e.to_string()))
        };
        let good = [hash("k.ptx")?, hash("k.sm_90.cubin")?];
        assert_eq!(check_files(&write(&good, "k.ptx")?), vec![]);

        std::fs::write(d.join("k.ptx"), "PTy")?;
        let problems = check_files(&write(&good, "k.ptx")?);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].file, "k.ptx");
        assert!(matches!(&problems[0].what, FileMismatch::Changed { recorded, .. } if *recorded == good[0].1));

        std::fs::remove_file(d.join("k.sm_90.cubin"))?;
        std::fs::write(d.join("k.sm_80.cubin"), "OLD")?;
        let problems = check_files(&write(&[hash("k.ptx")?], "../k.ptx")?);
        let found: Vec<(&str, &FileMismatch)> = problems.iter().map(|p| (p.file.as_str(), &p.what)).collect();
        assert_eq!(
            found,
            [
                ("../k.ptx", &FileMismatch::NotInDirectory),
                ("k.sm_90.cubin", &FileMismatch::NoHash),
                ("k.sm_80.cubin", &FileMismatch::Unlisted)
            ]
        );
        let problems = check_files(&write(&[hash("k.ptx")?, good[1].clone()], "k.ptx")?);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(problems[0].what, FileMismatch::Missing, "{problems:?}");
        assert_eq!(problems[0].to_string(), "missing: k.sm_90.cubin (listed in the manifest)");
        Ok(())
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
