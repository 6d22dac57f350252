//! Runs the device toolchain's cargo on the generated crate: `-Zbuild-std=core`, LTO, and
//! `--emit=llvm-ir -Zno-link`, which writes the whole linked module (kernels plus every `core`
//! function they reach) as one `.ll` without invoking any linker.

use crate::device_crate::DeviceCrate;
use crate::env::Env;
use crate::error::{command_line, Error, ErrorKind};
use crate::toolchain::Toolchain;
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) const TARGET: &str = "nvptx64-nvidia-cuda";

pub(crate) struct Options<'a> {
    pub arch: &'a str,
    pub opt_level: u8,
    pub cfgs: &'a [String],
    /// The kernels module file and its module name, for hints about paths that leave it.
    pub kernels_file: &'a Path,
    pub module: &'a str,
    /// The generated CUDA C++ bindings (`oxide_rt::include_cuda!()` reads `OXIDE_CUDA`).
    pub cuda_bindings: Option<&'a Path>,
}

pub(crate) struct DeviceBuild {
    pub ir: PathBuf,
    /// The PTX rustc wrote itself, when no matching llc exists.
    pub asm: Option<PathBuf>,
    /// Every source file the device build read (from its dep-info): the kernels module, what it
    /// includes, oxide-rt and other local crates.
    pub sources: Vec<PathBuf>,
    pub command: String,
    /// The kernels module and the generated crate root.
    pub inputs: Vec<PathBuf>,
}

impl crate::Traced for DeviceBuild {
    fn trace(&self) -> crate::Trace {
        let mut outputs = vec![self.ir.clone()];
        outputs.extend(self.asm.clone());
        crate::Trace { commands: vec![self.command.clone()], inputs: self.inputs.clone(), outputs, warnings: vec![] }
    }
}

/// LLVM option of the unroller in oxide-build's `opt` (rustc's pipeline runs without it, see below).
pub(crate) const RUNTIME_MULTI_EXIT: &str = "-unroll-runtime-multi-exit";

/// How large rustc's unroller may make a partially unrolled loop (NVPTX's default is a quarter
/// of the full-unroll threshold, 75). At 300, a counted loop over a shared tile runs 8 copies
/// per iteration, as nvcc's twin does (H200: nbody_tile 1.143 -> 1.078 at 150 with 4 copies;
/// 1.100 -> 1.081 at 300, after 16-byte loads had changed ptxas's register allocation of the
/// 4-copy loop; nothing else in the frozen suite changed, the examples within 0.005). Only
/// rustc's pipeline: in oxide-build's `opt`, which
/// unrolls the loops with bounds checks, the same budget unrolled a grid-stride loop of shared
/// atomics 4 times and cost the histogram example 0.895 -> 0.983 (BENCHMARKS.md).
pub(crate) const PARTIAL_UNROLL_BUDGET: &str = "-unroll-partial-threshold=300";

