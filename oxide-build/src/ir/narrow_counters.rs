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

use super::guarded_epilogs::cond_branch;
use super::guarded_loads::blocks;
use super::{definitions, is_phi, uses_value, Line};

/// Narrows every such counter; returns how many.
pub(super) fn narrow(lines: &mut Vec<Line>) -> usize {
    let mut narrowed = 0;
    let mut at = 0;
    while let Some(off) = lines[at..].iter().position(|l| l.text.starts_with("define ")) {
        let first = at + off + 1;
        let mut end = (first..lines.len()).find(|&j| lines[j].text.starts_with('}')).unwrap_or(lines.len());
        // One counter at a time: each rewrite shifts the lines after it.
        while let Some(counter) = find_counter(&lines[first..end]) {
            end += rewrite(lines, first, &counter, narrowed);
            narrowed += 1;
        }
        at = end;
    }
    narrowed
}

/// A counter's lines (in its function's body) and constants.
struct Counter {
    phi: usize,
    add: usize,
    cmp: usize,
    c: String,
    next: String,
    step: i64,
    limit: i64,
}

/// The first 64-bit counter in `body` that this pass narrows.
fn find_counter(body: &[Line]) -> Option<Counter> {
    let blocks = blocks(body);
    let defs = definitions(body);
    let block_of = |i: usize| blocks.iter().find(|b| b.insts.contains(&i)).map(|b| b.label.as_str());
    body.iter().enumerate().find_map(|(i, line)| {
        let (lhs, rhs) = line.text.split_once(" = ")?;
        let edges: Vec<(&str, &str)> = rhs
            .trim()
            .strip_prefix("phi i64 ")?
            .split("], [")
            .map(|e| e.trim_matches(|ch| ch == '[' || ch == ']' || ch == ' '))
            .filter_map(|e| e.split_once(", "))
            .collect();
        // One constant start, one value from the back edge.
        let [(a, la), (b, lb)] = edges.as_slice() else { return None };
        let (init, (next, latch)) = match (a.parse::<i64>(), b.parse::<i64>()) {
            (Ok(v), Err(_)) => (v, (*b, *lb)),
            (Err(_), Ok(v)) => (v, (*a, *la)),
            _ => return None,
        };
        let c = lhs.trim();
        let add = *defs.get(next)?;
        let step = step_of(&body[add].text, c)?;
        // The latch ends in `br i1 %cmp, ..`, one target the phi's block.
        let term = *blocks.iter().find(|b| b.label == latch)?.insts.last()?;
        let (cond, on_true, on_false) = cond_branch(&body[term].text)?;
        let cmp = *defs.get(&cond)?;
        let (pred, limit) = compare_of(&body[cmp].text, next)?;
        let header = block_of(i)?;
        // The back edge is taken only while `next != limit`.
        let back_while_ne = match pred {
            "eq" => on_false == header && on_true != header,
            "ne" => on_true == header && on_false != header,
            _ => false,
        };
        let fits = init >= 0 && step > 0 && limit >= init && (limit - init) % step == 0 && limit < 1 << 31;
        let cond_uses = body.iter().filter(|l| uses_value(l.text.split_once(" = ").map_or(&l.text, |(_, r)| r), &cond));
        if !back_while_ne || !fits || cond_uses.count() != 1 {
            return None;
        }
        Some(Counter { phi: i, add, cmp, c: c.to_string(), next: next.to_string(), step, limit })
    })
}
/// Rewrites the counter (lines counted from `first`) to `i32`, as `%oxide.c<id>` and
/// `%oxide.c<id>.next`; returns how many lines were added.
fn rewrite(lines: &mut Vec<Line>, first: usize, k: &Counter, id: usize) -> usize {
    let (phi, add, cmp) = (first + k.phi, first + k.add, first + k.cmp);
    let (c32, next32) = (format!("%oxide.c{id}"), format!("%oxide.c{id}.next"));
    let incoming = lines[phi].text.split_once("phi i64 ").map_or("", |(_, r)| r);
    let incoming = incoming.replacen(&format!("[ {}, ", k.next), &format!("[ {next32}, "), 1);
    lines[phi].text = format!("  {c32} = phi i32 {incoming}");
    lines[add].text = format!("  {next32} = add nuw nsw i32 {c32}, {}", k.step);
    let (name, pred) = lines[cmp].text.split_once(" = icmp ").map_or(("", ""), |(l, r)| (l, &r[..2]));
    lines[cmp].text = format!("{name} = icmp {pred} i32 {next32}, {}", k.limit);
    // The 64-bit values for the body's other uses: `next` right after its add, `c` after the
    // header's phis.
    let no = lines[add].no;
    lines.insert(add + 1, Line { no, text: format!("  {} = zext nneg i32 {next32} to i64", k.next) });
    let after_phis = (phi + 1..lines.len()).find(|&j| !is_phi(&lines[j].text)).unwrap_or(lines.len());
    let no = lines[phi].no;
    lines.insert(after_phis, Line { no, text: format!("  {} = zext nneg i32 {c32} to i64", k.c) });
    2
}

/// `K` of `add [nuw] [nsw] i64 %c, K`.
fn step_of(text: &str, c: &str) -> Option<i64> {
    let rest = text.split_once(" = ")?.1.trim().strip_prefix("add ")?;
    let rest = rest.trim_start_matches("nuw ").trim_start_matches("nsw ");
    let (a, b) = rest.strip_prefix("i64 ")?.split_once(", ")?;
    (a == c).then(|| b.trim().parse().ok())?
}

/// `(pred, N)` of `icmp eq|ne i64 %next, N`.
fn compare_of<'a>(text: &'a str, next: &str) -> Option<(&'a str, i64)> {
    let rest = text.split_once(" = ")?.1.trim().strip_prefix("icmp ")?;
    let (pred, rest) = rest.split_once(' ')?;
    let (a, b) = rest.strip_prefix("i64 ")?.split_once(", ")?;
    (a == next).then(|| b.trim().parse().ok().map(|n| (pred, n)))?
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
