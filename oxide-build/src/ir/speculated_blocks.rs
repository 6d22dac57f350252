//! Conditional blocks of input reads, executed unconditionally (after `opt`, before `llc`).
//!
//! A prefetch written the safe way, `let next = if kt + 1 < tiles { Some(load(kt + 1)) } else
//! { None }`, leaves after optimisation (and after `guarded_loads.rs` made each read
//! branch-free) one block of address arithmetic and loads under a branch:
//!
//! ```text
//! G:  %more = icmp ult i64 %kt1, %tiles
//!     br i1 %more, label %L, label %M
//! L:  %q = getelementptr float, ptr %__oxide_in_a, i64 %off      ; ... 8 such loads
//!     %v = load float, ptr %q
//!     br label %M
//! M:  %r = phi float [ %v, %L ], [ %old, %G ]
//!     ... 512 FMAs, then `%r` is stored to shared memory
//! ```
//!
//! ptxas sinks such a block below the independent work that follows it (here the FMAs of the
//! current tile), so the loads of the next tile wait for the whole tile's arithmetic: sgemm ran
//! at 1.12 of nvcc's time, whose twin has the loads unconditional. Here `L`'s instructions
//! move into `G`, each load reading the input's element 0 instead when the branch would have
//! skipped it, and every phi of `M` picks its value with a select:
//!
//! ```text
//! G:  %q = getelementptr float, ptr %__oxide_in_a, i64 %off
//!     %a = select i1 %more, ptr %q, ptr %__oxide_in_a
//!     %v = load float, ptr %a
//!     %s = select i1 %more, float %v, float %old
//!     br i1 %more, label %L, label %M
//! L:  br label %M
//! M:  %r = phi float [ %s, %L ], [ %s, %G ]
//! ```
//!
//! Sound for the same reasons as `guarded_loads.rs`: a moved instruction has no side effect and
//! cannot trap (pure arithmetic, whose result may be poison when the branch would have skipped
//! it, and which a select never picks then), and a moved load reads the same element as before
//! when the branch is taken and element 0 of a read-only input otherwise (always readable: the
//! launchers point empty inputs at a pad). Only blocks after a barrier, of at most
//! [`MAX_INSTRUCTIONS`] instructions, whose values `M` needs only after [`MIN_OVERLAP`]
//! instructions of its own (a prefetch: work for the loads to overlap) qualify. A block whose
//! values are stored at once gains nothing: an n-body kernel's tile load went from 1.15 to 1.35
//! of nvcc's time when moved, as ptxas then scheduled the inner loop worse.

use super::guarded_loads::{
    after_barrier, apply, blocks, each_kernel, fits, incoming, input_root, input_sizes, readonly_inputs,
    replace_incoming, within_element, Block, REMOVED,
};
use super::predicated_loads::{is_marked, MARK};
use super::{split_top, uses_value, Line, MetaRecord};
use std::collections::HashMap;

/// The most instructions a block may have to run on every path.
const MAX_INSTRUCTIONS: usize = 64;

/// The fewest instructions `M` must run before it uses a value from `L`.
const MIN_OVERLAP: usize = 32;

/// Instructions that may run where they were not asked to: no memory access, no call, no
/// trap (no integer division).
pub(super) const PURE_OPS: [&str; 32] = [
    "getelementptr",
    "add",
    "sub",
    "mul",
    "shl",
    "lshr",
    "ashr",
    "and",
    "or",
    "xor",
    "zext",
    "sext",
    "trunc",
    "select",
    "icmp",
    "fcmp",
    "fadd",
    "fsub",
    "fmul",
    "fneg",
    "fpext",
    "fptrunc",
    "bitcast",
    "sitofp",
    "uitofp",
    "extractelement",
    "insertelement",
    "shufflevector",
    "extractvalue",
    "insertvalue",
    "freeze",
    "ptrtoint",
];

/// Rewrites every qualifying block of every kernel in `ir`; returns the new text and how many
/// blocks moved.
pub(crate) fn speculate(ir: &str, meta: &[MetaRecord]) -> (String, usize) {
    let mut lines: Vec<Line> =
        ir.lines().enumerate().map(|(i, text)| Line { no: i + 1, text: text.to_string() }).collect();
    let count = each_kernel(&mut lines, |body, define, first| {
        rewrite_function(body, &readonly_inputs(define), &input_sizes(define, meta), first)
    });
    let mut out = String::with_capacity(ir.len() + 64 * count);
    for line in &lines {
        out.push_str(&line.text);
        out.push('\n');
    }
    (out, count)
}

