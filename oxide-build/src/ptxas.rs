//! Validates PTX with `ptxas` for each requested architecture and collects per-kernel
//! resource usage. Spills become warnings naming the kernel; rejections become errors. Results
//! are cached per PTX text (see [`Cache`]).

use crate::error::{command_line, Error, ErrorKind};
use crate::manifest::{self, KernelInfo};
use crate::{codegen, toolchain};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelResources {
    pub registers: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
    pub stack_frame: u32,
    pub shared_bytes: u32,
    /// The entry's stack including every function it calls (`N bytes cumulative stack size`,
    /// newer ptxas), 0 when not reported.
    pub cumulative_stack: u32,
    /// ptxas could not bound the stack (recursion, or calls through function pointers):
    /// `Stack size for entry function 'k' cannot be statically determined`.
    pub stack_unbounded: bool,
}

/// A stack frame above this many bytes per thread gets a build warning: local memory is slow
/// (it lives in device memory) and the driver reserves it for every resident thread.
pub const STACK_WARN_BYTES: u32 = 16 * 1024;
/// Per-thread local memory a GPU thread can have: larger kernels can never launch.
pub const STACK_LIMIT_BYTES: u32 = 512 * 1024;
/// Static shared memory a kernel may declare (`__shared__` arrays: 48 KiB on every GPU).
pub const STATIC_SHARED_LIMIT_BYTES: u32 = 48 * 1024;
/// Static shared memory above this gets a build warning (near the 48 KiB limit; and every byte
/// of it is unavailable to the launch's dynamic shared memory).
pub const STATIC_SHARED_WARN_BYTES: u32 = 40 * 1024;

/// A stack frame of at least this many bytes without spills means local arrays (libdevice's
/// sin/cos range reduction alone keeps 32-40 bytes there, as under nvcc).
pub const LOCAL_ARRAY_HINT_BYTES: u32 = 64;

/// The build warnings (without the `cargo:warning=` prefix) for kernel `name`'s resources on
/// `arch`: large or unbounded stacks, static shared memory near the limit, and — when
/// `local_arrays` (builds without device-side panic formatting, whose buffers live on the
/// stack too) — arrays left in local memory.
pub fn resource_warnings(name: &str, arch: &str, r: &KernelResources, local_arrays: bool) -> Vec<String> {
    let mut out = Vec::new();
    let stack = r.stack_frame.max(r.cumulative_stack);
    let spills = r.spill_stores > 0 || r.spill_loads > 0;
    if local_arrays && !spills && !r.stack_unbounded && (LOCAL_ARRAY_HINT_BYTES..=STACK_WARN_BYTES).contains(&stack) {
        // The frontier of the untuned suite (BENCHMARKS.md): 7x-44x nvcc's time from this alone.
        out.push(format!(
            "kernel `{name}` keeps {stack} bytes of local variables in local memory (device memory) on {arch}: an array \
             indexed with a value that is not a compile-time constant in the end; common causes: iterating an array \
             by value (`for v in [a, b, c]`: iterate `&[a, b, c]` or an index range instead) or indexing a local \
             array in a loop the compiler does not unroll"
        ));
    }
    if stack > STACK_LIMIT_BYTES {
        out.push(format!(
            "kernel `{name}` needs {stack} bytes of stack (local memory) per thread on {arch}, more than the \
             {STACK_LIMIT_BYTES} bytes a GPU thread can have: every launch will be refused; move large local \
             arrays to a device buffer or to shared memory"
        ));
    } else if stack > STACK_WARN_BYTES {
        out.push(format!(
            "kernel `{name}` uses {stack} bytes of stack (local memory) per thread on {arch} (above {STACK_WARN_BYTES}): \
             local memory lives in device memory and is reserved for every resident thread; consider a device \
             buffer or shared memory for large local arrays"
        ));
    }
    if r.stack_unbounded {
        out.push(format!(
            "kernel `{name}`: ptxas cannot bound its stack on {arch} (recursion, or calls through function pointers \
             such as `dyn` methods or formatting); a deep call chain overflows the per-thread stack at run time \
             (an illegal-address fault that loses the CUDA context)"
        ));
    }
    if r.shared_bytes > STATIC_SHARED_WARN_BYTES {
        out.push(format!(
            "kernel `{name}` declares {} bytes of static shared memory on {arch}, near the {STATIC_SHARED_LIMIT_BYTES}-byte \
             limit for static arrays; launches have that much less room for dynamic shared memory \
             (use `dynamic_shared` for large buffers)",
            r.shared_bytes
        ));
    }
    out
}

