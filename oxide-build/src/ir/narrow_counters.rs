//! Loops that count to a constant below 2^31 count in 32 bits.
//!
//! `for k in 0..TILE` counts in `usize`: a 64-bit phi, its step and its exit compare stay
//! 64-bit through `opt` (LLVM widens induction variables, never narrows them), and ptxas makes
//! each of them two instructions (`IADD3` + `IADD3.X`, `ISETP` + `ISETP.EX`) and keeps a second
//! register live across the loop. nvcc counts such a loop in an `int`. nbody_tile's tile loop
//! (256 bodies, unrolled 4 times) spent 4 of its 5 loop instructions per step on its counter.
//!
//! So a loop counter `%c = phi i64 [C0, ..], [%next, %latch]` with `%next = add i64 %c, K`
//! (`C0 >= 0`, `K > 0` constants) whose back edge is taken only while `%next != N` (a constant
//! `N >= C0`, `N - C0` a multiple of `K`, `N < 2^31`) runs in `i32`: every value it takes lies
//! in `[C0, N]`, so the 32-bit count and its zero extension are the same numbers, and the 64-bit
//! values the loop body uses become zero extensions of the 32-bit ones (which llc folds into
//! the addresses). Runs on `opt`'s output, before llc.

use super::Line;

/// Narrows every such counter; returns how many.
pub(super) fn narrow(lines: &mut Vec<Line>) -> usize {
    let mut narrowed = 0;
    let mut start = 0;
    while let Some(off) = lines[start..].iter().position(|l| l.text.starts_with("define ")) {
        let define = start + off;
        let end = (define..lines.len()).find(|&j| lines[j].text.starts_with('}')).unwrap_or(lines.len());
        let mut i = define;
        let mut end = end;
        while i < end {
            if let Some(counter) = counter_at(lines, i, define, end) {
                end += rewrite(lines, &counter, narrowed);
                narrowed += 1;
            }
            i += 1;
        }
        start = end;
    }
    narrowed
}

/// A counter found at its phi: names, lines and constants.
struct Counter {
    phi: usize,
    add: usize,
    cmp: usize,
    c: String,
    next: String,
    step: i64,
    limit: i64,
}

/// The counter whose phi is line `i`, if it is one this pass narrows.
fn counter_at(lines: &[Line], i: usize, define: usize, end: usize) -> Option<Counter> {
    let (lhs, rhs) = lines[i].text.split_once(" = ")?;
    let c = lhs.trim().to_string();
    let incoming = rhs.trim().strip_prefix("phi i64 ")?;
    let edges: Vec<(&str, &str)> = incoming
        .split("], [")
        .map(|e| e.trim_matches(|ch| ch == '[' || ch == ']' || ch == ' '))
        .filter_map(|e| e.split_once(", "))
        .collect();
    let [(a, la), (b, lb)] = edges.as_slice() else { return None };
    // One constant start, one value from the back edge.
    let ((init, _), (next, latch)) = match (a.parse::<i64>(), b.parse::<i64>()) {
        (Ok(v), Err(_)) => ((v, *la), (*b, *lb)),
        (Err(_), Ok(v)) => ((v, *lb), (*a, *la)),
        _ => return None,
    };
    let (next, latch) = (next.to_string(), latch.trim_start_matches('%').to_string());
    let add = find_def(lines, define, end, &next)?;
    let step = step_of(&lines[add].text, &c)?;
    // The latch's terminator: `br i1 %cmp, label %x, label %y`, one of them the phi's block.
    let header = block_of(lines, define, i)?;
    let latch_start = (define..end).find(|&j| label_of(&lines[j].text) == Some(latch.as_str()))?;
    let term = (latch_start + 1..end).find(|&j| lines[j].text.trim_start().starts_with("br "))?;
    let (cond, on_true, on_false) = cond_br(&lines[term].text)?;
    let cmp = find_def(lines, define, end, &cond)?;
    let (pred, limit) = compare_of(&lines[cmp].text, &next)?;
    // Back edge only while `next != limit`.
    let back_while_ne = match pred {
        "eq" => on_false == header && on_true != header,
        "ne" => on_true == header && on_false != header,
        _ => false,
    };
    let fits = init >= 0 && step > 0 && limit >= init && (limit - init) % step == 0 && limit < 1 << 31;
    if !back_while_ne || !fits || uses(lines, define, end, &cond) != 1 {
        return None;
    }
    Some(Counter { phi: i, add, cmp, c, next, step, limit })
}