pub(crate) fn run(tc: &Toolchain, env: &Env, krate: &DeviceCrate, opts: &Options<'_>) -> Result<DeviceBuild, Error> {
    let target_dir = &krate.target_dir;
    // Without a matching llc, rustc's own PTX is used.
    let emit_asm = tc.llc.is_none();
    let mut cmd = Command::new(&tc.cargo);
    cmd.current_dir(&krate.dir)
        .args(["rustc", "--release", "--lib", "--target", TARGET, "-Zbuild-std=core"])
        .arg("--manifest-path")
        .arg(krate.dir.join("Cargo.toml"))
        .args(["--color", "never", "--quiet", "--"])
        .arg(if emit_asm { "--emit=llvm-ir,asm" } else { "--emit=llvm-ir" })
        .arg("-Zno-link")
        .arg(format!("-Copt-level={}", opts.opt_level));
    for cfg in opts.cfgs {
        cmd.arg("--cfg").arg(cfg);
    }
    // A clean environment: nothing of the outer (host) cargo build leaks in.
    cmd.env_clear();
    for key in [
        "PATH",
        "HOME",
        "CARGO_HOME",
        "RUSTUP_HOME",
        "TMPDIR",
        "CARGO_NET_OFFLINE",
        "CARGO_HTTP_PROXY",
        "HTTPS_PROXY",
        "https_proxy",
    ] {
        if let Some(v) = env.var_os(key) {
            cmd.env(key, v);
        }
    }
    cmd.env("RUSTC", &tc.rustc).env("CARGO_TARGET_DIR", target_dir);
    if let Some(bindings) = opts.cuda_bindings {
        cmd.env("OXIDE_CUDA", bindings);
    }
    if tc.bootstrap {
        cmd.env("RUSTC_BOOTSTRAP", "1");
    }
    // The same flags for every crate of the device build (so `core` is shared between crates).
    // MIR jump threading stays on (it turns `for v in [a, b, c]` into a counted loop LLVM
    // unrolls): it may copy a barrier into both arms of a branch, which the device API's
    // barriers allow (`barrier.sync`, not the `.aligned` `bar.sync`).
    let mut rustflags = vec![
        format!("-Ctarget-cpu={}", opts.arch),
        // No runtime unrolling of loops with more than one exit here: a bounds check's panic is
        // an exit, and such a loop must reach oxide-build's `opt` whole, whose range check
        // elimination takes the checks out first (codegen.rs). That `opt` then unrolls them,
        // multi-exit ones too (`RUNTIME_MULTI_EXIT`).
        // Let the MIR inliner take iterator adapters whole (`zip` over an array by value, `next`
        // of `array::IntoIter`), so jump threading sees their `Option`s and the loops become
        // counted: the frozen suite's box_blur_rgb keeps no local-memory array with these.
        "-Zinline-mir-threshold=400".to_string(),
        "-Zinline-mir-hint-threshold=800".to_string(),
        format!("-Cllvm-args={PARTIAL_UNROLL_BUDGET}"),
    ];
    // Without libdevice the device API falls back to its own `no_std` math.
    if tc.libdevice.is_none() {
        rustflags.extend(["--cfg".to_string(), "oxide_no_libdevice".to_string()]);
    }
    cmd.env("CARGO_ENCODED_RUSTFLAGS", rustflags.join("\x1f"));

    let command = command_line(&cmd);
    let out = cmd.output().map_err(|e| {
        Error::new(
            ErrorKind::ToolExec,
            format!("failed to start the device cargo `{}`: {e}\n  command: {command}", tc.cargo.display()),
        )
    })?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(compile_error(&stderr, &command, tc, opts));
    }
    let deps = target_dir.join(TARGET).join("release/deps");
    let ir = deps.join(format!("{}.ll", krate.lib_name));
    if !ir.is_file() {
        return Err(Error::new(
            ErrorKind::KernelCompile,
            format!("the device build succeeded but wrote no LLVM IR at {}\n  command: {command}", ir.display()),
        ));
    }
    let asm = emit_asm.then(|| deps.join(format!("{}.s", krate.lib_name)));
    // Cargo's own dep-info lists the sources of every local crate the device build compiled
    // (the kernels module, oxide-rt, oxide-macros, no_std dependencies), so editing any of them
    // reruns the build script; rustc's per-crate file only has the kernels crate.
    let cargo_dep_info = target_dir.join(TARGET).join("release").join(format!("{}.d", krate.lib_name));
    let dep_info = if cargo_dep_info.is_file() { cargo_dep_info } else { deps.join(format!("{}.d", krate.lib_name)) };
    // The toolchain's own sources and the generated root are not the user's to track.
    let sources = read_dep_info(&dep_info, &krate.dir)?
        .into_iter()
        .filter(|p| !p.starts_with(&krate.dir) && !p.components().any(|c| c.as_os_str() == "rustlib"))
        .collect();
    let inputs = vec![opts.kernels_file.to_path_buf(), krate.dir.join("lib.rs")];
    Ok(DeviceBuild { ir, asm, sources, command, inputs })
}

