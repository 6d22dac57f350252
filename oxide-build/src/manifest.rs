//! The manifest written next to the PTX: kernels and their parameters exactly as the PTX
//! declares them (the launch ABI on nvptx64), the SHA-256 of every kernel source and of every
//! PTX and cubin file it describes, and the toolchain versions.
//!
//! Format 2 (this one) hashes with SHA-256; format 1 had FNV source hashes and no file hashes,
//! so a prebuilt directory written by it cannot be checked and must be regenerated.

use crate::device_crate::write_if_changed;
use crate::error::{Error, ErrorKind};
use crate::ir::MetaRecord;
use crate::plan::Plan;
use crate::ptxas::{self, KernelResources};
use crate::toolchain::Toolchain;
use crate::{codegen, prebuilt};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// PTX type (`u64`, `f32`, `b8` for aggregates, …).
    pub ptx_type: String,
    pub size: u32,
    pub align: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    pub name: String,
    pub params: Vec<Param>,
    /// Filled from ptxas when it ran.
    pub resources: Option<KernelResources>,
}

/// Reads every `.entry` of a PTX module with its `.param` list.
pub fn parse_entries(ptx: &str) -> Vec<KernelInfo> {
    let mut kernels = Vec::new();
    let mut lines = ptx.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line.trim().strip_prefix(".visible .entry ").or_else(|| line.trim().strip_prefix(".entry "))
        else {
            continue;
        };
        let name = rest.split('(').next().unwrap_or_default().trim().to_string();
        let mut params = Vec::new();
        let mut decl = rest.split_once('(').map(|(_, r)| r.to_string()).unwrap_or_default();
        while !decl.contains(')') {
            match lines.next() {
                Some(l) => decl.push_str(l),
                None => break,
            }
        }
        let decl = decl.split(')').next().unwrap_or_default();
        for p in decl.split(',').map(str::trim).filter(|p| p.starts_with(".param")) {
            params.push(parse_param(p));
        }
        kernels.push(KernelInfo { name, params, resources: None });
    }
    kernels
}

/// `.param .u64 .ptr .align 1 k_param_0`, `.param .f32 k_param_1`, `.param .align 8 .b8 k_param_2[24]`.
fn parse_param(p: &str) -> Param {
    let words: Vec<&str> = p.split_whitespace().collect();
    let ty = words.iter().find(|w| {
        let w = w.trim_start_matches('.');
        w.len() >= 2 && matches!(&w[..1], "u" | "s" | "f" | "b") && w[1..].chars().all(|c| c.is_ascii_digit())
    });
    let ptx_type = ty.map(|t| t.trim_start_matches('.').to_string()).unwrap_or_default();
    let bits: u32 = ptx_type.get(1..).and_then(|b| b.parse().ok()).unwrap_or(0);
    let elem = bits / 8;
    let count = words
        .last()
        .and_then(|n| n.split_once('[').map(|(_, c)| c.trim_end_matches(']').parse::<u32>().unwrap_or(1)))
        .unwrap_or(1);
    let explicit_align = words.iter().position(|w| *w == ".align").and_then(|i| words.get(i + 1)?.parse().ok());
    // `.ptr .align 1` describes the pointee; the parameter itself is aligned to its size.
    let is_ptr = words.contains(&".ptr");
    let align = if is_ptr { elem } else { explicit_align.unwrap_or(elem) };
    Param { ptx_type, size: elem * count, align }
}

/// One kernel source file as the manifest records it: its path relative to the crate's manifest
/// directory (so a prebuilt directory stays valid in any checkout) and its content hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceEntry {
    pub path: String,
    pub hash: String,
}

/// The manifest format this oxide-build writes and reads.
pub const FORMAT: u64 = 2;

pub(crate) struct Input<'a> {
    pub plan: &'a Plan,
    pub toolchain: &'a Toolchain,
    /// The files the device build read, the toolchain's own and the generated root left out.
    pub sources: &'a [PathBuf],
    pub meta: &'a [MetaRecord],
    pub ptx: &'a codegen::Ptx,
    pub checked: &'a ptxas::Checked,
}