/// Rewrites the counter to `i32` (values `%oxide.c<id>`, `%oxide.c<id>.next`); returns how
/// many lines were added.
fn rewrite(lines: &mut Vec<Line>, k: &Counter, id: usize) -> usize {
    let (c32, next32) = (format!("%oxide.c{id}"), format!("%oxide.c{id}.next"));
    let phi_text = lines[k.phi].text.clone();
    let incoming = phi_text.split_once("phi i64 ").map_or("", |(_, r)| r);
    let incoming = incoming.replacen(&format!("[ {}, ", k.next), &format!("[ {next32}, "), 1);
    let indent = "  ";
    lines[k.phi].text = format!("{indent}{c32} = phi i32 {incoming}");
    lines[k.add].text = format!("{indent}{next32} = add nuw nsw i32 {c32}, {}", k.step);
    let (lhs, _) = lines[k.cmp].text.split_once(" = ").map_or((String::new(), ()), |(l, _)| (l.to_string(), ()));
    let pred = if lines[k.cmp].text.contains("icmp eq ") { "eq" } else { "ne" };
    lines[k.cmp].text = format!("{lhs} = icmp {pred} i32 {next32}, {}", k.limit);
    // The 64-bit values, for the body's other uses: `next` right after its add, `c` after the
    // header's phis.
    let no = lines[k.add].no;
    lines.insert(k.add + 1, Line { no, text: format!("{indent}{} = zext nneg i32 {next32} to i64", k.next) });
    let after_phis = (k.phi + 1..lines.len()).find(|&j| !is_phi(&lines[j].text)).unwrap_or(lines.len());
    let no = lines[k.phi].no;
    lines.insert(after_phis, Line { no, text: format!("{indent}{} = zext nneg i32 {c32} to i64", k.c) });
    2
}

/// `%name`'s defining line within `define..end`.
fn find_def(lines: &[Line], define: usize, end: usize, name: &str) -> Option<usize> {
    (define..end).find(|&j| lines[j].text.split_once(" = ").is_some_and(|(l, _)| l.trim() == name))
}

/// `K` of `add [nuw] [nsw] i64 %c, K`.
fn step_of(text: &str, c: &str) -> Option<i64> {
    let rhs = text.split_once(" = ")?.1.trim();
    let rest = rhs.strip_prefix("add ")?;
    let rest = rest.trim_start_matches("nuw ").trim_start_matches("nsw ").trim_start_matches("nuw ");
    let (a, b) = rest.strip_prefix("i64 ")?.split_once(", ")?;
    (a == c).then(|| b.trim().parse().ok())?
}

/// `(pred, N)` of `icmp eq|ne i64 %next, N`.
fn compare_of<'a>(text: &'a str, next: &str) -> Option<(&'a str, i64)> {
    let rhs = text.split_once(" = ")?.1.trim();
    let rest = rhs.strip_prefix("icmp ")?;
    let (pred, rest) = rest.split_once(' ')?;
    let (a, b) = rest.strip_prefix("i64 ")?.split_once(", ")?;
    (a == next).then(|| b.trim().parse().ok().map(|n| (pred, n)))?
}

/// `(cond, true label, false label)` of `br i1 %cond, label %t, label %f`.
fn cond_br(text: &str) -> Option<(String, String, String)> {
    let rest = text.trim().strip_prefix("br i1 ")?;
    let parts: Vec<&str> = rest.split(", ").collect();
    let [cond, t, f, ..] = parts.as_slice() else { return None };
    let label = |s: &str| s.trim().strip_prefix("label %").map(|l| l.split([' ', ',']).next().unwrap_or(l).to_string());
    Some((cond.to_string(), label(t)?, label(f)?))
}

