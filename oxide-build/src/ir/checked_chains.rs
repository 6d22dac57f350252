//! Input reads behind bounds checks that depend on earlier reads, issued before those checks
//! (after `opt`, before `llc`).
//!
//! A gather through an index array, `x[cols[j]]` (a CSR row, unrolled 4 times), checks each
//! loaded index before the next step; the panic path leaves every check:
//!
//! ```text
//! S:  %c0 = load i32, ptr %p0            ; cols[j]
//!     %ok0 = icmp ult i64 (zext %c0), %__oxide_in_x_len
//!     br i1 %ok0, label %N1, label %panic
//! N1: %c1 = load i32, ptr %p1            ; cols[j + 1]: issued only once %c0 arrived
//!     %ok1 = icmp ult ...
//!     br i1 %ok1, label %N2, label %panic
//! ...
//! Nk: ... loads of vals[j..] and x[c0..], the arithmetic, the loop's own branch
//! ```
//!
//! ptxas does not issue a load above the branch before it, so the index loads go out one
//! memory latency after another (spmv_csr: 1.25 of nvcc's time, whose loop has no checks). Here
//! the steps' reads of read-only inputs move into `S`, with the pure arithmetic they need, each
//! at its address when that lies within its input and at the input's element 0 otherwise:
//!
//! ```text
//! S:  ... %ok0 ...
//!     %off = freeze (ptrtoint %p1 - ptrtoint %__oxide_in_cols) & -4   ; fixed and aligned
//!     %in = %off <= len * size - 4   (and len * size >= 4)
//!     %a = getelementptr i8, ptr %__oxide_in_cols, i64 (select %in, %off, 0)
//!     %c1 = load i32, ptr %a
//!     %ok1 = icmp ult ...
//!     br i1 %ok0, label %N1, label %panic
//! N1: br i1 %ok1, label %N2, label %panic
//! ```
//!
//! The test reads no loaded value unless the address does, so the reads of one step no longer
//! wait for the checks of the step before. Sound because a moved read only ever reads inside
//! its input, aligned and no wider than an element (element 0 is always readable: the
//! launchers point empty inputs at a pad), which
//! is read-only for the whole launch, and where the original code read, the address lies
//! within the input, so the same element is read. Moved arithmetic has no side effect and
//! cannot trap. The element sizes come from the `__oxide_input_sizes_*` record `#[kernel]`
//! writes. Only chains where some check depends on a read qualify: checks of thread indices
//! alone (a stencil's) already let the reads after them go out together.

use super::guarded_epilogs::cond_branch;
use super::guarded_loads::{
    apply, blocks, each_kernel, fits, input_root, input_sizes, readonly_inputs, type_bytes, Block, REMOVED,
};
use super::speculated_blocks::PURE_OPS;
use super::{split_top, uses_value, Line, MetaRecord};
use std::collections::{HashMap, HashSet};

/// The most instructions one chain moves.
const MAX_MOVED: usize = 256;

/// Rewrites every qualifying chain of every kernel; returns how many chains changed.
pub(super) fn hoist(lines: &mut Vec<Line>, meta: &[MetaRecord]) -> usize {
    each_kernel(lines, |body, define, first| {
        let inputs = sized_inputs(define, meta);
        rewrite_function(body, &inputs, first)
    })
}

/// The kernel's read-only input pointers whose element sizes `#[kernel]` recorded.
fn sized_inputs(define: &str, meta: &[MetaRecord]) -> HashMap<String, u64> {
    let readonly = readonly_inputs(define);
    input_sizes(define, meta).into_iter().filter(|(p, s)| *s > 0 && readonly.contains(p)).collect()
}

/// A block that starts the inlined panic path (`ir/panic_paths.rs`): it reads the panic buffer.
fn is_panic(body: &[Line], b: &Block) -> bool {
    b.insts.first().is_some_and(|&i| body[i].text.contains("@__oxide_panic_buffer"))
}

