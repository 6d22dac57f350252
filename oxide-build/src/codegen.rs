//! LLVM IR → PTX: link libdevice when the kernels call `__nv_*` math, optimise, run `llc`.
//! Failures (e.g. LLVM's "unsupported library call" abort) become a short error naming the
//! module and LLVM's own message instead of a crash dump. Without an llc matching rustc's LLVM,
//! the PTX rustc wrote itself is used, if the kernels need nothing only llc can do.

use crate::device_crate::write_if_changed;
use crate::error::{command_line, Error, ErrorKind};
use crate::ir;
use crate::llc_choice;
use crate::toolchain::{self, Toolchain};
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) struct Input<'a> {
    pub module: &'a str,
    /// The rewritten IR (see `ir.rs`), with what the optimiser must know about it.
    pub ir: &'a ir::Module,
    /// The PTX rustc wrote itself (only when no llc matches rustc's LLVM).
    pub rustc_ptx: Option<&'a Path>,
    /// Where the PTX goes.
    pub ptx: &'a Path,
    pub arch: &'a str,
    /// The architectures ptxas compiles for; llc flags are chosen per kernel on them.
    pub archs: &'a [String],
    /// Choose llc flags per kernel (`llc_choice.rs`): release builds, where speed counts.
    pub choose_flags: bool,
    pub opt_level: u8,
    /// Contract `a * b + c` into `fma` like nvcc's default `--fmad=true`.
    pub fmad: bool,
    pub work_dir: &'a Path,
    /// CUDA C++ device functions as LLVM IR (`cuda_bitcode.rs`), linked in before `opt`.
    pub linked_ir: &'a [PathBuf],
}

/// How much code LLVM may emit to compute a loop's trip count before runtime unrolling (default
/// 4): a block-stride loop's count, `(end - K - p) / stride` with a `umax`, needs more, and
/// without it the loop is not unrolled even once its exit is counted (`ir/distance_exits.rs`).
const SCEV_BUDGET: &str = "-scev-cheap-expansion-budget=32";

/// Function passes for loops marked to unroll: unrolled, their private arrays promoted to
/// registers, the result folded. `instcombine` run alone checks that one run reached a fixpoint
/// and aborts opt when it did not (a rustc-built function can need two); the default pipelines
/// turn that check off, and so does this one.
const UNROLL_PRIVATE_PASSES: &str = "loop(loop-unroll-full),sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg";

/// LLVM's inductive range check elimination, before any unrolling: a loop whose bounds checks
/// test its induction variable (`gamma[c]` for `c` in `t, t + 256, ..`) runs as a copy without
/// them over the iterations where they provably pass, with the checked loop only before and
/// after; the copy has one exit, so the unroller puts its loads side by side (H200, frozen
/// suite: layernorm_rows 1.18 -> 1.06 of nvcc's time; BENCHMARKS.md). Loops that hold a
/// barrier or a warp collective keep their checks (`ir/barrier_loops.rs`).
const BOUNDS_CHECKS_OUT_OF_LOOPS: &str = "irce";

/// Runtime unrolling (multi-exit loops too, `opt_tuning`) and the folding rustc's pipeline runs
/// after its own unroller.
const RUNTIME_UNROLL_PASSES: &str = "loop-unroll<O3>,instcombine<no-verify-fixpoint>,simplifycfg";

/// Loops marked for full unrolling (`ir/private_array_loops.rs`) with more iterations than this
/// stay loops: LLVM's own cap is a million, and a 80 000-iteration loop filling a local array
/// kept `opt` busy for over 20 minutes.
const FULL_UNROLL_MAX_ITERATIONS: &str = "-pragma-unroll-full-max-iterations=1024";

/// A runtime-unrolled loop's leftover iterations after the unrolled body, written out rather
/// than as a loop of one iteration at a time, so `ir/guarded_epilogs.rs` can turn them into
/// guarded steps whose loads all go out together.
const UNROLLED_REMAINDER: [&str; 2] = ["-unroll-runtime-epilog=true", "-unroll-remainder=true"];

/// The target and unroller settings every `opt` run shares.
fn opt_tuning(input: &Input<'_>) -> [String; 6] {
    [
        format!("-mcpu={}", input.arch),
        crate::device_build::RUNTIME_MULTI_EXIT.to_string(),
        SCEV_BUDGET.to_string(),
        FULL_UNROLL_MAX_ITERATIONS.to_string(),
        UNROLLED_REMAINDER[0].to_string(),
        UNROLLED_REMAINDER[1].to_string(),
    ]
}