fn compile_error(stderr: &str, command: &str, tc: &Toolchain, opts: &Options<'_>) -> Error {
    if stderr.contains("unable to build with the standard library") || stderr.contains("component add rust-src") {
        return Error::new(
            ErrorKind::MissingRustSrc,
            format!("the device toolchain ({}) cannot build `core`: its library sources are missing.\n{stderr}\n  fix: {}\n  command: {command}",
                tc.origin, crate::toolchain::INSTALL_RUSTUP),
        );
    }
    let body: Vec<&str> = stderr.lines().filter(|l| !l.trim_start().starts_with("Compiling ")).collect();
    let hint = outside_path(stderr, opts.kernels_file)
        .map(|path| crate_path_hint(&path, opts))
        .or_else(|| duplicate_symbol(stderr).map(|s| duplicate_symbol_hint(&s)))
        .or_else(|| std_float_method_hint(stderr))
        .unwrap_or_default();
    Error::new(
        ErrorKind::KernelCompile,
        format!(
            "the kernels module does not compile for {TARGET} ({}):\n\n{}\n{hint}\n  command: {command}",
            tc.rustc_version,
            body.join("\n").trim_end()
        ),
    )
}

/// The first path in rustc's errors that looks for an item outside the kernels module:
/// `crate::X` (on the device, `crate` is the generated device crate, which holds nothing but the
/// kernels module), or `super::X` written at the kernels module's top level.
fn outside_path(stderr: &str, kernels_file: &Path) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(msg) = line.strip_prefix("error[E").and_then(|l| l.split_once("]: ")).map(|(_, m)| m) else {
            continue;
        };
        // The error's location: the next `--> file:line:col`.
        let at = lines[i + 1..]
            .iter()
            .take(3)
            .find_map(|l| l.trim_start().strip_prefix("--> "))
            .and_then(|l| l.rsplitn(3, ':').nth(2))
            .map(Path::new);
        let ticked: Vec<&str> = msg.split('`').skip(1).step_by(2).collect();
        let first = ticked.first().copied().unwrap_or_default();
        // `unresolved import `crate::x``, `failed to resolve: … `crate::x``.
        if let Some(p) = ticked.iter().find(|t| t.starts_with("crate::")) {
            return Some(p.to_string());
        }
        // `cannot find function `x` in the crate root`, `could not find `x` in the crate root`.
        if msg.contains("in the crate root") {
            return Some(format!("crate::{first}"));
        }
        let top_level = at.is_some_and(|a| a == kernels_file);
        if top_level {
            if let Some(p) = ticked.iter().find(|t| t.starts_with("super::")) {
                return Some(p.to_string());
            }
            if msg.ends_with("in module `super`") || msg.contains("in `super`") {
                return Some(format!("super::{first}"));
            }
        }
    }
    None
}

fn crate_path_hint(path: &str, opts: &Options<'_>) -> String {
    let module = opts.module;
    format!(
        "\n  hint: `{path}` is not found because {} is compiled for the GPU on its own, as the only module of a \
         generated device crate: there `crate::` is that device crate (it holds just `{module}`), not your crate, and \
         `super::` at the top of the kernels module does not reach your crate either. Refer to the kernels module's own \
         items with `self::…` (`super::…` from its submodules, or `crate::{module}::…` when your crate declares \
         `mod {module};` at its root), and move what the kernels need into the kernels module or a submodule of it \
         (or into a `no_std` crate added with `.device_dependency(..)`).\n",
        opts.kernels_file.display()
    )
}

