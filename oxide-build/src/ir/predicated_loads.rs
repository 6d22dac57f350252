//! Speculated reads of inputs as predicated loads (after `opt` and the other after-`opt`
//! transforms, before `llc`).
//!
//! `guarded_loads.rs` and `speculated_blocks.rs` make guarded reads unconditional by reading
//! the input's element 0 when the guard fails; after both (sgemm's prefetch) a read is
//!
//! ```text
//!     %c = and i1 %more, %ok
//!     %a = select i1 %c, ptr %q, ptr %__oxide_in_a     ; %q computed from %__oxide_in_a
//!     %v = load float, ptr %a, align 4, !oxide.speculated !7
//!     %s = select i1 %ok, float %v, float 0.000000e+00
//! ```
//!
//! which costs two 64-bit selects (2 SASS `SEL`) for the address and an `FSEL` for the value,
//! per read. Here the load reads `%q` under a predicate instead, and is zero otherwise:
//!
//! ```text
//!     %g = addrspacecast ptr %q to ptr addrspace(1)
//!     %v = call float asm "mov.b32 $0, 0; @$2 ld.global.nc.b32 $0, [$1];", "=f,l,b"(ptr addrspace(1) %g, i1 %c)
//! ```
//!
//! and a select that zeroes `%v` unless `%c` or a conjunct of it (`%ok` above) holds is `%v`
//! itself: where its condition fails, `%c` fails too and `%v` is already zero. sgemm's main
//! loop: 652 -> 626 SASS instructions per k-tile (no `SEL`, no `FSEL`; 128 -> 126 registers).
//!
//! Sound because only loads those two passes made, marked with [`MARK`], are rewritten, and a
//! marked load's value where its address select picks the input's element 0 is never observed:
//! the passes keep it behind a select on the same condition, or a phi of the path where it held.
//! So any value would do there, zero included; where the condition holds the same address is
//! read as before. The same shape written by hand (`if c { &a[i] } else { &a[0] }`) does
//! observe element 0, and has no mark; `opt` drops unknown metadata where it merges two loads,
//! so a marked load never stands for an unmarked one (a dropped mark only loses the rewrite).
//! The computed address must derive from the same input (`guarded_loads::input_root`): kernel
//! pointer arguments are global memory, so `ld.global` reads it, and `.nc` (what llc emits for
//! these loads) only where the input is `noalias readonly`, so nothing writes it during the
//! launch. The asm is no side effect: it reads memory only (`memory(argmem: read)`), so llc
//! may drop it when unused. Scalar `float`, `double`, `i32` and `i64` loads, aligned to their
//! size, qualify; narrower, vector and aggregate ones stay.

use super::guarded_epilogs::replace_value;
use super::guarded_loads::{apply, each_kernel, input_root, readonly_inputs, REMOVED};
use super::{definitions, split_top, uses_value, Line};

/// The metadata `guarded_loads.rs` and `speculated_blocks.rs` attach to the loads they made
/// unconditional (see the module docs), as they write it.
pub(super) const MARK: &str = ", !oxide.speculated !{}";

/// The metadata kind in [`MARK`], as `opt` prints it on a load (`!oxide.speculated !7`).
const MARK_KIND: &str = "!oxide.speculated ";

/// Whether the load `line` carries [`MARK`].
pub(super) fn is_marked(line: &str) -> bool {
    line.contains(MARK_KIND)
}

/// Rewrites every marked read of every kernel; returns how many loads became predicated.
pub(super) fn predicate(lines: &mut Vec<Line>) -> usize {
    each_kernel(lines, rewrite_function)
}

/// A load's type as the asm sees it: its output constraint and its bit width.
fn asm_type(ty: &str) -> Option<(&'static str, u32)> {
    match ty {
        "float" => Some(("f", 32)),
        "i32" => Some(("r", 32)),
        "double" => Some(("d", 64)),
        "i64" => Some(("l", 64)),
        _ => None,
    }
}

/// The zero of `ty`, as LLVM prints it.
fn zero(ty: &str) -> &'static str {
    if ty.starts_with('i') {
        "0"
    } else {
        "0.000000e+00"
    }
}

/// One marked load to rewrite.
struct Site {
    load: usize,
    value: String,
    ty: String,
    /// The asm's output constraint and the load's bit width ([`asm_type`]).
    constraint: &'static str,
    bits: u32,
    /// The computed address, read when `cond` is `on`.
    ptr: String,
    cond: String,
    on: bool,
    nc: bool,
    /// Selects of the value that become the value itself.
    folds: Vec<usize>,
}

