//! The manifest written next to the PTX: kernels and their parameters exactly as the PTX
//! declares them (the launch ABI on nvptx64), plus the source hash and toolchain versions.

use crate::ptxas::KernelResources;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

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
        let Some(rest) = line.trim().strip_prefix(".visible .entry ").or_else(|| line.trim().strip_prefix(".entry ")) else {
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

pub(crate) struct Manifest<'a> {
    pub module: &'a str,
    pub source: &'a Path,
    pub source_hash: String,
    pub archs: &'a [String],
    pub ptx_file: &'a str,
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
                let params: Vec<Value> =
                    k.params.iter().map(|p| json!({"ptx_type": p.ptx_type, "size": p.size, "align": p.align})).collect();
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
        let v = json!({
            "format": 1,
            "module": self.module,
            "source": self.source.to_string_lossy(),
            "source_hash": self.source_hash,
            "archs": self.archs,
            "ptx": self.ptx_file,
            "kernels": kernels,
            "meta": meta,
            "toolchain": self.toolchain,
        });
        serde_json::to_string_pretty(&v).unwrap_or_default()
    }
}

/// FNV-1a over the contents of `files` (sorted by path): stable across toolchains and
/// platforms, which prebuilt-PTX staleness checks need.
pub(crate) fn source_hash(files: &[std::path::PathBuf]) -> std::io::Result<String> {
    let mut files: Vec<_> = files.to_vec();
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in files {
        for b in f.to_string_lossy().bytes().chain([0]).chain(std::fs::read(&f)?).chain([0]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    Ok(format!("{h:016x}"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn hash_changes_with_content() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("k.rs");
        std::fs::write(&f, "a").unwrap();
        let h1 = source_hash(&[f.clone()]).unwrap();
        std::fs::write(&f, "b").unwrap();
        assert_ne!(h1, source_hash(&[f]).unwrap());
    }
}