/// One block to move: `L` (its instructions, in order) under `G`'s branch on `cond`.
struct Site {
    guard_term: usize,
    cond: String,
    /// The branch goes to `L` when `cond` is true.
    on_true: bool,
    moved: Vec<usize>,
    l_label: String,
    g_label: String,
    m_label: String,
}

fn rewrite_function(
    mut body: Vec<Line>,
    inputs: &[String],
    sizes: &HashMap<String, u64>,
    first_id: usize,
) -> (Vec<Line>, usize) {
    if inputs.is_empty() {
        return (body, 0);
    }
    let blocks = blocks(&body);
    let after = after_barrier(&body, &blocks);
    let sites: Vec<Site> = blocks
        .iter()
        .filter_map(|l| find_site(&body, &blocks, l, inputs, sizes))
        .filter(|s| after.contains(&s.guard_term))
        .collect();
    let mut inserts: Vec<(usize, Vec<String>)> = Vec::new();
    for (n, s) in sites.iter().enumerate() {
        let id = first_id + n;
        // `taken`: true exactly when the branch would have gone to L.
        let taken = if s.on_true { s.cond.clone() } else { format!("%__oxide_spec{id}_taken") };
        let mut lines = Vec::new();
        if !s.on_true {
            lines.push(format!("  {taken} = xor i1 {}, true", s.cond));
        }
        for (k, &i) in s.moved.iter().enumerate() {
            let text = body[i].text.trim();
            match load_parts(text) {
                Some((value, ty, ptr, tail)) => {
                    // `find_site` checked the root exists.
                    let root = input_root(&body, &ptr, inputs).unwrap_or_default();
                    let a = format!("%__oxide_spec{id}_address{k}");
                    // An address already chosen by a guard (`guarded_loads.rs`): one select on
                    // both conditions rather than a select of a select.
                    // Marked where its value is never observed unless the address select
                    // picks `ptr` (`predicated_loads.rs`): where the branch was not taken, and
                    // where a guard failed if that guard's load was marked too.
                    let marked = match clamped_address(&body, &ptr, &root) {
                        Some((guard, inner)) => {
                            lines.push(format!("  {a}.if = and i1 {taken}, {guard}"));
                            lines.push(format!("  {a} = select i1 {a}.if, ptr {inner}, ptr {root}"));
                            is_marked(text)
                        }
                        None => {
                            lines.push(format!("  {a} = select i1 {taken}, ptr {ptr}, ptr {root}"));
                            true
                        }
                    };
                    let mark = if marked { MARK } else { "" };
                    lines.push(format!("  {value} = load {ty}, ptr {a}{tail}{mark}"));
                }
                None => lines.push(format!("  {text}")),
            }
        }
        // Every phi of M: the value L would have brought when the branch is taken, else G's —
        // or L's alone when nothing can see the phi on the other path (its uses all wait for
        // the same branch taken), so G's value need not stay live across M.
        let m = blocks.iter().find(|b| b.label == s.m_label);
        for (k, &i) in m.map(|m| m.insts.as_slice()).unwrap_or_default().iter().enumerate() {
            let phi = body[i].text.trim().to_string();
            let Some((name, rest)) = phi.split_once(" = phi ") else { break };
            let (Some(from_l), Some(from_g)) = (incoming(&phi, &s.l_label), incoming(&phi, &s.g_label)) else {
                continue;
            };
            let value = if unseen_unless_taken(&body, &blocks, name, &from_g, s) {
                from_l
            } else {
                let ty = rest.split_once('[').map(|(t, _)| t.trim()).unwrap_or_default();
                let sel = format!("%__oxide_spec{id}_phi{k}");
                lines.push(format!("  {sel} = select i1 {taken}, {ty} {from_l}, {ty} {from_g}"));
                sel
            };
            let text = replace_incoming(&body[i].text, &s.l_label, &value);
            body[i].text = replace_incoming(&text, &s.g_label, &value);
        }
        inserts.push((s.guard_term, lines));
        for &i in &s.moved {
            body[i].text = REMOVED.to_string();
        }
    }
    apply(&mut body, inserts);
    (body, sites.len())
}