/// The label of the block holding line `i` (the entry block's when it has none written).
fn block_of(lines: &[Line], define: usize, i: usize) -> Option<String> {
    (define + 1..=i).rev().find_map(|j| label_of(&lines[j].text).map(str::to_string))
}

/// `name` of a line `name:` (a block label).
fn label_of(text: &str) -> Option<&str> {
    if text.starts_with(char::is_whitespace) {
        return None;
    }
    let (label, _) = text.split_once(':')?;
    (!label.is_empty() && !label.contains(' ') && !label.starts_with([';', '!', '@', '#'])).then_some(label)
}

/// How many times `%name` is used within `define..end`.
fn uses(lines: &[Line], define: usize, end: usize, name: &str) -> usize {
    lines[define..end]
        .iter()
        .map(|l| {
            let rhs = l.text.split_once(" = ").map_or(l.text.as_str(), |(_, r)| r);
            rhs.match_indices(name)
                .filter(|(at, _)| {
                    let after = rhs[at + name.len()..].chars().next();
                    !after.is_some_and(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '.')
                })
                .count()
        })
        .sum()
}

fn is_phi(text: &str) -> bool {
    text.split_once(" = ").is_some_and(|(_, r)| r.trim_start().starts_with("phi "))
}

#[cfg(test)]
mod tests {
    use crate::ir::tests::{assert_valid_ir, transformed};

    /// A tile loop: `k` from 0 to 256 by 4 (unrolled), reading shared memory at `k` and `k + 4`
    /// (numbered values, as `opt` leaves many).
    const KERNEL: &str = "\
@tile = internal addrspace(3) global [256 x float] poison, align 16

define ptx_kernel void @k(ptr %out) {
start:
  br label %loop

loop:                                             ; preds = %loop, %start
  %k = phi i64 [ 0, %start ], [ %next, %loop ]
  %s = phi float [ 0.0, %start ], [ %s2, %loop ]
  %p = getelementptr inbounds float, ptr addrspace(3) @tile, i64 %k
  %v = load float, ptr addrspace(3) %p, align 16
  %s2 = fadd float %s, %v
  %next = add nuw nsw i64 %k, 4
  %0 = getelementptr inbounds float, ptr addrspace(3) @tile, i64 %next
  %1 = load float, ptr addrspace(3) %0, align 16
  %done = icmp eq i64 %next, 256
  br i1 %done, label %exit, label %loop

exit:                                             ; preds = %loop
  %2 = fadd float %s2, %1
  store float %2, ptr %out, align 4
  ret void
}
";

    #[test]
    fn a_counter_to_a_constant_counts_in_32_bits() {
        let (out, n) = transformed(KERNEL, super::narrow);
        assert_valid_ir("narrow_counters", &out);
        assert_eq!(n, 1, "{out}");
        for want in [
            "  %oxide.c0 = phi i32 [ 0, %start ], [ %oxide.c0.next, %loop ]\n  %s = phi float",
            "  %s = phi float [ 0.0, %start ], [ %s2, %loop ]\n  %k = zext nneg i32 %oxide.c0 to i64\n",
            "  %oxide.c0.next = add nuw nsw i32 %oxide.c0, 4\n  %next = zext nneg i32 %oxide.c0.next to i64\n",
            "  %done = icmp eq i32 %oxide.c0.next, 256\n",
        ] {
            assert!(out.contains(want), "{want}\n{out}");
        }
    }

    #[test]
    fn counters_that_may_pass_2_31_or_miss_their_limit_stay_64_bit() {
        for (from, to) in [
            ("icmp eq i64 %next, 256", "icmp eq i64 %next, 4294967296"),
            ("icmp eq i64 %next, 256", "icmp eq i64 %next, 258"),
            ("icmp eq i64 %next, 256", "icmp ult i64 %next, 256"),
            ("label %exit, label %loop", "label %loop, label %exit"),
            ("[ 0, %start ]", "[ -4, %start ]"),
        ] {
            let changed = KERNEL.replace(from, to);
            let (out, n) = transformed(&changed, super::narrow);
            assert_eq!(n, 0, "{to}: {out}");
        }
    }
}