fn rewrite_function(mut body: Vec<Line>, define: &str, first_id: usize) -> (Vec<Line>, usize) {
    let inputs = readonly_inputs(define);
    if inputs.is_empty() {
        return (body, 0);
    }
    let nc_inputs = noalias_inputs(define);
    let defs = definitions(&body);
    let sites: Vec<Site> = (0..body.len()).filter_map(|i| find_site(&body, &defs, i, &inputs, &nc_inputs)).collect();
    let mut inserts = Vec::new();
    for (n, s) in sites.iter().enumerate() {
        let g = format!("%__oxide_pred{}_global", first_id + n);
        let (nc, not, bits) = (if s.nc { ".nc" } else { "" }, if s.on { "" } else { "!" }, s.bits);
        inserts.push((s.load, vec![format!("  {g} = addrspacecast ptr {} to ptr addrspace(1)", s.ptr)]));
        body[s.load].text = format!(
            "  {} = call {} asm \"mov.b{bits} $0, 0;\\0A\\09@{not}$2 ld.global{nc}.b{bits} $0, [$1];\", \"={},l,b\"(ptr addrspace(1) {g}, i1 {}) nounwind willreturn memory(argmem: read)",
            s.value, s.ty, s.constraint, s.cond
        );
        for &f in &s.folds {
            let Some((name, _)) = body[f].text.trim().split_once(" = ") else { continue };
            let name = name.to_string();
            body[f].text = REMOVED.to_string();
            for line in body.iter_mut().filter(|l| uses_value(&l.text, &name)) {
                line.text = replace_value(&line.text, &name, &s.value);
            }
        }
    }
    apply(&mut body, inserts);
    (body, sites.len())
}

fn find_site(
    body: &[Line],
    defs: &std::collections::HashMap<String, usize>,
    i: usize,
    inputs: &[String],
    nc_inputs: &[String],
) -> Option<Site> {
    let text = body[i].text.trim();
    if !is_marked(text) {
        return None;
    }
    let (value, rest) = text.split_once(" = load ")?;
    let parts = split_top(rest);
    let ty = *parts.first()?;
    let (constraint, bits) = asm_type(ty)?;
    let addr = parts.get(1)?.strip_prefix("ptr ")?;
    // llc would split a load less aligned than its size; the asm cannot.
    let align: u64 = parts.iter().find_map(|p| p.strip_prefix("align "))?.parse().ok()?;
    if align < u64::from(bits / 8) {
        return None;
    }
    // `%a = select i1 %c, ptr %q, ptr %root` (or the arms the other way round).
    let sel = body[*defs.get(addr)?].text.trim().strip_prefix(addr)?.strip_prefix(" = select i1 ")?;
    let sel = split_top(sel);
    let [cond, x, y] = &sel[..] else { return None };
    let (x, y) = (x.strip_prefix("ptr ")?, y.strip_prefix("ptr ")?);
    let (ptr, root, on) = if inputs.iter().any(|r| r == y) { (x, y, true) } else { (y, x, false) };
    if ptr == root || input_root(body, ptr, inputs).as_deref() != Some(root) {
        return None;
    }
    // Where `cond` (reading where it holds) is `and %c2, X`, `%c2` failing fails it too; a
    // read where it fails, dually, under `or`.
    let mut conds = vec![*cond];
    let op = if on { " = and i1 " } else { " = or i1 " };
    if let Some(ops) = defs.get(*cond).and_then(|&d| body[d].text.trim().strip_prefix(cond)?.strip_prefix(op)) {
        conds.extend(split_top(ops));
    }
    let folds = body
        .iter()
        .enumerate()
        .filter(|(_, l)| uses_value(&l.text, value) && folds_to(l.text.trim(), value, ty, &conds, on))
        .map(|(j, _)| j)
        .collect();
    Some(Site {
        load: i,
        value: value.to_string(),
        ty: ty.to_string(),
        constraint,
        bits,
        ptr: ptr.to_string(),
        cond: cond.to_string(),
        on,
        nc: nc_inputs.iter().any(|r| r == root),
        folds,
    })
}

/// Whether `line` is a select of `value` and zero that is `value` itself once the load reads
/// only where `conds[0]` is `on`, and is zero elsewhere: `select %c, %v, 0` (`select %c, 0, %v`
/// where `on` is false) with `%c` any of `conds`, which fail wherever `conds[0]` does (holds).
fn folds_to(line: &str, value: &str, ty: &str, conds: &[&str], on: bool) -> bool {
    let Some((_, rest)) = line.split_once(" = select i1 ") else { return false };
    let parts = split_top(rest);
    let [c, a, b] = &parts[..] else { return false };
    let (kept, zeroed) = if on { (a, b) } else { (b, a) };
    *kept == format!("{ty} {value}") && *zeroed == format!("{ty} {}", zero(ty)) && conds.contains(c)
}