pub(crate) struct Input<'a> {
    /// None: the PTX is not validated (a warning says how to get ptxas).
    pub ptxas: Option<&'a Path>,
    pub ptx: &'a codegen::Ptx,
    pub module: &'a str,
    pub archs: &'a [String],
    /// The arch the PTX was generated for, whose resources the manifest records.
    pub lowest: &'a str,
    /// Where the cubins go (`<module>.<arch>.cubin`).
    pub dir: &'a Path,
    /// Where ptxas's results are kept for the next build of the same PTX (see [`Cache`]).
    pub cache: &'a Path,
    /// Whether a stack frame without spills means arrays in local memory (release builds,
    /// where panics format nothing on the stack).
    pub local_arrays: bool,
}

/// The ptxas stage's result: the kernels of the PTX with their resources, and the cubins.
pub(crate) struct Checked {
    pub kernels: Vec<KernelInfo>,
    /// `(arch, path)` of each cubin written.
    pub cubins: Vec<(String, PathBuf)>,
    pub validated: bool,
    commands: Vec<String>,
    ptx: PathBuf,
    warnings: Vec<String>,
}

impl crate::Traced for Checked {
    fn trace(&self) -> crate::Trace {
        crate::Trace {
            commands: self.commands.clone(),
            inputs: vec![self.ptx.clone()],
            outputs: self.cubins.iter().map(|(_, p)| p.clone()).collect(),
            warnings: self.warnings.clone(),
        }
    }
}

/// Assembles the PTX for each arch and records each kernel's resources, with a warning for
/// spills and for other costly resource use.
pub(crate) fn run(input: &Input<'_>) -> Result<Checked, Error> {
    let mut kernels = manifest::parse_entries(&input.ptx.text);
    let mut checked = Checked {
        kernels: Vec::new(),
        cubins: Vec::new(),
        validated: false,
        commands: Vec::new(),
        ptx: input.ptx.path.clone(),
        warnings: Vec::new(),
    };
    let Some(ptxas) = input.ptxas else {
        checked.warnings.push(format!("ptxas not found, PTX not validated; fix: {}", toolchain::INSTALL_PTXAS));
        kernels
            .retain(|k| !k.name.ends_with(crate::ir::ONE_D_SUFFIX) && !k.name.ends_with(crate::ir::UNCHECKED_SUFFIX));
        checked.kernels = kernels;
        return Ok(checked);
    };
    for arch in input.archs {
        let cubin = input.dir.join(format!("{}.{arch}.cubin", input.module));
        let cache = Cache { dir: input.cache.join(arch), key: cache_key(ptxas, &input.ptx.text, arch) };
        let report = match cache.get(&cubin) {
            Some(report) => report,
            None => {
                let report = validate(ptxas, &input.ptx.path, arch, input.module, &cubin)?;
                cache.put(&cubin, &report);
                report
            }
        };
        checked.cubins.push((arch.clone(), cubin));
        checked.commands.push(report.command);
        for k in kernels.iter_mut() {
            let Some(r) = report.resources.get(&k.name) else { continue };
            if r.spill_stores > 0 || r.spill_loads > 0 {
                checked.warnings.push(format!(
                    "kernel `{}` spills registers on {arch}: {} bytes stores, {} bytes loads ({} registers)",
                    k.name, r.spill_stores, r.spill_loads, r.registers
                ));
            }
            checked.warnings.extend(resource_warnings(&k.name, arch, r, input.local_arrays));
            if arch == input.lowest {
                k.resources = Some(r.clone());
            }
        }
        checked
            .warnings
            .extend(performance_advisories(&report.log).into_iter().map(|a| format!("ptxas on {arch}: {a}")));
    }
    // The kernels' 1-D copies (`ir/one_d_copies.rs`) are found by the runtime, not listed.
    kernels.retain(|k| !k.name.ends_with(crate::ir::ONE_D_SUFFIX) && !k.name.ends_with(crate::ir::UNCHECKED_SUFFIX));
    checked.kernels = kernels;
    checked.validated = true;
    Ok(checked)
}