/// The codegen stage's result: the PTX, written to `path`.
pub(crate) struct Ptx {
    pub path: PathBuf,
    pub text: String,
    commands: Vec<String>,
    inputs: Vec<PathBuf>,
    warnings: Vec<String>,
}

impl Ptx {
    /// PTX that another compiler wrote (nvcc for CUDA C++ sources), for the ptxas stage.
    pub(crate) fn from_file(path: PathBuf, text: String) -> Ptx {
        Ptx { path, text, commands: vec![], inputs: vec![], warnings: vec![] }
    }
}

impl crate::Traced for Ptx {
    fn trace(&self) -> crate::Trace {
        crate::Trace {
            commands: self.commands.clone(),
            inputs: self.inputs.clone(),
            outputs: vec![self.path.clone()],
            warnings: self.warnings.clone(),
        }
    }
}

/// Compiles the rewritten IR to PTX (or takes rustc's) and writes it.
pub(crate) fn run(tc: &Toolchain, input: &Input<'_>) -> Result<Ptx, Error> {
    let needs_libdevice = input.ir.processed.needs_libdevice;
    let mut inputs = vec![input.ir.path.clone()];
    inputs.extend(tc.libdevice.clone().filter(|_| needs_libdevice));
    inputs.extend(input.linked_ir.iter().cloned());
    let (text, commands, warnings) = match &tc.llc {
        Some(llc) => {
            let (text, commands) = llc_ptx(tc, llc, input)?;
            (text, commands, vec![])
        }
        None => (rustc_ptx(tc, input)?, vec![], vec![NO_LLC.to_string()]),
    };
    write_if_changed(input.ptx, &text)?;
    Ok(Ptx { path: input.ptx.to_path_buf(), text, commands, inputs, warnings })
}

const NO_LLC: &str = "no llc matching rustc's LLVM found; using the PTX rustc emitted itself";

/// rustc's own PTX, unless the kernels use what only the IR stage and llc provide.
fn rustc_ptx(tc: &Toolchain, input: &Input<'_>) -> Result<String, Error> {
    let processed = &input.ir.processed;
    let needs = [
        (!processed.shared_statics.is_empty()).then_some("shared memory"),
        processed.needs_libdevice.then_some("libdevice math"),
        (!input.linked_ir.is_empty()).then_some("CUDA C++ device functions"),
        processed.meta.iter().any(|m| m.name.starts_with("__oxide_launch_bounds_")).then_some("launch bounds"),
        processed.meta.iter().any(|m| m.name.starts_with("__oxide_block_")).then_some("a required block shape"),
    ];
    let needs: Vec<&str> = needs.into_iter().flatten().collect();
    if !needs.is_empty() {
        return Err(Error::new(
            ErrorKind::Llc,
            format!(
                "kernels module `{}` uses {} which needs LLVM's llc {} next to the device rustc, and none was found.\n  \
                 looked for: OXIDE_LLC, LLC_PATH, CUDA_OXIDE_LLC, the toolchain's llvm-tools, llc-{} on PATH\n  fix: {} (or {})",
                input.module,
                needs.join(", "),
                tc.llvm_major.map(|m| m.to_string()).unwrap_or_default(),
                tc.llvm_major.map(|m| m.to_string()).unwrap_or_else(|| "N".into()),
                toolchain::INSTALL_DEBIAN,
                "rustup component add llvm-tools"
            ),
        ));
    }
    let asm = input.rustc_ptx.ok_or_else(|| Error::new(ErrorKind::Llc, "rustc wrote no PTX"))?;
    std::fs::read_to_string(asm).map_err(|e| Error::io(format!("reading {}", asm.display()), e))
}

