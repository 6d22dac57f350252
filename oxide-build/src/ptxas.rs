//! Validates PTX with `ptxas` for each requested architecture and collects per-kernel
//! resource usage. Spills become warnings naming the kernel; rejections become errors.

use crate::error::{command_line, Error, ErrorKind};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelResources {
    pub registers: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
    pub stack_frame: u32,
    pub shared_bytes: u32,
}

pub(crate) struct Report {
    pub resources: BTreeMap<String, KernelResources>,
    pub command: String,
}

pub(crate) fn validate(ptxas: &Path, ptx: &Path, arch: &str, module: &str, cubin: &Path) -> Result<Report, Error> {
    let mut cmd = Command::new(ptxas);
    cmd.arg(format!("-arch={arch}")).arg("-v").arg(ptx).arg("-o").arg(cubin);
    let command = command_line(&cmd);
    let out = cmd
        .output()
        .map_err(|e| Error::new(ErrorKind::ToolExec, format!("failed to start ptxas: {e}\n  command: {command}")))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(Error::new(
            ErrorKind::Ptxas,
            format!(
                "ptxas rejected the PTX of kernels module `{module}` for {arch}:\n    {}\n  command: {command}",
                stderr.trim().replace('\n', "\n    ")
            ),
        ));
    }
    Ok(Report { resources: parse_verbose(&stderr), command })
}

/// Parses `ptxas -v` output:
/// ```text
/// ptxas info    : Compiling entry function 'saxpy' for 'sm_90'
/// ptxas info    : Function properties for saxpy
///     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
/// ptxas info    : Used 10 registers, 380 bytes cmem[0]
/// ```
pub(crate) fn parse_verbose(text: &str) -> BTreeMap<String, KernelResources> {
    let mut map: BTreeMap<String, KernelResources> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or_default().to_string();
            map.entry(name.clone()).or_default();
            current = Some(name);
        } else if let Some(rest) = line.split("Function properties for ").nth(1) {
            current = Some(rest.trim().to_string());
        } else if let Some(k) = current.as_ref().and_then(|c| map.get_mut(c)) {
            let num_before = |needle: &str| -> Option<u32> {
                let idx = line.find(needle)?;
                line[..idx].split(|c: char| !c.is_ascii_digit()).rfind(|s| !s.is_empty())?.parse().ok()
            };
            if line.contains("stack frame") {
                k.stack_frame = num_before(" bytes stack frame").unwrap_or(0);
                k.spill_stores = num_before(" bytes spill stores").unwrap_or(0);
                k.spill_loads = num_before(" bytes spill loads").unwrap_or(0);
            }
            if line.contains("Used ") {
                k.registers = num_before(" registers").unwrap_or(0);
                k.shared_bytes = num_before(" bytes smem").unwrap_or(0);
            }
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_registers_spills_and_shared() {
        let text = "ptxas info    : 0 bytes gmem\n\
            ptxas info    : Compiling entry function 'reduce' for 'sm_90'\n\
            ptxas info    : Function properties for reduce\n\
            \x20   16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n\
            ptxas info    : Used 40 registers, 1024 bytes smem, 380 bytes cmem[0]\n\
            ptxas info    : Compiling entry function 'saxpy' for 'sm_90'\n\
            ptxas info    : Function properties for saxpy\n\
            \x20   0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
            ptxas info    : Used 10 registers, 380 bytes cmem[0]\n";
        let m = parse_verbose(text);
        assert_eq!(
            m["reduce"],
            KernelResources { registers: 40, spill_stores: 8, spill_loads: 4, stack_frame: 16, shared_bytes: 1024 }
        );
        assert_eq!(m["saxpy"], KernelResources { registers: 10, ..Default::default() });
    }
}