fn find_site(
    body: &[Line],
    blocks: &[Block],
    l: &Block,
    inputs: &[String],
    sizes: &HashMap<String, u64>,
) -> Option<Site> {
    let [g_label] = &l.preds[..] else { return None };
    let (&br_i, insts) = l.insts.split_last()?;
    let m_label = body[br_i].text.trim().strip_prefix("br label ")?.to_string();
    if insts.is_empty() || insts.len() > MAX_INSTRUCTIONS || &m_label == g_label {
        return None;
    }
    let mut loads = 0;
    for &i in insts {
        let text = body[i].text.trim();
        if let Some((_, ty, ptr, _)) = load_parts(text) {
            // Element 0 of the input must hold the whole read when the branch is not taken.
            let root = input_root(body, &ptr, inputs)?;
            if !fits(&ty)? || !within_element(sizes, &root, &ty) {
                return None;
            }
            loads += 1;
        } else if !is_pure(text) {
            return None;
        }
    }
    if loads == 0 {
        return None; // opt speculates blocks without loads itself when they are worth it
    }
    let m = blocks.iter().find(|b| b.label == m_label)?;
    if overlap(body, m, &l.label) < MIN_OVERLAP {
        return None;
    }
    let g = blocks.iter().find(|b| &b.label == g_label)?;
    let guard_term = *g.insts.last()?;
    let parts = split_top(body[guard_term].text.trim().strip_prefix("br i1 ")?);
    let [cond, t, f] = &parts[..] else { return None };
    let (t, f) = (t.trim().strip_prefix("label ")?, f.trim().strip_prefix("label ")?);
    let on_true = match (t == l.label, f == l.label) {
        (true, false) if f == m_label => true,
        (false, true) if t == m_label => false,
        _ => return None,
    };
    Some(Site {
        guard_term,
        cond: cond.trim().to_string(),
        on_true,
        moved: insts.to_vec(),
        l_label: l.label.clone(),
        g_label: g_label.clone(),
        m_label,
    })
}

/// `ptr` is `select i1 %guard, ptr %inner, ptr %root`: the guard and the address it keeps.
fn clamped_address(body: &[Line], ptr: &str, root: &str) -> Option<(String, String)> {
    let head = format!("{ptr} = select i1 ");
    let def = body.iter().find_map(|l| l.text.trim().strip_prefix(head.as_str()))?;
    let parts = split_top(def);
    let [guard, inner, other] = &parts[..] else { return None };
    (other.trim() == format!("ptr {root}"))
        .then(|| Some((guard.trim().to_string(), inner.trim().strip_prefix("ptr ")?.to_string())))?
}

/// Whether the value of phi `name` only matters where the branch was taken: every use is in a
/// block reached only through the taken side of a branch on the same condition, or is a loop
/// header's phi of `undef` and `name` whose one use is `from_g` (the value G brings, which then
/// goes unused).
fn unseen_unless_taken(body: &[Line], blocks: &[Block], name: &str, from_g: &str, s: &Site) -> bool {
    let block_of = |i: usize| blocks.iter().find(|b| b.insts.contains(&i));
    let mut uses = body.iter().enumerate().filter(|(_, l)| uses_value(&l.text, name)).peekable();
    if uses.peek().is_none() {
        return false;
    }
    uses.all(|(i, line)| {
        let text = line.text.trim();
        if text.starts_with(&format!("{name} = ")) {
            return true; // the phi itself
        }
        if text.starts_with(&format!("{from_g} = phi ")) {
            return header_cycle(body, text, name, from_g);
        }
        !text.contains(" = phi ") && block_of(i).is_some_and(|b| reached_only_taken(body, blocks, b, s))
    })
}

/// `%h = phi T [undef, ..], [name, ..]` whose only other use is as `name`'s incoming value.
fn header_cycle(body: &[Line], phi: &str, name: &str, h: &str) -> bool {
    let Some((_, rest)) = phi.split_once(" = phi ") else { return false };
    let all_ok = rest.split('[').skip(1).all(|g| {
        let v = g.split(',').next().unwrap_or("").trim();
        v == name || v == "undef" || v == "poison"
    });
    let h_uses =
        body.iter().filter(|l| uses_value(&l.text, h) && !l.text.trim().starts_with(&format!("{h} = "))).count();
    all_ok && h_uses == 1
}