fn rewrite_function(mut body: Vec<Line>, inputs: &HashMap<String, u64>, first_id: usize) -> (Vec<Line>, usize) {
    if inputs.is_empty() {
        return (body, 0);
    }
    let blocks = blocks(&body);
    let find = |l: &str| blocks.iter().position(|b| b.label == l);
    let panics: Vec<bool> = blocks.iter().map(|b| is_panic(&body, b)).collect();
    let mut taken = vec![false; blocks.len()];
    let mut inserts: Vec<(usize, Vec<String>)> = Vec::new();
    let mut count = 0;
    for s in 0..blocks.len() {
        if taken[s] || panics[s] {
            continue;
        }
        // The chain: S, then each block that S's (or the last step's) check goes on to when
        // the other side panics, entered from nowhere else.
        let mut steps = vec![s];
        let mut go_on: Vec<(String, bool)> = Vec::new();
        while let Some(&term) = blocks[*steps.last().unwrap_or(&s)].insts.last() {
            let Some((c, t, f)) = cond_branch(&body[term].text) else { break };
            let (next, on_true) = match (find(&t).map(|k| panics[k]), find(&f).map(|k| panics[k])) {
                (Some(false), Some(true)) => (t, true),
                (Some(true), Some(false)) => (f, false),
                _ => break,
            };
            let Some(k) = find(&next) else { break };
            let first_is_phi = blocks[k].insts.first().is_some_and(|&i| body[i].text.contains(" = phi "));
            if blocks[k].preds.len() != 1 || taken[k] || steps.contains(&k) || first_is_phi {
                break;
            }
            go_on.push((c, on_true));
            steps.push(k);
        }
        if steps.len() < 2 {
            continue;
        }
        for &k in &steps {
            taken[k] = true;
        }
        let id = first_id + count;
        let Some((moved, mut lines, m)) = plan(&body, &blocks, &steps, &go_on, inputs, id) else { continue };
        let Some(&term) = blocks[s].insts.last() else { continue };
        // The fast path: every check before step `m` passed (tested in S, from the moved
        // reads, which keeps llc from sinking them back behind the checks) goes straight to
        // step `m`; otherwise the checks run as before, from a block of S's old branch.
        let Some(all) = all_passed(&go_on[..m], &moved, &body, id, &mut lines) else { continue };
        for &i in &moved {
            body[i].text = REMOVED.to_string();
        }
        let (s_label, target, slow) = (&blocks[s].label, &blocks[steps[m]].label, format!("%__oxide_cc{id}_slow"));
        lines.push(format!("  br i1 {all}, label {target}, label {slow}"));
        lines.push(String::new());
        lines.push(format!("{}: ; preds = {s_label}", &slow[1..]));
        inserts.push((term, lines));
        // S's old branch now leaves from the slow block; the target gains S as a predecessor.
        let old_succ: Vec<String> = cond_branch(&body[term].text).map(|(_, t, f)| vec![t, f]).unwrap_or_default();
        for b in &blocks {
            let head = format!("{}:", &b.label[1..]);
            let Some(at) = body.iter().position(|l| l.text.starts_with(&head)) else { continue };
            if old_succ.contains(&b.label) {
                body[at].text = rename_pred(&body[at].text, s_label, &slow);
            }
            if &b.label == target {
                body[at].text = format!("{}, {s_label}", body[at].text);
            }
        }
        count += 1;
    }
    apply(&mut body, inserts);
    (body, count)
}

/// A block's label line with predecessor `old` renamed `new` (in LLVM's `; preds =` comment).
fn rename_pred(line: &str, old: &str, new: &str) -> String {
    let Some((head, preds)) = line.split_once("; preds = ") else { return line.to_string() };
    let preds: Vec<&str> = preds.split(", ").map(|p| if p.trim() == old { new } else { p }).collect();
    format!("{head}; preds = {}", preds.join(", "))
}