/// `%__oxide_in_*` pointer parameters marked both `noalias` and `readonly`: nothing writes
/// them during the launch, so they may be read through the non-coherent path.
fn noalias_inputs(define: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (define.find('('), super::find_params_close(define)) else { return Vec::new() };
    split_top(&define[open + 1..close])
        .into_iter()
        .filter(|p| p.split_whitespace().any(|w| w == "noalias"))
        .filter_map(|p| p.split_whitespace().last())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::tests::{assert_valid_ir, find_tool, transformed};

    /// sgemm's prefetched read after both passes: a guard (`%ok`) inside a speculated block
    /// (`%more`).
    const SPECULATED: &str = r#"target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @k(ptr noalias noundef readonly captures(none) %__oxide_in_a, i64 %__oxide_in_a_len, i64 %i, i1 %more, i1 %ok, ptr noalias %__oxide_out_y) #0 {
start:
  %q = getelementptr inbounds nuw float, ptr %__oxide_in_a, i64 %i
  %__oxide_hoist0_address = select i1 %ok, ptr %q, ptr %__oxide_in_a
  %c = and i1 %more, %ok
  %a = select i1 %c, ptr %q, ptr %__oxide_in_a
  %0 = load float, ptr %a, align 4, !noalias !2, !oxide.speculated !3
  %1 = select i1 %ok, float %0, float 0.000000e+00
  %2 = fmul float %1, 2.000000e+00
  store float %2, ptr %__oxide_out_y, align 4
  ret void
}

attributes #0 = { nounwind }