/// The manifest stage's result: the manifest and the cubins expression, both written.
pub(crate) struct Written {
    pub manifest: PathBuf,
    /// The cubins as a Rust expression that `include!` embeds next to the PTX.
    pub cubins_rs: PathBuf,
    /// The hash of the crate's own kernel sources, which prebuilt kernels are checked against.
    pub source_hash: String,
    sources: Vec<PathBuf>,
}

impl crate::Traced for Written {
    fn trace(&self) -> crate::Trace {
        crate::Trace {
            commands: vec![],
            inputs: self.sources.clone(),
            outputs: vec![self.manifest.clone(), self.cubins_rs.clone()],
            warnings: vec![],
        }
    }
}

/// Hashes the kernel sources and the files written, and writes the manifest and the cubins
/// expression.
pub(crate) fn write(input: &Input<'_>) -> Result<Written, Error> {
    let plan = input.plan;
    let module = &plan.module;
    // The crate's own kernel sources define the prebuilt hash; oxide-rt/oxide-macros are
    // versioned dependencies, tracked for rebuilds but not part of the kernels' identity.
    // The kernels module itself is always among them: prebuilt kernels are refused when their
    // manifest does not hash it.
    let mut own: Vec<PathBuf> = input.sources.iter().filter(|p| p.starts_with(&plan.manifest_dir)).cloned().collect();
    own.push(plan.source.clone());
    let entries = source_entries(&own, &plan.manifest_dir).map_err(|e| Error::io("hashing kernel sources", e))?;
    let hash = tree_hash(&entries);
    let meta: Vec<(String, Vec<u64>)> = input.meta.iter().map(|m| (m.name.clone(), m.values.clone())).collect();
    let cubins = &input.checked.cubins;
    let cubin_files: Vec<(String, String)> = cubins
        .iter()
        .map(|(a, p)| (a.clone(), p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()))
        .collect();
    // What the manifest vouches for: the PTX and cubins exactly as written (a prebuilt
    // directory is checked against these before anything is embedded).
    let mut file_hashes = vec![(format!("{module}.ptx"), content_hash(input.ptx.text.as_bytes()))];
    for ((_, path), (_, name)) in cubins.iter().zip(&cubin_files) {
        let bytes = std::fs::read(path).map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        file_hashes.push((name.clone(), content_hash(&bytes)));
    }
    let tc = input.toolchain;
    let manifest = Manifest {
        module,
        source: &plan.source_rel,
        source_hash: hash.clone(),
        sources: &entries,
        archs: &plan.archs,
        ptx_file: &format!("{module}.ptx"),
        cubins: &cubin_files,
        file_hashes: &file_hashes,
        kernels: &input.checked.kernels,
        meta: &meta,
        toolchain: json!({
            "origin": tc.origin,
            "rustc": tc.rustc_version,
            "llvm_major": tc.llvm_major,
            "llc": tc.llc.as_ref().map(|p| p.display().to_string()),
            "ptxas": tc.ptxas.as_ref().map(|p| p.display().to_string()),
            "libdevice": tc.libdevice.as_ref().map(|p| p.display().to_string()),
            "oxide_build": env!("CARGO_PKG_VERSION"),
        }),
    };
    let manifest_path = plan.oxide_dir().join(format!("{module}.manifest.json"));
    write_if_changed(&manifest_path, &manifest.to_json())?;
    let cubins_rs = plan.oxide_dir().join(format!("{module}.cubins.rs"));
    write_if_changed(&cubins_rs, &prebuilt::cubins_expr(cubins))?;
    Ok(Written { manifest: manifest_path, cubins_rs, source_hash: hash, sources: input.sources.to_vec() })
}

pub(crate) struct Manifest<'a> {
    pub module: &'a str,
    /// The kernels module, relative to the crate's manifest directory when it lies inside it.
    pub source: &'a str,
    pub source_hash: String,
    pub sources: &'a [SourceEntry],
    pub archs: &'a [String],
    pub ptx_file: &'a str,
    /// (arch, cubin file name next to the manifest).
    pub cubins: &'a [(String, String)],
    /// (file name next to the manifest, SHA-256) of the PTX and of every cubin.
    pub file_hashes: &'a [(String, String)],
    pub kernels: &'a [KernelInfo],
    pub meta: &'a [(String, Vec<u64>)],
    pub toolchain: Value,
}