/// Whether block `b` is only reached through the taken side of a branch on `s.cond` (walking up
/// single predecessors).
fn reached_only_taken(body: &[Line], blocks: &[Block], b: &Block, s: &Site) -> bool {
    let mut cur = b;
    for _ in 0..64 {
        let [pred] = &cur.preds[..] else { return false };
        let Some(p) = blocks.iter().find(|x| &x.label == pred) else { return false };
        let Some(&term) = p.insts.last() else { return false };
        if let Some(br) = body[term].text.trim().strip_prefix("br i1 ") {
            let parts = split_top(br);
            if let [c, t, f] = &parts[..] {
                let target = if s.on_true { t } else { f };
                // Not G's own branch: L (below it) runs before M sets the phi, and would see the
                // phi's value from an earlier pass, whose branch may have gone the other way.
                if c.trim() == s.cond
                    && p.label != s.g_label
                    && target.trim().strip_prefix("label ") == Some(cur.label.as_str())
                {
                    return true;
                }
            }
        }
        cur = p;
    }
    false
}

/// How many of `m`'s instructions run before the first that uses a phi taking a value from
/// block `from` (all of them when none does).
fn overlap(body: &[Line], m: &Block, from: &str) -> usize {
    let is_phi = |i: &usize| body[*i].text.contains(" = phi ");
    let fed: Vec<&str> = m
        .insts
        .iter()
        .filter(|i| is_phi(i) && incoming(&body[**i].text, from).is_some())
        .filter_map(|&i| body[i].text.trim().split_once(" = ").map(|(v, _)| v))
        .collect();
    let rest: Vec<usize> = m.insts.iter().copied().filter(|i| !is_phi(i)).collect();
    rest.iter().position(|&i| fed.iter().any(|v| uses_value(&body[i].text, v))).unwrap_or(rest.len())
}

/// `%v = load T, ptr %p, align A, ...` → (`%v`, `T`, `%p`, `, align A` plus alias metadata).
/// `None` for anything else, volatile and atomic loads included.
pub(super) fn load_parts(text: &str) -> Option<(String, String, String, String)> {
    let (value, rest) = text.split_once(" = load ")?;
    let parts = split_top(rest);
    let ty = parts.first()?.trim();
    if ty.starts_with("volatile") || ty.starts_with("atomic") {
        return None;
    }
    let ptr = parts.get(1)?.trim().strip_prefix("ptr ")?;
    let mut tail = String::new();
    for p in &parts[2..] {
        let p = p.trim();
        // Keep the alignment and alias metadata only: `!noundef`, `!range` and the like
        // promise things about the element read when the branch is taken, not element 0.
        if p.starts_with("align ") || p.starts_with("!alias.scope ") || p.starts_with("!noalias ") {
            tail.push_str(", ");
            tail.push_str(p);
        }
    }
    Some((value.to_string(), ty.to_string(), ptr.to_string(), tail))
}