/// `f32`/`f64` methods of `std` (absent from `core`, which is all the GPU build has) and the
/// name of the same operation in oxide's `Float` trait.
const STD_FLOAT_METHODS: [(&str, &str); 27] = [
    ("powf", "pow"),
    ("mul_add", "fma"),
    ("exp_m1", "expm1"),
    ("ln", "log"),
    ("ln_1p", "log1p"),
    ("powi", "powi"),
    ("sqrt", "sqrt"),
    ("cbrt", "cbrt"),
    ("exp", "exp"),
    ("exp2", "exp2"),
    ("log2", "log2"),
    ("log10", "log10"),
    ("sin", "sin"),
    ("cos", "cos"),
    ("tan", "tan"),
    ("asin", "asin"),
    ("acos", "acos"),
    ("atan", "atan"),
    ("atan2", "atan2"),
    ("sinh", "sinh"),
    ("cosh", "cosh"),
    ("tanh", "tanh"),
    ("hypot", "hypot"),
    ("floor", "floor"),
    ("ceil", "ceil"),
    ("round", "round"),
    ("trunc", "trunc"),
];

/// For rustc's "no method named `powf` found for type `f32`": the host build has `std`'s float
/// methods, the GPU build only `core`; oxide's `Float` trait has the GPU's.
fn std_float_method_hint(stderr: &str) -> Option<String> {
    let (method, ty) = stderr.lines().find_map(|l| {
        let rest = l.split_once("no method named `")?.1;
        let (method, rest) = rest.split_once('`')?;
        let ty = rest.strip_prefix(" found for type `")?.split('`').next()?;
        matches!(ty, "f32" | "f64").then_some((method, ty))
    })?;
    let (_, ours) = STD_FLOAT_METHODS.iter().find(|(std, _)| *std == method)?;
    Some(format!(
        "\n  hint: `{ty}::{method}` comes from `std`, which the kernels do not have on the GPU (only `core`, so the host \
         build accepts what the device build rejects). oxide's `Float` trait gives `f32` and `f64` the GPU's math as \
         methods: write `x.{ours}(..)` with `Float` in scope (`use oxide_rt::device::*;` or \
         `use oxide_rt::device::math::Float;`).\n"
    ))
}

/// The symbol of rustc's "symbol `x` is already defined" (two exported items of one name in
/// different modules of the kernels module: `#[kernel]`s, or identical `#[derive(KernelArg)]`s).
fn duplicate_symbol(stderr: &str) -> Option<String> {
    stderr.lines().find_map(|l| {
        let rest = l.strip_prefix("error: symbol `")?;
        let (symbol, tail) = rest.split_once('`')?;
        tail.contains("is already defined").then(|| symbol.to_string())
    })
}

/// The records `#[kernel]` exports beside each kernel, named `<prefix><kernel symbol>`: rustc may
/// report one of them, not the kernel, as the symbol defined twice.
const KERNEL_RECORDS: [&str; 6] = [
    "__oxide_arg_layout_",
    "__oxide_input_sizes_",
    "__oxide_launch_bounds_",
    "__oxide_block_",
    "__oxide_cluster_",
    "__oxide_grid_constant_",
];

fn duplicate_symbol_hint(symbol: &str) -> String {
    let record = symbol.strip_prefix("__oxide_layout_").and_then(|r| r.rsplit_once('_')).map(|(name, _)| name);
    let symbol = KERNEL_RECORDS.iter().find_map(|p| symbol.strip_prefix(p)).unwrap_or(symbol);
    match record {
        Some(name) => format!(
            "\n  hint: two `#[derive(KernelArg)]` structs `{name}` with the same definition live in different modules of the \
             kernels module; define it once and `use` it where it is needed.\n"
        ),
        None => format!(
            "\n  hint: two kernels in different modules of the kernels module export the PTX symbol `{symbol}` (a kernel's \
             symbol is its function name); give one of them another with `#[kernel(name = \"{symbol}_2\")]` (its launchers \
             keep the function's name).\n"
        ),
    }
}