impl Manifest<'_> {
    pub fn to_json(&self) -> String {
        let kernels: Vec<Value> = self
            .kernels
            .iter()
            .map(|k| {
                let params: Vec<Value> = k
                    .params
                    .iter()
                    .map(|p| json!({"ptx_type": p.ptx_type, "size": p.size, "align": p.align}))
                    .collect();
                let mut v = json!({"name": k.name, "params": params});
                if let Some(r) = &k.resources {
                    v["resources"] = json!({
                        "registers": r.registers, "spill_stores": r.spill_stores, "spill_loads": r.spill_loads,
                        "stack_frame": r.stack_frame, "shared_bytes": r.shared_bytes,
                    });
                }
                v
            })
            .collect();
        let meta: BTreeMap<&str, &Vec<u64>> = self.meta.iter().map(|(k, v)| (k.as_str(), v)).collect();
        let sources: Vec<Value> = self.sources.iter().map(|s| json!({"path": s.path, "hash": s.hash})).collect();
        let cubins: BTreeMap<&str, &str> = self.cubins.iter().map(|(a, f)| (a.as_str(), f.as_str())).collect();
        let files: BTreeMap<&str, &str> = self.file_hashes.iter().map(|(f, h)| (f.as_str(), h.as_str())).collect();
        let v = json!({
            "format": FORMAT,
            "module": self.module,
            "source": self.source,
            "source_hash": self.source_hash,
            "sources": sources,
            "archs": self.archs,
            "ptx": self.ptx_file,
            "cubins": cubins,
            "file_sha256": files,
            "kernels": kernels,
            "meta": meta,
            "toolchain": self.toolchain,
        });
        serde_json::to_string_pretty(&v).unwrap_or_default()
    }
}

/// A manifest read back from disk (a build's `$OUT_DIR/oxide/` or a prebuilt directory).
#[derive(Clone, Debug)]
pub struct ManifestFile {
    /// The file itself; `ptx` and `cubins` are relative to its directory.
    pub path: PathBuf,
    pub module: String,
    pub source: String,
    pub source_hash: String,
    pub sources: Vec<SourceEntry>,
    pub archs: Vec<String>,
    pub ptx: String,
    pub cubins: Vec<(String, String)>,
    /// File name (next to the manifest) → SHA-256 of the PTX and every cubin as written.
    pub file_hashes: BTreeMap<String, String>,
    pub kernels: Vec<KernelInfo>,
    pub meta: BTreeMap<String, Vec<u64>>,
    pub toolchain: Value,
}