!2 = !{}
!3 = !{}
"#;

    fn run(ir: &str) -> (String, usize) {
        transformed(ir, predicate)
    }

    #[test]
    fn a_marked_read_becomes_a_predicated_load_and_its_zeroing_select_goes() {
        let (out, n) = run(SPECULATED);
        assert_eq!(n, 1, "{out}");
        let expect = [
            "  %c = and i1 %more, %ok",
            "  %a = select i1 %c, ptr %q, ptr %__oxide_in_a",
            "  %__oxide_pred0_global = addrspacecast ptr %q to ptr addrspace(1)",
            "  %0 = call float asm \"mov.b32 $0, 0;\\0A\\09@$2 ld.global.nc.b32 $0, [$1];\", \"=f,l,b\"(ptr addrspace(1) %__oxide_pred0_global, i1 %c) nounwind willreturn memory(argmem: read)",
            "  %1 = fmul float %0, 2.000000e+00",
            "  store float %1, ptr %__oxide_out_y, align 4",
        ]
        .join("\n");
        assert!(out.contains(&expect), "{out}");
        assert_valid_ir("predicated", &out);
        // The select on the whole condition folds too; one on an unrelated one, or to another
        // value than zero, stays.
        let same = SPECULATED.replace("%1 = select i1 %ok,", "%1 = select i1 %c,");
        assert!(!run(&same).0.contains(" = select i1 %c, float"));
        let other = SPECULATED
            .replace("%1 = select i1 %ok,", "%1 = select i1 %x,")
            .replace("i1 %ok, ptr noalias", "i1 %ok, i1 %x, ptr noalias");
        assert!(run(&other).0.contains("%1 = select i1 %x, float %0, float 0.000000e+00"));
        let one = SPECULATED.replace("float %0, float 0.000000e+00", "float %0, float 1.000000e+00");
        assert!(run(&one).0.contains("%1 = select i1 %ok, float %0, float 1.000000e+00"));
    }

    #[test]
    fn arms_the_other_way_round_read_where_the_condition_fails() {
        let ir = SPECULATED
            .replace("%c = and i1 %more, %ok", "%c = or i1 %more, %ok")
            .replace("select i1 %c, ptr %q, ptr %__oxide_in_a", "select i1 %c, ptr %__oxide_in_a, ptr %q")
            .replace("float %0, float 0.000000e+00", "float 0.000000e+00, float %0");
        let (out, n) = run(&ir);
        assert_eq!(n, 1, "{out}");
        assert!(out.contains("@!$2 ld.global.nc.b32"), "{out}");
        assert!(out.contains("%1 = fmul float %0, 2.000000e+00"), "{out}");
        assert_valid_ir("predicated-inverted", &out);
    }

    #[test]
    fn unmarked_reads_and_reads_of_other_memory_stay() {
        // `if c { &a[i] } else { &a[0] }` in the kernel's own code: element 0 is observed.
        let user = SPECULATED.replace(", !oxide.speculated !3", "");
        assert_eq!(run(&user), (user.clone(), 0));
        let writable = SPECULATED.replace("noundef readonly captures", "noundef captures");
        assert_eq!(run(&writable).1, 0);
        let output = SPECULATED.replace("ptr %q, ptr %__oxide_in_a\n  %0", "ptr %q, ptr %__oxide_out_y\n  %0");
        assert_eq!(run(&output).1, 0);
        // A computed address not derived from the input: its memory space is unknown.
        let loaded = SPECULATED.replace(
            "%q = getelementptr inbounds nuw float, ptr %__oxide_in_a, i64 %i",
            "%p = load ptr, ptr %__oxide_in_a, align 8\n  %q = getelementptr inbounds nuw float, ptr %p, i64 %i",
        );
        assert_eq!(run(&loaded).1, 0);
    }

    #[test]
    fn other_types_and_underaligned_reads_stay() {
        for ty in ["i8", "i16", "half", "<2 x float>", "ptr", "{ i32, i32 }"] {
            let ir = SPECULATED.replace("load float", &format!("load {ty}"));
            assert_eq!(run(&ir).1, 0, "{ty}");
        }
        let ir = SPECULATED.replace("load float, ptr %a, align 4", "load float, ptr %a, align 2");
        assert_eq!(run(&ir).1, 0);
        let volatile = SPECULATED.replace("load float", "load volatile float");
        assert_eq!(run(&volatile).1, 0);
    }

    #[test]
    fn wide_and_integer_reads_and_inputs_that_may_alias() {
        let wide = SPECULATED
            .replace("load float, ptr %a, align 4", "load double, ptr %a, align 8")
            .replace("float %0, float 0.000000e+00", "double %0, double 0.000000e+00")
            .replace("%2 = fmul float %1, 2.000000e+00", "%2 = fptrunc double %1 to float");
        let (out, n) = run(&wide);
        assert_eq!(n, 1, "{out}");
        assert!(
            out.contains("call double asm \"mov.b64 $0, 0;\\0A\\09@$2 ld.global.nc.b64 $0, [$1];\", \"=d,l,b\""),
            "{out}"
        );
        assert!(out.contains("%1 = fptrunc double %0 to float"), "{out}");
        let int = SPECULATED
            .replace("load float, ptr %a, align 4", "load i64, ptr %a, align 8")
            .replace("float %0, float 0.000000e+00", "i64 %0, i64 0")
            .replace("%2 = fmul float %1, 2.000000e+00", "%2 = sitofp i64 %1 to float");
        let (out, n) = run(&int);
        assert_eq!(n, 1, "{out}");
        assert!(
            out.contains("call i64 asm \"mov.b64 $0, 0;\\0A\\09@$2 ld.global.nc.b64 $0, [$1];\", \"=l,l,b\""),
            "{out}"
        );
        assert!(out.contains("%1 = sitofp i64 %0 to float"), "{out}");
        // Readonly but not noalias: another argument may write it, so not the `.nc` path.
        let aliased = SPECULATED.replace("ptr noalias noundef readonly", "ptr noundef readonly");
        let (out, n) = run(&aliased);
        assert_eq!(n, 1, "{out}");
        assert!(out.contains("@$2 ld.global.b32 $0, [$1];"), "{out}");
    }

    /// llc takes the asm and reads the computed address under the condition, with no 64-bit
    /// select left.
    #[test]
    fn llc_compiles_the_predicated_load() {
        let Some(llc) = find_tool("llc-22") else {
            eprintln!("skipped: llc-22 not found on PATH (apt-get install llvm-22)");
            return;
        };
        let int = SPECULATED
            .replace("load float, ptr %a, align 4", "load i32, ptr %a, align 4")
            .replace("float %0, float 0.000000e+00", "i32 %0, i32 0")
            .replace("%2 = fmul float %1, 2.000000e+00", "%2 = sitofp i32 %1 to float");
        let dir = std::env::temp_dir().join(format!("oxide-predicated-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (k, ir) in [SPECULATED.to_string(), int].iter().enumerate() {
            let (out, _) = run(ir);
            let (ll, ptx) = (dir.join(format!("{k}.ll")), dir.join(format!("{k}.ptx")));
            std::fs::write(&ll, &out).unwrap();
            let status = std::process::Command::new(&llc)
                .args(["-mcpu=sm_90", "-mattr=+ptx80"])
                .arg(&ll)
                .arg("-o")
                .arg(&ptx)
                .output()
                .unwrap();
            assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
            let ptx = std::fs::read_to_string(&ptx).unwrap();
            assert!(ptx.contains("ld.global.nc.b32") && ptx.contains("@%p"), "{ptx}");
            assert!(!ptx.contains("selp.b64") && !ptx.contains("cvta.to.global.u64 \t%rd1,"), "{ptx}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
