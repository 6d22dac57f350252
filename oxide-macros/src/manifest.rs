//! The device build's manifest (`$OXIDE_MANIFEST`, set by oxide-build for the crate's host
//! build), from which the host expansions prove that host and device agree on layouts.

use std::path::Path;

/// The manifest the crate's build script wrote, parsed; `None` when the crate is not built by
/// oxide-build (nothing to compare against).
pub(crate) fn path() -> Option<std::path::PathBuf> {
    std::env::var_os("OXIDE_MANIFEST").map(std::path::PathBuf::from)
}

fn read(path: &Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!("cannot read the oxide manifest {} (OXIDE_MANIFEST): {e}; hint: rebuild so the build script writes it again", path.display())
    })?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "the oxide manifest {} is not valid JSON: {e}; hint: rebuild so the build script writes it again",
            path.display()
        )
    })
}

/// `meta[record]` of the manifest at `path`; `Ok(None)` when the manifest has no such record.
pub(crate) fn read_record(path: &Path, record: &str) -> Result<Option<Vec<u64>>, String> {
    let json = read(path)?;
    let Some(values) = json.get("meta").and_then(|m| m.get(record)) else { return Ok(None) };
    values.as_array().and_then(|a| a.iter().map(|v| v.as_u64()).collect::<Option<Vec<u64>>>()).map(Some).ok_or_else(
        || format!("the layout record `{record}` in {} is not a list of integers; hint: rebuild", path.display()),
    )
}

/// Whether the device build at `path` has a kernel exported as `export`.
pub(crate) fn lists_kernel(path: &Path, export: &str) -> Result<bool, String> {
    let json = read(path)?;
    let kernels = json.get("kernels").and_then(|k| k.as_array());
    Ok(kernels.is_some_and(|ks| ks.iter().any(|k| k.get("name").and_then(|n| n.as_str()) == Some(export))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_layout_records() -> Result<(), Box<dyn std::error::Error>> {
        let dir = std::env::temp_dir().join(format!("oxide-macros-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let path = dir.join("m.json");
        std::fs::write(&path, r#"{"meta": {"__oxide_layout_P": [16, 8, 0, 8]}}"#)?;
        assert_eq!(read_record(&path, "__oxide_layout_P")?, Some(vec![16, 8, 0, 8]));
        assert_eq!(read_record(&path, "__oxide_layout_Q")?, None);
        let error = |path: &std::path::Path, record: &str| read_record(path, record).err().unwrap_or_default();
        std::fs::write(&path, r#"{"meta": {"__oxide_layout_P": [16, -1]}}"#)?;
        assert!(error(&path, "__oxide_layout_P").contains("not a list of integers"));
        std::fs::write(&path, "{")?;
        assert!(error(&path, "__oxide_layout_P").contains("not valid JSON"));
        assert!(error(&dir.join("missing.json"), "x").contains("cannot read"));
        std::fs::write(&path, r#"{"kernels": [{"name": "saxpy", "params": []}], "meta": {}}"#)?;
        assert!(lists_kernel(&path, "saxpy")? && !lists_kernel(&path, "sax")?);
        std::fs::write(&path, r#"{"meta": {}}"#)?;
        assert!(!lists_kernel(&path, "saxpy")?);
        std::fs::remove_dir_all(&dir)?;
        Ok(())
    }
}