/// Returns the PTX text and the commands that produced it.
fn llc_ptx(tc: &Toolchain, llc: &Path, input: &Input<'_>) -> Result<(String, Vec<String>), Error> {
    let processed = &input.ir.processed;
    let mut commands = Vec::new();
    let mut ir = match &tc.opt {
        Some(opt) => bounds_checks_out_of_loops(opt, input, &mut commands)?,
        None => input.ir.path.clone(),
    };
    if processed.needs_libdevice || !input.linked_ir.is_empty() {
        // C++ device functions may call CUDA math (`__nv_*`) themselves: libdevice comes along.
        let libdevice = match processed.needs_libdevice {
            false if !input.linked_ir.is_empty() => tc.libdevice.as_ref(),
            true => Some(tc.libdevice.as_ref().ok_or_else(|| {
                Error::new(
                    ErrorKind::MissingLibdevice,
                    format!(
                        "the kernels in `{}` call CUDA math functions (`__nv_*`), which live in libdevice, but libdevice.10.bc was not found.\n  \
                         fix: set OXIDE_LIBDEVICE=<path>/libdevice.10.bc, or {}",
                        input.module,
                        toolchain::INSTALL_PTXAS
                    ),
                )
            })?),
            false => None,
        };
        let (link, opt) = match (&tc.llvm_link, &tc.opt) {
            (Some(l), Some(o)) => (l, o),
            _ => {
                return Err(Error::new(
                    ErrorKind::Llc,
                    format!(
                        "linking libdevice or CUDA C++ device functions into `{}` needs llvm-link and opt next to {}; fix: install the full LLVM tools ({})",
                        input.module,
                        llc.display(),
                        toolchain::INSTALL_DEBIAN
                    ),
                ))
            }
        };
        let linked = input.work_dir.join("linked.bc");
        let mut cmd = Command::new(link);
        // The Rust module, the CUDA C++ functions it calls, then libdevice that both may call.
        cmd.arg(&ir).args(input.linked_ir).args(libdevice).arg("-o").arg(&linked);
        commands.push(run_tool(&mut cmd, input.module, "llvm-link")?);
        // libdevice's and the C++ functions must become internal too, or llc emits all of them.
        let optimized = input.work_dir.join("opt.ll");
        let mut cmd = Command::new(opt);
        cmd.arg(format!("-passes=internalize,globaldce,default<O{}>", input.opt_level.min(3)))
            .arg(format!("-internalize-public-api-list={}", processed.kernels.join(",")))
            .args(opt_tuning(input))
            .arg(&linked)
            .arg("-S")
            .arg("-o")
            .arg(&optimized);
        commands.push(run_tool(&mut cmd, input.module, "opt")?);
        ir = after_opt(&optimized, input)?;
    } else if let Some(opt) = &tc.opt {
        // Inline what the IR stage marked `alwaysinline` (release panic paths), then drop what
        // internalization made dead (core's unused functions) before llc.
        let optimized = input.work_dir.join("opt.ll");
        let mut cmd = Command::new(opt);
        // Marked loops are unrolled (`default<O3>` above does that too), their private arrays
        // promoted to registers and the unrolled code folded; then every loop is unrolled at
        // run time, which rustc's pipeline leaves to this one (see device_build.rs).
        let mut function_passes = Vec::new();
        if processed.unroll_private_loops {
            function_passes.push(UNROLL_PRIVATE_PASSES);
        }
        function_passes.push(RUNTIME_UNROLL_PASSES);
        let passes = format!("-passes=always-inline,function({}),globaldce", function_passes.join(","));
        cmd.arg(passes).args(opt_tuning(input)).arg(&ir).arg("-S").arg("-o").arg(&optimized);
        commands.push(run_tool(&mut cmd, input.module, "opt")?);
        ir = after_opt(&optimized, input)?;
    }
    let text = llc_run(llc, input, &ir, (&[], ""), &mut commands)?;
    let text = match &tc.ptxas {
        Some(ptxas) if input.choose_flags => choose_flags(llc, ptxas, input, &ir, text, &mut commands)?,
        _ => text,
    };
    Ok((crate::ir::without_identical_copies(&text), commands))
}

/// `opt`'s range check elimination over the IR stage's output, before anything unrolls a loop
/// (`BOUNDS_CHECKS_OUT_OF_LOOPS`); the branches the IR stage froze to keep it out of loops
/// with barriers are thawed again after it, so no other pass sees them. Returns the file the
/// rest of the pipeline reads.
fn bounds_checks_out_of_loops(opt: &Path, input: &Input<'_>, commands: &mut Vec<String>) -> Result<PathBuf, Error> {
    let out = input.work_dir.join("irce.ll");
    let mut cmd = Command::new(opt);
    cmd.arg(format!("-passes=function({BOUNDS_CHECKS_OUT_OF_LOOPS})"))
        .arg(&input.ir.path)
        .arg("-S")
        .arg("-o")
        .arg(&out);
    commands.push(run_tool(&mut cmd, input.module, "opt")?);
    let text = std::fs::read_to_string(&out).map_err(|e| Error::io(format!("reading {}", out.display()), e))?;
    std::fs::write(&out, crate::ir::thaw(&text)).map_err(|e| Error::io(format!("writing {}", out.display()), e))?;
    Ok(out)
}