/// "Every check of `go_on` went on", made at the end of `lines` (a `select` chain: a test made
/// from a read that a failed check guarded may be poison, and `and` would pass it on). `None`
/// when a test is neither in S nor moved there.
fn all_passed(
    go_on: &[(String, bool)],
    moved: &[usize],
    body: &[Line],
    id: usize,
    lines: &mut Vec<String>,
) -> Option<String> {
    let moved_names: Vec<&str> =
        moved.iter().filter_map(|&i| body[i].text.trim().split_once(" = ").map(|(n, _)| n)).collect();
    let mut all: Option<String> = None;
    for (j, (c, on_true)) in go_on.iter().enumerate() {
        if j > 0 && !moved_names.contains(&c.as_str()) {
            return None;
        }
        let go = if *on_true {
            c.clone()
        } else {
            let g = format!("%__oxide_cc{id}_go{j}");
            lines.push(format!("  {g} = xor i1 {c}, true"));
            g
        };
        all = Some(match all {
            None => go,
            Some(before) => {
                let a = format!("%__oxide_cc{id}_all{j}");
                lines.push(format!("  {a} = select i1 {before}, i1 {go}, i1 false"));
                a
            }
        });
    }
    all
}

/// The lines to move into the chain's first block (before its branch) and the lines they come
/// from, or `None` when no read moves.
fn plan(
    body: &[Line],
    blocks: &[Block],
    steps: &[usize],
    go_on: &[(String, bool)],
    inputs: &HashMap<String, u64>,
    id: usize,
) -> Option<(Vec<usize>, Vec<String>, usize)> {
    let def = |line: &str| line.trim().split_once(" = ").map(|(n, r)| (n.to_string(), r.to_string()));
    // Values the later steps make (unavailable in S unless moved) and values that derive from
    // a read anywhere in the chain.
    let mut later: HashSet<String> = HashSet::new();
    let mut from_read: HashSet<String> = HashSet::new();
    for (n, &k) in steps.iter().enumerate() {
        for &i in &blocks[k].insts {
            let Some((name, rhs)) = def(&body[i].text) else { continue };
            if n > 0 {
                later.insert(name.clone());
            }
            if rhs.starts_with("load ") || from_read.iter().any(|v| uses_value(&rhs, v)) {
                from_read.insert(name);
            }
        }
    }
    let mut moved_names: HashSet<String> = HashSet::new();
    let mut moved: Vec<usize> = Vec::new();
    let mut out: Vec<String> = Vec::new();
    let mut reads = 0;
    let available =
        |rhs: &str, moved_names: &HashSet<String>| later.iter().all(|v| !uses_value(rhs, v) || moved_names.contains(v));
    let roots: Vec<String> = inputs.keys().cloned().collect();
    // The first step not moved whole (its rest, and the steps after it, stay).
    let mut m = steps.len() - 1;
    'steps: for (n, &k) in steps.iter().enumerate().skip(1) {
        let insts = &blocks[k].insts;
        m = n;
        for &i in &insts[..insts.len() - 1] {
            let Some((name, rhs)) = def(&body[i].text) else { break 'steps };
            if !available(&rhs, &moved_names) || moved.len() >= MAX_MOVED {
                break 'steps;
            }
            let op = rhs.split_whitespace().next().unwrap_or("");
            if PURE_OPS.contains(&op) {
                out.push(format!("  {name} = {rhs}"));
            } else if let Some(load) = read_of_input(body, &rhs, &roots) {
                // Worth it only behind a check that waits for a read.
                if !go_on[..n].iter().any(|(c, _)| from_read.contains(c)) {
                    break 'steps;
                }
                // No wider than an element (a non-empty input then holds a whole read at
                // element 0, an empty one points at the launchers' pad), and aligned.
                let Some(&size) = inputs.get(&load.root).filter(|&&s| load.bytes <= s) else { break 'steps };
                let Some(align) = load.align else { break 'steps };
                let v = format!("%__oxide_cc{id}_{}", moved.len());
                let (root, bytes) = (&load.root, load.bytes);
                // The byte offset from the input's start, frozen (the address may be poison
                // where a check failed) and rounded down to the read's alignment (a no-op where
                // the read ran before: its address was aligned), and the read at `root + offset`
                // (a pointer based on the input, so llc still reads it through the read-only
                // global path).
                out.extend([
                    format!("  {v}_pi = ptrtoint ptr {} to i64", load.ptr),
                    format!("  {v}_ri = ptrtoint ptr {root} to i64"),
                    format!("  {v}_d = sub i64 {v}_pi, {v}_ri"),
                    format!("  {v}_fr = freeze i64 {v}_d"),
                    format!("  {v}_off = and i64 {v}_fr, -{align}"),
                    format!("  {v}_all = mul nuw i64 {root}_len, {size}"),
                    format!("  {v}_big = icmp uge i64 {v}_all, {bytes}"),
                    format!("  {v}_lim = sub i64 {v}_all, {bytes}"),
                    format!("  {v}_le = icmp ule i64 {v}_off, {v}_lim"),
                    format!("  {v}_in = select i1 {v}_big, i1 {v}_le, i1 false"),
                    format!("  {v}_at = select i1 {v}_in, i64 {v}_off, i64 0"),
                    format!("  {v}_a = getelementptr inbounds i8, ptr {root}, i64 {v}_at"),
                    format!("  {name} = {}{v}_a{}", load.head, load.tail),
                ]);
                reads += 1;
            } else {
                break 'steps;
            }
            moved_names.insert(name);
            moved.push(i);
        }
    }
    (reads > 0).then_some((moved, out, m))
}

/// A plain load of at most 16 bytes from a read-only input: `<head>ptr <ptr><tail>`.
struct Read {
    head: String,
    ptr: String,
    tail: String,
    root: String,
    bytes: u64,
    /// The `align N` the load states.
    align: Option<u64>,
}

fn read_of_input(body: &[Line], rhs: &str, inputs: &[String]) -> Option<Read> {
    let rest = rhs.strip_prefix("load ")?;
    if rest.starts_with("atomic") || rest.starts_with("volatile") {
        return None;
    }
    let parts = split_top(rest);
    let ty = parts.first()?.trim();
    let ptr = parts.get(1)?.trim().strip_prefix("ptr ")?.trim().to_string();
    if !fits(ty)? {
        return None;
    }
    let bytes = type_bytes(ty)?;
    let root = input_root(body, &ptr, inputs)?;
    let at = rhs.find(&format!("ptr {ptr}"))?;
    let head = rhs[..at + 4].to_string();
    let tail = rhs[at + 4 + ptr.len()..].to_string();
    let align = tail.split(", ").find_map(|a| a.trim().strip_prefix("align ")?.parse::<u64>().ok());
    Some(Read { head, ptr, tail, root, bytes, align: align.filter(|a| a.is_power_of_two()) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ir: &str, sizes: &[u64]) -> (String, usize) {
        let meta = [MetaRecord { name: "__oxide_input_sizes_k".into(), values: sizes.to_vec() }];
        crate::ir::tests::transformed(ir, |lines| hoist(lines, &meta))
    }

    /// Two gathers `x[idx[j]]`, `x[idx[j + 1]]`, each index checked before the next step.
    const GATHER: &str = "define ptx_kernel void @k(ptr noalias noundef readonly %__oxide_in_idx, i64 noundef %__oxide_in_idx_len, ptr noalias noundef readonly %__oxide_in_x, i64 noundef %__oxide_in_x_len, ptr %out, i64 %j) #0 {
s:
  %p0 = getelementptr inbounds i32, ptr %__oxide_in_idx, i64 %j
  %c0 = load i32, ptr %p0, align 4
  %z0 = zext i32 %c0 to i64
  %ok0 = icmp ult i64 %z0, %__oxide_in_x_len
  br i1 %ok0, label %n1, label %panic

n1:                                               ; preds = %s
  %p1 = getelementptr inbounds i8, ptr %p0, i64 4
  %c1 = load i32, ptr %p1, align 4
  %z1 = zext i32 %c1 to i64
  %ok1 = icmp ult i64 %z1, %__oxide_in_x_len
  br i1 %ok1, label %n2, label %panic

n2:                                               ; preds = %n1
  %q0 = getelementptr inbounds float, ptr %__oxide_in_x, i64 %z0
  %v0 = load float, ptr %q0, align 4
  %q1 = getelementptr inbounds float, ptr %__oxide_in_x, i64 %z1
  %v1 = load float, ptr %q1, align 4
  %sum = fadd float %v0, %v1
  store float %sum, ptr %out, align 4
  ret void

panic:                                            ; preds = %n1, %s
  %b = load volatile ptr, ptr @__oxide_panic_buffer, align 8
  unreachable
}
";

    #[test]
    fn reads_behind_checks_of_reads_move_up_with_a_fast_path() {
        let (out, n) = run(GATHER, &[4, 4]);
        assert_eq!(n, 1, "{out}");
        for want in [
            // idx[j + 1], read at its offset from idx when that lies within idx.
            "  %__oxide_cc0_1_fr = freeze i64 %__oxide_cc0_1_d\n  %__oxide_cc0_1_off = and i64 %__oxide_cc0_1_fr, -4\n  %__oxide_cc0_1_all = mul nuw i64 %__oxide_in_idx_len, 4\n",
            "  %__oxide_cc0_1_a = getelementptr inbounds i8, ptr %__oxide_in_idx, i64 %__oxide_cc0_1_at\n  %c1 = load i32, ptr %__oxide_cc0_1_a, align 4\n",
            // x[idx[j]] too (n2's reads, up to the store, which stays).
            "  %v0 = load float, ptr %__oxide_cc0_5_a, align 4\n",
            "  %__oxide_cc0_all1 = select i1 %ok0, i1 %ok1, i1 false\n  br i1 %__oxide_cc0_all1, label %n2, label %__oxide_cc0_slow\n\n__oxide_cc0_slow: ; preds = %s\n  br i1 %ok0, label %n1, label %panic\n",
            "n1:                                               ; preds = %__oxide_cc0_slow\n  br i1 %ok1, label %n2, label %panic\n",
            "n2:                                               ; preds = %n1, %s\n  store float %sum, ptr %out, align 4\n",
            "panic:                                            ; preds = %n1, %__oxide_cc0_slow\n",
        ] {
            assert!(out.contains(want), "missing\n{want}\nin\n{out}");
        }
    }

    #[test]
    fn chains_without_a_checked_read_or_sizes_stay() {
        // The first check tests `%j`, not a read: the reads after it already go out together.
        let index_checks =
            GATHER.replace("%ok0 = icmp ult i64 %z0, %__oxide_in_x_len", "%ok0 = icmp ult i64 %j, %__oxide_in_x_len");
        let (out, n) = run(&index_checks, &[4, 4]);
        assert_eq!(n, 0, "{out}");
        // No element sizes for these inputs: nothing moves.
        let (out, n) = run(GATHER, &[4]);
        assert_eq!(n, 0, "{out}");
        // Reads wider than their input's element (a 1-element input may not hold one at
        // element 0), or without a stated alignment, stay.
        let (out, n) = run(GATHER, &[2, 2]);
        assert_eq!(n, 0, "{out}");
        let (out, n) = run(&GATHER.replace("load i32, ptr %p1, align 4", "load i32, ptr %p1"), &[4, 4]);
        assert_eq!(n, 0, "{out}");
    }

    /// LLVM's verifier accepts the result.
    #[test]
    fn the_rewrite_is_valid_ir() {
        let (out, n) = run(GATHER, &[4, 4]);
        assert_eq!(n, 1);
        let ir = format!("@__oxide_panic_buffer = external global ptr\n{out}attributes #0 = {{ nounwind }}\n");
        crate::ir::tests::assert_valid_ir("checked-chains", &ir);
    }
}