/// Parses a Makefile-style dep-info file: the first rule's prerequisites.
fn read_dep_info(path: &Path, base: &Path) -> Result<Vec<PathBuf>, Error> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Error::io(format!("reading dep-info {}", path.display()), e))?;
    let Some(line) = text.lines().find(|l| l.contains(": ")) else { return Ok(Vec::new()) };
    let deps = &line[line.find(": ").map(|i| i + 2).unwrap_or(line.len())..];
    let mut files = Vec::new();
    let mut cur = String::new();
    let mut chars = deps.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => {
                cur.push(' ');
                chars.next();
            }
            ' ' => {
                if !cur.is_empty() {
                    files.push(base.join(std::mem::take(&mut cur)));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        files.push(base.join(cur));
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn a_std_float_method_is_told_its_float_name() {
        let stderr = "error[E0599]: no method named `powf` found for type `f32` in the current scope\n --> k.rs:3:9\n";
        let hint = std_float_method_hint(stderr).unwrap_or_default();
        assert!(hint.contains("`f32::powf` comes from `std`") && hint.contains("`x.pow(..)`"), "{hint}");
        let fma = std_float_method_hint(&stderr.replace("powf", "mul_add").replace("f32", "f64")).unwrap_or_default();
        assert!(fma.contains("`f64::mul_add`") && fma.contains("`x.fma(..)`"), "{fma}");
        assert!(std_float_method_hint(&stderr.replace("`f32`", "`u32`")).is_none());
        assert!(std_float_method_hint(&stderr.replace("powf", "frobnicate")).is_none());
    }

    #[test]
    fn a_kernel_defined_twice_is_named_whichever_of_its_symbols_rustc_reports() {
        for symbol in ["fill", "__oxide_arg_layout_fill", "__oxide_input_sizes_fill", "__oxide_launch_bounds_fill"] {
            let hint = duplicate_symbol_hint(symbol);
            assert!(
                hint.contains("#[kernel(name = \"fill_2\")]") && hint.contains("symbol `fill`"),
                "{symbol}: {hint}"
            );
        }
        assert!(duplicate_symbol_hint("__oxide_layout_Pair_bf7a3946").contains("structs `Pair`"));
    }

    #[test]
    fn finds_paths_that_leave_the_kernels_module() {
        let k = Path::new("/app/src/kernels.rs");
        let err = |msg: &str, at: &str| {
            format!("warning: x\n  --> /rt/lib.rs:1:1\nerror[E0425]: {msg}\n --> {at}:6:49\n  |\n")
        };
        assert_eq!(
            outside_path(&err("unresolved import `crate::shared`", "/app/src/kernels.rs"), k).as_deref(),
            Some("crate::shared")
        );
        assert_eq!(
            outside_path(&err("cannot find function `helper` in the crate root", "/app/src/kernels/util.rs"), k)
                .as_deref(),
            Some("crate::helper")
        );
        assert_eq!(
            outside_path(&err("cannot find function `other` in module `super`", "/app/src/kernels.rs"), k).as_deref(),
            Some("super::other")
        );
        // `super::` in a submodule of the kernels module is the kernels module: not the cause.
        assert_eq!(
            outside_path(&err("cannot find function `other` in module `super`", "/app/src/kernels/util.rs"), k),
            None
        );
        assert_eq!(outside_path(&err("mismatched types", "/app/src/kernels.rs"), k), None);
    }

    #[test]
    fn dep_info_paths_are_resolved_and_unescaped() -> TestResult {
        let dir = tempfile::tempdir()?;
        let d = dir.path().join("x.d");
        std::fs::write(&d, "/t/x.ll: lib.rs /src/my\\ kernels.rs /src/util.rs\n\nlib.rs:\n")?;
        let got = read_dep_info(&d, Path::new("/crate"))?;
        assert_eq!(
            got,
            vec![PathBuf::from("/crate/lib.rs"), PathBuf::from("/src/my kernels.rs"), PathBuf::from("/src/util.rs")]
        );
        Ok(())
    }
}