fn is_pure(text: &str) -> bool {
    text.split_once(" = ").is_some_and(|(_, rest)| PURE_OPS.contains(&rest.split_whitespace().next().unwrap_or("")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PREFETCH_TEMPLATE: &str = r#"define ptx_kernel void @k(ptr noalias noundef readonly captures(none) %__oxide_in_a, i64 %__oxide_in_a_len, i64 %kt, i64 %tiles, i64 %off, ptr %__oxide_out_y) #0 {
start:
  br label %head

head:                                             ; preds = %start, %tail
  %old = phi float [ 0.000000e+00, %start ], [ %r, %tail ]
  tail call void asm sideeffect "barrier.sync 0;", "~{memory}"()
  %more = icmp ult i64 %kt, %tiles
  br i1 %more, label %fetch, label %tail

fetch:                                            ; preds = %head
  %row = shl nuw i64 %off, 3
  %q = getelementptr inbounds nuw float, ptr %__oxide_in_a, i64 %row
  %0 = load float, ptr %q, align 4, !noalias !2, !noundef !3
  %q1 = getelementptr inbounds nuw i8, ptr %q, i64 4
  %1 = load float, ptr %q1, align 4, !noalias !2
  %sum = fadd float %0, %1
  br label %tail

tail:                                             ; preds = %fetch, %head
  %r = phi float [ %sum, %fetch ], [ %old, %head ]
WORK
  %2 = fmul float %r, 2.000000e+00
  store float %2, ptr %__oxide_out_y, align 4
  br i1 %more, label %head, label %done

done:                                             ; preds = %tail
  ret void
}"#;

    /// [`PREFETCH_TEMPLATE`] with `n` independent instructions before `%r`'s first use.
    fn prefetch_with(n: usize) -> String {
        let work: Vec<String> = (0..n).map(|k| format!("  %w{k} = add i64 %off, {k}")).collect();
        PREFETCH_TEMPLATE.replace("WORK", &work.join("\n"))
    }

    #[test]
    fn a_conditional_block_of_input_reads_runs_unconditionally() {
        let (out, n) = speculate(&prefetch_with(MIN_OVERLAP), &[]);
        assert_eq!(n, 1, "{out}");
        let expect = [
            "  %more = icmp ult i64 %kt, %tiles",
            "  %row = shl nuw i64 %off, 3",
            "  %q = getelementptr inbounds nuw float, ptr %__oxide_in_a, i64 %row",
            "  %__oxide_spec0_address2 = select i1 %more, ptr %q, ptr %__oxide_in_a",
            "  %0 = load float, ptr %__oxide_spec0_address2, align 4, !noalias !2, !oxide.speculated !{}",
            "  %q1 = getelementptr inbounds nuw i8, ptr %q, i64 4",
            "  %__oxide_spec0_address4 = select i1 %more, ptr %q1, ptr %__oxide_in_a",
            "  %1 = load float, ptr %__oxide_spec0_address4, align 4, !noalias !2, !oxide.speculated !{}",
            "  %sum = fadd float %0, %1",
            "  %__oxide_spec0_phi0 = select i1 %more, float %sum, float %old",
            "  br i1 %more, label %fetch, label %tail",
            "",
            "fetch:                                            ; preds = %head",
            "  br label %tail",
            "",
            "tail:                                             ; preds = %fetch, %head",
            "  %r = phi float [ %__oxide_spec0_phi0, %fetch ], [ %__oxide_spec0_phi0, %head ]",
        ]
        .join("\n");
        assert!(out.contains(&expect), "{out}");
    }

    /// The prefetch as sgemm has it: the value is stored only when the branch is taken again
    /// (`if let Some(next)`), and the loop carries it through an `undef` header phi.
    fn prefetch_stored_later() -> String {
        prefetch_with(MIN_OVERLAP)
            .replace(
                "  %old = phi float [ 0.000000e+00, %start ], [ %r, %tail ]",
                "  %old = phi float [ undef, %start ], [ %r, %tail ]",
            )
            .replace(
                "  %2 = fmul float %r, 2.000000e+00\n  store float %2, ptr %__oxide_out_y, align 4\n  br i1 %more, label %head, label %done",
                "  br i1 %more, label %keep, label %done\n\nkeep:                                             ; preds = %tail\n  %2 = fmul float %r, 2.000000e+00\n  store float %2, ptr %__oxide_out_y, align 4\n  br label %head",
            )
            .replace("head:                                             ; preds = %start, %tail", "head:                                             ; preds = %start, %keep")
            .replace("[ %r, %tail ]", "[ %r, %keep ]")
    }

    #[test]
    fn a_value_seen_only_where_the_branch_is_taken_needs_no_select() {
        let ir = prefetch_stored_later();
        let (out, n) = speculate(&ir, &[]);
        assert_eq!(n, 1, "{out}");
        assert!(!out.contains("%__oxide_spec0_phi0"), "{out}");
        assert!(out.contains("  %r = phi float [ %sum, %fetch ], [ %sum, %head ]"), "{out}");
        // Seen in M itself (on both paths): the select stays.
        let seen = ir
            .replace("  br i1 %more, label %keep", "  %seen = fadd float %r, 1.000000e+00\n  br i1 %more, label %keep");
        let (out, _) = speculate(&seen, &[]);
        assert!(out.contains("%__oxide_spec0_phi0 = select i1 %more, float %sum, float %old"), "{out}");
    }

    #[test]
    fn an_address_a_guard_chose_is_chosen_once_on_both_conditions() {
        let ir = prefetch_with(MIN_OVERLAP).replace(
            "  %0 = load float, ptr %q,",
            "  %ok = icmp ult i64 %row, %__oxide_in_a_len\n  %g = select i1 %ok, ptr %q, ptr %__oxide_in_a\n  %0 = load float, ptr %g,",
        );
        let (out, n) = speculate(&ir, &[]);
        assert_eq!(n, 1, "{out}");
        assert!(out.contains("  %__oxide_spec0_address4.if = and i1 %more, %ok"), "{out}");
        assert!(
            out.contains("  %__oxide_spec0_address4 = select i1 %__oxide_spec0_address4.if, ptr %q, ptr %__oxide_in_a"),
            "{out}"
        );
    }

    #[test]
    fn values_needed_at_once_stay_under_the_branch() {
        assert_eq!(speculate(&prefetch_with(MIN_OVERLAP - 1), &[]).1, 0);
        assert_eq!(speculate(&prefetch_with(0), &[]).1, 0);
    }

    #[test]
    fn the_inverted_branch_picks_the_other_side() {
        let ir = prefetch_with(MIN_OVERLAP)
            .replace("%more = icmp ult i64 %kt, %tiles", "%more = icmp uge i64 %kt, %tiles")
            .replace("br i1 %more, label %fetch, label %tail", "br i1 %more, label %tail, label %fetch");
        let (out, n) = speculate(&ir, &[]);
        assert_eq!(n, 1, "{out}");
        assert!(out.contains("%__oxide_spec0_taken = xor i1 %more, true"), "{out}");
        assert!(
            out.contains("%__oxide_spec0_address2 = select i1 %__oxide_spec0_taken, ptr %q, ptr %__oxide_in_a"),
            "{out}"
        );
        assert!(out.contains("%__oxide_spec0_phi0 = select i1 %__oxide_spec0_taken, float %sum, float %old"), "{out}");
    }

    #[test]
    fn numbered_values_are_numbered_again_in_order() {
        let ir = prefetch_with(MIN_OVERLAP).replace("  %row = shl", "  %3 = add i64 %off, 1\n  %row = shl");
        let ir = ir.replace("%2 = fmul", "%4 = fmul").replace("store float %2", "store float %4");
        let ir = ir.replace("  %more = icmp", "  %0 = add i64 %kt, 0\n  %more = icmp");
        // `%0` in head, then fetch's `%3`, `%0`→`%1`, `%1`→`%2` move up: LLVM's order must hold.
        let ir = ir.replace("%0 = load", "%1 = load").replace("%1 = load float, ptr %q1", "%2 = load float, ptr %q1");
        let ir = ir.replace("%sum = fadd float %0, %1", "%sum = fadd float %1, %2");
        let ir = ir.replace("%4 = fmul", "%5 = fmul").replace("store float %4", "store float %5");
        let (out, n) = speculate(&ir, &[]);
        assert_eq!(n, 1, "{out}");
        let numbered: Vec<&str> = out
            .lines()
            .filter_map(|l| l.trim().strip_prefix('%').and_then(|r| r.split_once(" = ")).map(|(n, _)| n))
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            .collect();
        assert_eq!(numbered, ["0", "1", "2", "3", "4"], "{out}");
        assert!(out.contains("%sum = fadd float %2, %3"), "{out}");
        assert!(out.contains("store float %4"), "{out}");
    }

    #[test]
    fn blocks_that_write_call_divide_or_read_outputs_stay() {
        let prefetch = prefetch_with(MIN_OVERLAP);
        let store = prefetch.replace("  %sum = fadd", "  store float %0, ptr %__oxide_out_y, align 4\n  %sum = fadd");
        assert_eq!(speculate(&store, &[]).1, 0);
        let div = prefetch.replace("%row = shl nuw i64 %off, 3", "%row = udiv i64 %off, %tiles");
        assert_eq!(speculate(&div, &[]).1, 0);
        let call = prefetch.replace("  %sum = fadd float %0, %1", "  %sum = call float @f(float %0, float %1)");
        assert_eq!(speculate(&call, &[]).1, 0);
        let output = prefetch.replace("ptr %__oxide_in_a, i64 %row", "ptr %__oxide_out_y, i64 %row");
        assert_eq!(speculate(&output, &[]).1, 0);
        let writable = prefetch.replace("noundef readonly captures", "noundef captures");
        assert_eq!(speculate(&writable, &[]).1, 0);
        let volatile = prefetch.replace("%1 = load float", "%1 = load volatile float");
        assert_eq!(speculate(&volatile, &[]).1, 0);
        let wide = prefetch.replace("%1 = load float", "%1 = load <8 x float>");
        assert_eq!(speculate(&wide, &[]).1, 0);
    }

    #[test]
    fn blocks_before_any_barrier_stay() {
        let ir = prefetch_with(MIN_OVERLAP)
            .replace("  tail call void asm sideeffect \"barrier.sync 0;\", \"~{memory}\"()\n", "");
        assert_eq!(speculate(&ir, &[]).1, 0);
    }

    #[test]
    fn a_load_through_a_pointer_read_from_memory_stays() {
        let ir = prefetch_with(MIN_OVERLAP).replace(
            "  %q = getelementptr inbounds nuw float, ptr %__oxide_in_a, i64 %row",
            "  %p = load ptr, ptr %__oxide_in_a, align 8\n  %q = getelementptr inbounds nuw float, ptr %p, i64 %row",
        );
        assert_eq!(speculate(&ir, &[]).1, 0);
    }
}