/// The IR transforms that need `opt`'s output (`ir::after_opt`), in release builds; returns
/// the file llc reads.
fn after_opt(optimized: &Path, input: &Input<'_>) -> Result<PathBuf, Error> {
    if !input.choose_flags {
        return Ok(optimized.to_path_buf());
    }
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| Error::io(format!("reading {}", p.display()), e));
    let (text, moved) = crate::ir::after_opt(&read(optimized)?, &input.ir.processed.meta);
    let path = input.work_dir.join("speculated.ll");
    if moved == 0 {
        // A file from an earlier build would only mislead whoever reads the work folder.
        let _ = std::fs::remove_file(&path);
        return Ok(optimized.to_path_buf());
    }
    std::fs::write(&path, text).map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
    Ok(path)
}

/// The PTX ISA llc must write for `arch` when its default is too old for oxide's operations:
/// llc-22 writes `.version 7.8` for sm_90, but TMA, `mbarrier.try_wait` and the other Hopper
/// operations of the device API need PTX 8.0 (CUDA 12.0; sm_90a already defaults to it).
fn ptx_isa(arch: &str) -> Option<&'static str> {
    (arch == "sm_90").then_some("-mattr=+ptx80")
}

/// Runs llc on `ir` with `extra` flags into `<module><suffix>.ptx`; returns the PTX text.
fn llc_run(
    llc: &Path,
    input: &Input<'_>,
    ir: &Path,
    (extra, suffix): (&[&str], &str),
    commands: &mut Vec<String>,
) -> Result<String, Error> {
    let ptx: PathBuf = input.work_dir.join(format!("{}{suffix}.ptx", input.module));
    let mut cmd = Command::new(llc);
    cmd.arg(format!("-mcpu={}", input.arch)).arg(format!("-O{}", input.opt_level.min(3)));
    if let Some(isa) = ptx_isa(input.arch) {
        cmd.arg(isa);
    }
    if input.fmad {
        // Only what the IR stage marked `contract` (the kernels' own code, not libdevice's).
        cmd.arg("--fp-contract=on");
    }
    // LLVM's loop strength reduction rewrites a loop's addresses as one base plus one 64-bit
    // offset register per access; ptxas then runs out of registers to keep every load in flight
    // (H200: reduction 1.098 -> 0.998 and stencil 1.135 -> 1.043 of nvcc's time without it;
    // BENCHMARKS.md). ptxas does its own strength reduction.
    cmd.arg("-disable-lsr").args(extra);
    cmd.arg(ir).arg("-o").arg(&ptx);
    commands.push(run_tool(&mut cmd, input.module, "llc")?);
    std::fs::read_to_string(&ptx).map_err(|e| Error::io(format!("reading {}", ptx.display()), e))
}

/// `text`, with each kernel that ptxas fits into the registers better under other llc flags
/// compiled with those (see `llc_choice.rs`).
fn choose_flags(
    llc: &Path,
    ptxas: &Path,
    input: &Input<'_>,
    ir: &Path,
    text: String,
    commands: &mut Vec<String>,
) -> Result<String, Error> {
    let first = resources(ptxas, input, &text, "", commands)?;
    if !llc_choice::worth_trying(&first) {
        return Ok(text);
    }
    let (mut texts, mut reports) = (vec![text], vec![first]);
    for (i, flags) in llc_choice::ALTERNATIVES.iter().enumerate() {
        let suffix = format!(".alt{}", i + 1);
        let alt = llc_run(llc, input, ir, (flags, &suffix), commands)?;
        // The first text is the one the build stands on; another that ptxas refuses is not used.
        if let Ok(report) = resources(ptxas, input, &alt, &suffix, commands) {
            texts.push(alt);
            reports.push(report);
        }
    }
    let chosen = llc_choice::choose(&reports);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let spliced = llc_choice::splice(&refs, &chosen);
    // For readers of the work directory: the flags each kernel was compiled with.
    let mut listed = String::new();
    for (kernel, &v) in &chosen {
        let flags = if spliced.is_none() || v == 0 { String::new() } else { llc_choice::ALTERNATIVES[v - 1].join(" ") };
        listed.push_str(&format!("{kernel}: llc {flags}\n"));
    }
    let list = input.work_dir.join(format!("{}.llc-flags.txt", input.module));
    std::fs::write(&list, listed).map_err(|e| Error::io(format!("writing {}", list.display()), e))?;
    Ok(spliced.unwrap_or_else(|| texts.swap_remove(0)))
}