pub(crate) struct Report {
    pub resources: BTreeMap<String, KernelResources>,
    pub command: String,
    /// ptxas's `-v` output, which `resources` is parsed from.
    pub log: String,
}

/// ptxas's results for earlier PTX, kept beside the device crate: `cargo check` (clippy,
/// rust-analyzer) and `cargo build` each run the build script, in build directories of their
/// own, on the very same PTX, and ptxas is the slowest stage (80 s for a debug module that
/// formats floats). An entry is a directory named after the hash of the PTX, the arch and the
/// ptxas binary, holding the cubin and the `-v` log; it appears whole (a rename) or not at
/// all, and only the newest few per arch are kept.
struct Cache {
    /// `<device crate>/ptxas/<arch>`.
    dir: PathBuf,
    key: String,
}

/// Entries kept per arch: enough for a debug and a release build of a crate and a few edits.
const CACHE_ENTRIES: usize = 4;

/// ptxas's flags besides the input and output files.
fn flags(arch: &str) -> [String; 2] {
    [format!("-arch={arch}"), "-v".to_string()]
}

fn cache_key(ptxas: &Path, ptx: &str, arch: &str) -> String {
    let binary = std::fs::metadata(ptxas).map(|m| (m.len(), m.modified().ok())).ok();
    let salt = format!("oxide ptxas cache 1\0{:?}\0{}\0{binary:?}\0", flags(arch), ptxas.display());
    manifest::content_hash(&[salt.as_bytes(), ptx.as_bytes()].concat())
}

impl Cache {
    /// The cached result, with its cubin copied to `cubin`; `None` on any miss or error.
    fn get(&self, cubin: &Path) -> Option<Report> {
        let entry = self.dir.join(&self.key);
        let log = std::fs::read_to_string(entry.join("log")).ok()?;
        let command = std::fs::read_to_string(entry.join("command")).ok()?;
        std::fs::copy(entry.join("cubin"), cubin).ok()?;
        Some(Report { resources: parse_verbose(&log), command: format!("{command}  # cached"), log })
    }