impl ManifestFile {
    pub fn read(path: &Path) -> Result<ManifestFile, Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::io(format!("reading the kernels manifest {}", path.display()), e))?;
        let bad = |what: &str| {
            Error::new(ErrorKind::Config, format!("{} is not an oxide kernels manifest: {what}", path.display()))
        };
        let v: Value = serde_json::from_str(&text).map_err(|e| bad(&e.to_string()))?;
        match v["format"].as_u64() {
            Some(FORMAT) => {}
            Some(1) => {
                return Err(bad(
                    "it has \"format\": 1, written by an older oxide-build without SHA-256 hashes of its PTX and \
                     cubins, so it cannot be checked; regenerate it with this version of oxide (`cargo oxide build`)",
                ))
            }
            _ => {
                return Err(bad(&format!(
                    "unknown \"format\" (expected {FORMAT}); regenerate it with this version of oxide (`cargo oxide build`)"
                )))
            }
        }
        let s = |k: &str| v[k].as_str().map(str::to_string).ok_or_else(|| bad(&format!("missing \"{k}\"")));
        let u = |r: &Value, k: &str| r[k].as_u64().unwrap_or(0) as u32;
        let kernels = v["kernels"]
            .as_array()
            .ok_or_else(|| bad("missing \"kernels\""))?
            .iter()
            .map(|k| KernelInfo {
                name: k["name"].as_str().unwrap_or_default().to_string(),
                params: k["params"]
                    .as_array()
                    .map(|ps| {
                        ps.iter()
                            .map(|p| Param {
                                ptx_type: p["ptx_type"].as_str().unwrap_or_default().into(),
                                size: u(p, "size"),
                                align: u(p, "align"),
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                resources: k.get("resources").map(|r| KernelResources {
                    registers: u(r, "registers"),
                    spill_stores: u(r, "spill_stores"),
                    spill_loads: u(r, "spill_loads"),
                    stack_frame: u(r, "stack_frame"),
                    shared_bytes: u(r, "shared_bytes"),
                    ..Default::default()
                }),
            })
            .collect();
        let strings = |k: &str| -> Vec<String> {
            v[k].as_array()
                .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
                .unwrap_or_default()
        };
        Ok(ManifestFile {
            path: path.to_path_buf(),
            module: s("module")?,
            source: s("source")?,
            source_hash: s("source_hash")?,
            sources: v["sources"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|e| SourceEntry {
                            path: e["path"].as_str().unwrap_or_default().into(),
                            hash: e["hash"].as_str().unwrap_or_default().into(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            archs: strings("archs"),
            ptx: s("ptx")?,
            cubins: v["cubins"]
                .as_object()
                .map(|o| o.iter().filter_map(|(a, f)| Some((a.clone(), f.as_str()?.to_string()))).collect())
                .unwrap_or_default(),
            file_hashes: v["file_sha256"]
                .as_object()
                .map(|o| o.iter().filter_map(|(f, h)| Some((f.clone(), h.as_str()?.to_string()))).collect())
                .unwrap_or_default(),
            kernels,
            meta: v["meta"]
                .as_object()
                .map(|o| {
                    o.iter()
                        .map(|(k, a)| {
                            (
                                k.clone(),
                                a.as_array().map(|a| a.iter().filter_map(Value::as_u64).collect()).unwrap_or_default(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default(),
            toolchain: v["toolchain"].clone(),
        })
    }

    /// The directory holding the manifest, its PTX and cubins.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }
}

/// `p` relative to `base` with `/` separators when it lies inside `base`, else `p` as is.
pub fn relative(p: &Path, base: &Path) -> String {
    match p.strip_prefix(base) {
        Ok(rel) => rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"),
        Err(_) => p.to_string_lossy().into_owned(),
    }
}

/// Path and content hash of each source, sorted by path.
pub(crate) fn source_entries(files: &[PathBuf], base: &Path) -> std::io::Result<Vec<SourceEntry>> {
    let mut entries = files
        .iter()
        .map(|f| Ok(SourceEntry { path: relative(f, base), hash: content_hash(&std::fs::read(f)?) }))
        .collect::<std::io::Result<Vec<_>>>()?;
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    entries.dedup();
    Ok(entries)
}

/// SHA-256 of one file's bytes, as 64 lowercase hex digits.
pub fn content_hash(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The hash of all sources: over their relative paths and content hashes, so it is the same in
/// every checkout of the crate (prebuilt kernels are checked against it).
pub fn tree_hash(entries: &[SourceEntry]) -> String {
    let mut text = String::new();
    for e in entries {
        text.push_str(&e.path);
        text.push('\0');
        text.push_str(&e.hash);
        text.push('\n');
    }
    content_hash(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn parses_entries_and_params() {
        let ptx = "//\n.version 7.8\n.target sm_90\n\
            .visible .entry saxpy(\n\t.param .f32 saxpy_param_0,\n\t.param .u64 .ptr .align 1 saxpy_param_1,\n\
            \t.param .u64 saxpy_param_2\n)\n{\n ret;\n}\n\
            .visible .entry s(\n\t.param .align 8 .b8 s_param_0[24]\n)\n{\n}\n.func helper()\n{\n}\n";
        let k = parse_entries(ptx);
        assert_eq!(k.len(), 2);
        assert_eq!(k[0].name, "saxpy");
        assert_eq!(
            k[0].params,
            vec![
                Param { ptx_type: "f32".into(), size: 4, align: 4 },
                Param { ptx_type: "u64".into(), size: 8, align: 8 },
                Param { ptx_type: "u64".into(), size: 8, align: 8 },
            ]
        );
        assert_eq!(k[1].params, vec![Param { ptx_type: "b8".into(), size: 24, align: 8 }]);
    }

    #[test]
    fn hash_changes_with_content_but_not_with_the_checkout_location() -> TestResult {
        let (a, b) = (tempfile::tempdir()?, tempfile::tempdir()?);
        for d in [&a, &b] {
            std::fs::create_dir_all(d.path().join("src"))?;
            std::fs::write(d.path().join("src/k.rs"), "a")?;
        }
        let hash = |d: &Path| source_entries(&[d.join("src/k.rs")], d).map(|e| tree_hash(&e));
        assert_eq!(hash(a.path())?, hash(b.path())?, "same sources in two checkouts");
        let entries = source_entries(&[a.path().join("src/k.rs")], a.path())?;
        assert_eq!(entries[0].path, "src/k.rs");
        let h1 = hash(a.path())?;
        std::fs::write(a.path().join("src/k.rs"), "b")?;
        assert_ne!(h1, hash(a.path())?);
        Ok(())
    }

    #[test]
    fn manifest_round_trips() -> TestResult {
        let dir = tempfile::tempdir()?;
        let kernels = vec![KernelInfo {
            name: "k".into(),
            params: vec![Param { ptx_type: "f32".into(), size: 4, align: 4 }],
            resources: Some(KernelResources { registers: 12, spill_stores: 4, ..Default::default() }),
        }];
        let sources = vec![SourceEntry { path: "src/kernels.rs".into(), hash: "00ff".into() }];
        let m = Manifest {
            module: "kernels",
            source: "src/kernels.rs",
            source_hash: "abcd".into(),
            sources: &sources,
            archs: &["sm_90".to_string()],
            ptx_file: "kernels.ptx",
            cubins: &[("sm_90".to_string(), "kernels.sm_90.cubin".to_string())],
            file_hashes: &[
                ("kernels.ptx".to_string(), "11".repeat(32)),
                ("kernels.sm_90.cubin".to_string(), "22".repeat(32)),
            ],
            kernels: &kernels,
            meta: &[("__oxide_launch_bounds_k".to_string(), vec![128, 0])],
            toolchain: json!({"rustc": "rustc 1.96.0"}),
        };
        let path = dir.path().join("kernels.manifest.json");
        std::fs::write(&path, m.to_json())?;
        let back = ManifestFile::read(&path)?;
        assert_eq!(back.kernels, kernels);
        assert_eq!(back.sources, sources);
        assert_eq!(back.cubins, vec![("sm_90".to_string(), "kernels.sm_90.cubin".to_string())]);
        assert_eq!(back.file_hashes["kernels.ptx"], "11".repeat(32));
        assert_eq!(back.file_hashes["kernels.sm_90.cubin"], "22".repeat(32));
        assert_eq!(back.meta["__oxide_launch_bounds_k"], vec![128, 0]);
        assert_eq!(
            (back.module.as_str(), back.source_hash.as_str(), back.ptx.as_str()),
            ("kernels", "abcd", "kernels.ptx")
        );
        std::fs::write(&path, "{}")?;
        let Err(err) = ManifestFile::read(&path) else { return Err("`{}` should not read as a manifest".into()) };
        assert!(err.to_string().contains("not an oxide kernels manifest"), "{err}");
        // A format-1 manifest has no file hashes: it cannot be checked, so it is not read.
        std::fs::write(&path, m.to_json().replace("\"format\": 2", "\"format\": 1"))?;
        let Err(err) = ManifestFile::read(&path) else { return Err("a format-1 manifest should not be read".into()) };
        assert!(err.to_string().contains("\"format\": 1") && err.to_string().contains("cargo oxide build"), "{err}");
        Ok(())
    }

    #[test]
    fn content_hash_is_sha256() {
        assert_eq!(content_hash(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(content_hash(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}