/// ptxas's per-kernel resources of `text` (written to `<module><suffix>.checked.ptx`) for every
/// target architecture.
fn resources(
    ptxas: &Path,
    input: &Input<'_>,
    text: &str,
    suffix: &str,
    commands: &mut Vec<String>,
) -> Result<llc_choice::Reports, Error> {
    let ptx = input.work_dir.join(format!("{}{suffix}.checked.ptx", input.module));
    std::fs::write(&ptx, text).map_err(|e| Error::io(format!("writing {}", ptx.display()), e))?;
    let mut out = Vec::new();
    for arch in input.archs {
        let cubin = input.work_dir.join(format!("{}{suffix}.{arch}.cubin", input.module));
        let report = crate::ptxas::validate(ptxas, &ptx, arch, input.module, &cubin)?;
        commands.push(report.command);
        out.push((arch.clone(), report.resources));
    }
    Ok(out)
}

fn run_tool(cmd: &mut Command, module: &str, tool: &str) -> Result<String, Error> {
    let line = command_line(cmd);
    let out = cmd
        .output()
        .map_err(|e| Error::new(ErrorKind::ToolExec, format!("failed to start {tool}: {e}\n  command: {line}")))?;
    if out.status.success() {
        return Ok(line);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    // LLVM's fatal errors carry the useful line; the rest is a stack dump.
    let message = stderr
        .lines()
        .filter(|l| l.contains("LLVM ERROR") || l.contains("error:"))
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("\n    ");
    let message = if message.is_empty() { stderr.lines().take(5).collect::<Vec<_>>().join("\n    ") } else { message };
    let hint = if message.contains("unsupported library call") {
        "\n  hint: the kernel uses an operation the NVPTX backend has no instruction or library call for \
         (e.g. a float <-> 128-bit integer conversion); use a 64-bit type"
    } else {
        ""
    };
    Err(Error::new(
        ErrorKind::Llc,
        format!("{tool} failed on kernels module `{module}` ({}):\n    {message}{hint}\n  command: {line}", out.status),
    ))
}

#[cfg(test)]
mod tests {
    use super::{FULL_UNROLL_MAX_ITERATIONS, UNROLL_PRIVATE_PASSES};
    use crate::ir::tests::find_tool;
    use std::process::Command;

    /// A loop marked for full unrolling that fills an 80 000-element private array.
    const BIG: &str = "target triple = \"nvptx64-nvidia-cuda\"\n\
        define void @k(ptr %out, i32 %x) {\nentry:\n  %a = alloca [80000 x i32], align 4\n  br label %loop\n\
        loop:\n  %i = phi i64 [ 0, %entry ], [ %n, %loop ]\n  %p = getelementptr inbounds [80000 x i32], ptr %a, i64 0, i64 %i\n\
        \x20 %t = trunc i64 %i to i32\n  %v = mul i32 %t, %x\n  store i32 %v, ptr %p, align 4\n  %n = add nuw nsw i64 %i, 1\n\
        \x20 %c = icmp ult i64 %n, 80000\n  br i1 %c, label %loop, label %done, !llvm.loop !0\n\
        done:\n  %q = getelementptr inbounds [80000 x i32], ptr %a, i64 0, i64 777\n  %r = load i32, ptr %q, align 4\n\
        \x20 store i32 %r, ptr %out, align 4\n  ret void\n}\n!0 = distinct !{!0, !1}\n!1 = !{!\"llvm.loop.unroll.full\"}\n";

    /// A guarded store one `instcombine` run does not finish folding (reduced from a kernel
    /// that stopped a release build with "did not reach a fixpoint").
    const TWO_ROUNDS: &str = "target triple = \"nvptx64-nvidia-cuda\"\n\
        define void @k(ptr %p, i32 %x) {\nstart:\n  %w = zext i32 %x to i64\n  %c = icmp ult i32 %x, 1\n\
        \x20 br i1 %c, label %store, label %done\ndone:\n  ret void\nstore:\n\
        \x20 %q = getelementptr i32, ptr %p, i64 %w\n  store i32 0, ptr %q, align 4\n  br label %done\n}\n";

    /// `opt-22` with `args` on `ir` (written to a temporary file): its output, or `None` (with
    /// the reason printed) where opt-22 is not installed.
    fn opt_on(what: &str, ir: &str, args: &[&str]) -> Option<std::process::Output> {
        let Some(opt) = find_tool("opt-22") else {
            eprintln!("skipped: opt-22 not found on PATH (apt-get install llvm-22)");
            return None;
        };
        let dir = std::env::temp_dir().join(format!("oxide-codegen-{what}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ll = dir.join("in.ll");
        std::fs::write(&ll, ir).unwrap();
        let out = Command::new(opt).args(args).arg("-S").arg(&ll).output().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        Some(out)
    }

    #[test]
    fn the_unroll_passes_accept_code_instcombine_folds_in_two_runs() {
        let run = |passes: &str| opt_on("fixpoint", TWO_ROUNDS, &[&format!("-passes=function({passes})")]);
        let Some(strict) = run(&UNROLL_PRIVATE_PASSES.replace("instcombine<no-verify-fixpoint>", "instcombine")) else {
            return;
        };
        assert!(
            String::from_utf8_lossy(&strict.stderr).contains("did not reach a fixpoint"),
            "the reduced case no longer needs two runs; find another: {}",
            String::from_utf8_lossy(&strict.stderr)
        );
        let out = run(UNROLL_PRIVATE_PASSES).unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    /// A counted loop over a shared tile (n-body's inner loop, reduced).
    const TILE_LOOP: &str = "target triple = \"nvptx64-nvidia-cuda\"\n\
        define void @k(ptr addrspace(3) %tile, ptr %out, float %me) {\nentry:\n  br label %loop\nloop:\n\
        \x20 %i = phi i64 [ 0, %entry ], [ %n, %loop ]\n  %acc = phi float [ 0.0, %entry ], [ %acc2, %loop ]\n\
        \x20 %p = getelementptr inbounds [4 x float], ptr addrspace(3) %tile, i64 %i\n  %b0 = load float, ptr addrspace(3) %p, align 16\n\
        \x20 %p3 = getelementptr inbounds i8, ptr addrspace(3) %p, i64 12\n  %b3 = load float, ptr addrspace(3) %p3, align 4\n\
        \x20 %dx = fsub float %b0, %me\n  %d2 = call float @llvm.fma.f32(float %dx, float %dx, float %me)\n\
        \x20 %inv = call float @llvm.sqrt.f32(float %d2)\n  %s = fmul float %b3, %inv\n  %s2 = fmul float %s, %inv\n\
        \x20 %s3 = fmul float %s2, %dx\n  %acc2 = fadd float %acc, %s3\n  %n = add nuw nsw i64 %i, 1\n\
        \x20 %c = icmp ult i64 %n, 256\n  br i1 %c, label %loop, label %done\n\
        done:\n  store float %acc2, ptr %out, align 4\n  ret void\n}\n\
        declare float @llvm.fma.f32(float, float, float)\ndeclare float @llvm.sqrt.f32(float)\n";

    #[test]
    fn the_partial_unroll_budget_unrolls_a_tile_loop_at_least_twice_as_far() {
        let copies = |extra: &[&str]| {
            let args: Vec<&str> = ["-mcpu=sm_90", "-passes=loop-unroll<O3>"].iter().chain(extra).copied().collect();
            let out = opt_on("budget", TILE_LOOP, &args)?;
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            Some(String::from_utf8_lossy(&out.stdout).matches("fsub float").count())
        };
        let Some(default) = copies(&[]) else { return };
        let budget = copies(&[crate::device_build::PARTIAL_UNROLL_BUDGET]).unwrap();
        // This reduced body is smaller than n-body's (8 copies there at the budget, 4 without).
        assert!(default >= 2 && budget >= 2 * default, "copies: default {default}, with the budget {budget}");
    }

    #[test]
    fn a_marked_loop_with_too_many_iterations_stays_a_loop() {
        let Some(out) = opt_on("big", BIG, &["-passes=function(loop(loop-unroll-full))", FULL_UNROLL_MAX_ITERATIONS])
        else {
            return;
        };
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let ir = String::from_utf8_lossy(&out.stdout);
        assert_eq!(ir.matches("store i32 %v").count(), 1, "the loop was unrolled:\n{ir}");
    }
}