    /// Records a result; failing to is harmless (the next build runs ptxas again).
    fn put(&self, cubin: &Path, report: &Report) {
        let tmp = self.dir.join(format!("{}.tmp{}", self.key, std::process::id()));
        let written = std::fs::create_dir_all(&tmp).is_ok()
            && std::fs::copy(cubin, tmp.join("cubin")).is_ok()
            && std::fs::write(tmp.join("command"), &report.command).is_ok()
            && std::fs::write(tmp.join("log"), &report.log).is_ok()
            && std::fs::rename(&tmp, self.dir.join(&self.key)).is_ok();
        if !written {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        self.prune();
    }

    /// Removes all but the newest [`CACHE_ENTRIES`] entries.
    fn prune(&self) {
        let Ok(dir) = std::fs::read_dir(&self.dir) else { return };
        let mut entries: Vec<(std::time::SystemTime, PathBuf)> = dir
            .flatten()
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .filter(|(_, p)| !p.extension().is_some_and(|x| x.to_string_lossy().starts_with("tmp")))
            .collect();
        entries.sort_by_key(|e| std::cmp::Reverse(e.0));
        for (_, old) in entries.into_iter().skip(CACHE_ENTRIES) {
            let _ = std::fs::remove_dir_all(old);
        }
    }
}

pub(crate) fn validate(ptxas: &Path, ptx: &Path, arch: &str, module: &str, cubin: &Path) -> Result<Report, Error> {
    let mut cmd = Command::new(ptxas);
    cmd.args(flags(arch)).arg(ptx).arg("-o").arg(cubin);
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
    Ok(Report { resources: parse_verbose(&stderr), command, log: stderr.into_owned() })
}

/// ptxas's "Potential Performance Loss" notes (e.g. `setmaxnreg` ignored, `wgmma`s serialised),
/// which it prints as `info` although the code it made is slower than the source asked for.
/// Each note once, in ptxas's order.
pub(crate) fn performance_advisories(log: &str) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for (head, rest) in log.lines().filter_map(|line| line.split_once("Potential Performance Loss:")) {
        let code = head.split('(').nth(1).and_then(|c| c.split(')').next()).unwrap_or_default();
        let note = format!("potential performance loss: {}", rest.trim());
        let note = if code.is_empty() { note } else { format!("{note} ({code})") };
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    notes
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
        if line.contains("cannot be statically determined") {
            if let Some(rest) = line.split("entry function '").nth(1) {
                let name = rest.split('\'').next().unwrap_or_default().to_string();
                map.entry(name).or_default().stack_unbounded = true;
            }
            continue;
        }
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
                k.cumulative_stack = num_before(" bytes cumulative stack size").unwrap_or(0);
            }
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn the_cache_returns_what_ptxas_reported_and_keeps_the_newest_entries() -> TestResult {
        let dir = tempfile::tempdir()?;
        let log = "ptxas info    : Compiling entry function 'k' for 'sm_90'\n\
                   ptxas info    : Function properties for k\n    \
                   0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
                   ptxas info    : Used 10 registers, 380 bytes cmem[0]\n";
        let report = Report { resources: parse_verbose(log), command: "ptxas k.ptx".into(), log: log.into() };
        let built = dir.path().join("built.cubin");
        std::fs::write(&built, b"cubin 0")?;
        let ptxas = dir.path().join("ptxas");
        let cache = |ptx: &str| Cache { dir: dir.path().join("cache/sm_90"), key: cache_key(&ptxas, ptx, "sm_90") };
        assert!(cache("ptx 0").get(&built).is_none());
        cache("ptx 0").put(&built, &report);

        let copy = dir.path().join("copy.cubin");
        let hit = cache("ptx 0").get(&copy).ok_or("no cache hit")?;
        assert_eq!(hit.resources, report.resources);
        assert_eq!(hit.command, "ptxas k.ptx  # cached");
        assert_eq!(std::fs::read(&copy)?, b"cubin 0");
        assert!(cache("ptx 1").get(&copy).is_none(), "another PTX is another entry");
        assert_ne!(cache_key(&ptxas, "ptx 0", "sm_90"), cache_key(&ptxas, "ptx 0", "sm_80"));

        for i in 1..=CACHE_ENTRIES {
            std::thread::sleep(std::time::Duration::from_millis(20)); // distinct modification times
            cache(&format!("ptx {i}")).put(&built, &report);
        }
        assert!(cache("ptx 0").get(&copy).is_none(), "the oldest entry is pruned");
        assert!(cache(&format!("ptx {CACHE_ENTRIES}")).get(&copy).is_some());
        assert_eq!(std::fs::read_dir(dir.path().join("cache/sm_90"))?.count(), CACHE_ENTRIES);
        Ok(())
    }

    #[test]
    fn performance_advisories_are_kept_and_other_info_lines_are_not() {
        let log = "ptxas info    : (C7507) Potential Performance Loss: 'setmaxnreg' ignored to maintain minimum register requirements.\n\
                   ptxas info    : (C7507) Potential Performance Loss: 'setmaxnreg' ignored to maintain minimum register requirements.\n\
                   ptxas info    : (C7519) warpgroup.arrive is injected in around line 609 by compiler to allow use of registers in GMMA in function 'k'\n\
                   ptxas info    : Used 168 registers, used 1 barriers\n";
        assert_eq!(
            performance_advisories(log),
            ["potential performance loss: 'setmaxnreg' ignored to maintain minimum register requirements. (C7507)"]
        );
        assert!(performance_advisories("ptxas info    : Used 10 registers\n").is_empty());
    }

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
            KernelResources {
                registers: 40,
                spill_stores: 8,
                spill_loads: 4,
                stack_frame: 16,
                shared_bytes: 1024,
                ..Default::default()
            }
        );
        assert_eq!(m["saxpy"], KernelResources { registers: 10, ..Default::default() });
    }

    /// ptxas 13's output for a kernel with a 4 MiB local array calling a recursive function, plus
    /// the warning older/other ptxas versions print for an unbounded stack.
    const BIG: &str = "ptxas info    : 0 bytes gmem\n\
        ptxas warning : Stack size for entry function 'rec' cannot be statically determined\n\
        ptxas info    : Compiling entry function 'k' for 'sm_90'\n\
        ptxas info    : Function properties for k\n\
        \x20   4194304 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
        ptxas info    : Used 24 registers, used 0 barriers, 4194304 bytes cumulative stack size\n\
        ptxas info    : Compile time = 11.820 ms\n\
        ptxas info    : Function properties for f\n\
        \x20   16 bytes stack frame, 12 bytes spill stores, 12 bytes spill loads\n\
        ptxas info    : Compiling entry function 'rec' for 'sm_90'\n\
        ptxas info    : Function properties for rec\n\
        \x20   32 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
        ptxas info    : Used 30 registers, 44000 bytes smem, 380 bytes cmem[0]\n";

    #[test]
    fn parses_cumulative_stack_and_unbounded_stacks() {
        let m = parse_verbose(BIG);
        assert_eq!(m["k"].stack_frame, 4194304);
        assert_eq!(m["k"].cumulative_stack, 4194304);
        assert_eq!(m["k"].registers, 24);
        assert!(!m["k"].stack_unbounded);
        assert!(m["rec"].stack_unbounded);
        assert_eq!(m["rec"].stack_frame, 32);
        assert_eq!(m["rec"].shared_bytes, 44000);
        assert!(!m.contains_key("f"), "device functions are not kernels");
    }

    #[test]
    fn warns_about_large_and_unbounded_stacks_and_shared_memory_near_the_limit() {
        let m = parse_verbose(BIG);
        let k = resource_warnings("k", "sm_90", &m["k"], true);
        assert_eq!(k.len(), 1, "{k:?}");
        assert!(k[0].contains("kernel `k` needs 4194304 bytes of stack") && k[0].contains("refused"), "{k:?}");
        let rec = resource_warnings("rec", "sm_90", &m["rec"], true);
        assert_eq!(rec.len(), 2, "{rec:?}");
        assert!(rec[0].contains("cannot bound its stack") && rec[0].contains("recursion"), "{rec:?}");
        assert!(rec[1].contains("44000 bytes of static shared memory"), "{rec:?}");
        let medium = KernelResources { stack_frame: 32 * 1024, ..Default::default() };
        let w = resource_warnings("m", "sm_80", &medium, true);
        assert!(w.len() == 1 && w[0].contains("uses 32768 bytes of stack") && w[0].contains("sm_80"), "{w:?}");
        let small = KernelResources { stack_frame: 1024, shared_bytes: 16 * 1024, registers: 40, ..Default::default() };
        assert!(resource_warnings("s", "sm_90", &small, false).is_empty());
    }

    #[test]
    fn hints_at_arrays_left_in_local_memory() {
        let frame = |stack_frame, spill_stores| KernelResources { stack_frame, spill_stores, ..Default::default() };
        let w = resource_warnings("blur", "sm_90", &frame(112, 0), true);
        assert!(w.len() == 1 && w[0].contains("keeps 112 bytes") && w[0].contains("for v in [a, b, c]"), "{w:?}");
        // Debug builds format panics on the stack; spills have their own warning; libdevice's
        // sin/cos keep a small array; huge frames get the stack warning instead.
        assert!(resource_warnings("blur", "sm_90", &frame(112, 0), false).is_empty());
        assert!(resource_warnings("s", "sm_90", &frame(112, 8), true).is_empty());
        assert!(resource_warnings("sin", "sm_90", &frame(32, 0), true).is_empty());
        assert!(!resource_warnings("big", "sm_90", &frame(32 * 1024, 0), true)[0].contains("keeps"));
    }
}
