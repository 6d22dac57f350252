//! A barrier that rustc's pipeline copied into both arms of a branch made one barrier again
//! (before `opt`).
//!
//! rustc's LLVM sees `sync_threads()` as an ordinary inline-asm call (oxide marks it
//! `convergent` only afterwards), so its jump threading copies it. The scan example's
//!
//! ```text
//! if warp == 0 { /* scan the warp totals */ }
//! sync_threads();
//! if warp > 0 { v += partial[warp - 1]; }
//! ```
//!
//! reaches oxide as two blocks that both start with the barrier and both branch to the join:
//! warp 0's `X1: barrier; br J` and the others' `X2: barrier; v += ..; br J`. Each thread still
//! passes one barrier, but ptxas compiles two barrier sites, and the example ran 1.05x nvcc's
//! time against 1.025x with one (H200, the probe with LLVM's convergent barrier intrinsic).
//! So such a pair goes back to one barrier in a block of its own that every way into either
//! arm now enters, and which then picks the arm it came for:
//!
//! ```text
//! N:  %from1 = phi i1 [ true, <X1's predecessors> ], [ false, <X2's predecessors> ]
//!     barrier
//!     br i1 %from1, label %X1, label %X2        ; X1, X2 without their barriers
//! ```
//!
//! Every path runs the same instructions in the same order as before, the barrier included, so
//! the rewrite holds for any such pair; it is limited to pairs whose arms meet at one block
//! (`br label %J` ending both), the shape the copy leaves, so no new cycle is formed.

use super::guarded_loads::{blocks, is_barrier, REMOVED};
use super::Line;

/// Merges every such pair in every function; returns how many.
pub(super) fn merge(lines: &mut Vec<Line>) -> usize {
    let mut count = 0;
    super::each_function(lines, |body| {
        let before = count;
        while let Some(n) = merge_one(body, count) {
            count = n;
        }
        count - before
    })
}

/// Merges the first pair found in `body` (`merged` so far names the new block); returns the
/// new count, or `None` when there is no pair left.
fn merge_one(body: &mut Vec<Line>, merged: usize) -> Option<usize> {
    let blocks = blocks(body);
    // Arms: a labelled block without phis that starts with a barrier and ends in `br label %J`.
    let arms: Vec<(usize, String, String)> = blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| !b.label.is_empty() && !b.preds.is_empty())
        .filter_map(|(k, b)| {
            let first = body[*b.insts.first()?].text.trim().to_string();
            let last = body[*b.insts.last()?].text.trim();
            let join = last.strip_prefix("br label ")?.to_string();
            (is_barrier(&first) && b.insts.len() >= 2).then_some((k, first, join))
        })
        .collect();
    // Each predecessor must end in a one-line `br` (a `switch` spans lines) that this pass can
    // point at the new block.
    let branches_in = |b: &super::guarded_loads::Block| {
        b.preds.iter().all(|p| {
            let pb = blocks.iter().find(|x| &x.label == p);
            pb.and_then(|pb| pb.insts.last()).is_some_and(|&t| body[t].text.trim_start().starts_with("br "))
        })
    };
    let pair = arms.iter().enumerate().find_map(|(x, (k1, barrier, join))| {
        arms[x + 1..].iter().find_map(|(k2, other, join2)| {
            let (b1, b2) = (&blocks[*k1], &blocks[*k2]);
            let disjoint = b1.preds.iter().all(|p| !b2.preds.contains(p));
            let ok = other == barrier && join2 == join && disjoint && branches_in(b1) && branches_in(b2);
            ok.then_some((*k1, *k2))
        })
    })?;
    let (b1, b2) = (&blocks[pair.0], &blocks[pair.1]);
    let name = format!("%__oxide_mb{merged}");
    let label = &name[1..];
    // Every predecessor's branch goes to the new block instead.
    for (arm, preds) in [(&b1.label, &b1.preds), (&b2.label, &b2.preds)] {
        for p in preds {
            let pb = blocks.iter().find(|b| &b.label == p)?;
            let term = *pb.insts.last()?;
            body[term].text = retarget(&body[term].text, arm, &name);
        }
    }
    let incoming: Vec<String> = b1
        .preds
        .iter()
        .map(|p| format!("[ true, {p} ]"))
        .chain(b2.preds.iter().map(|p| format!("[ false, {p} ]")))
        .collect();
    let preds: Vec<&str> = b1.preds.iter().chain(&b2.preds).map(String::as_str).collect();
    let barrier = body[b1.insts[0]].text.clone();
    let new = [
        format!("{label}:{}; preds = {}", " ".repeat(50usize.saturating_sub(label.len() + 1)), preds.join(", ")),
        format!("  {name}_from = phi i1 {}", incoming.join(", ")),
        barrier,
        format!("  br i1 {name}_from, label {}, label {}", b1.label, b2.label),
        String::new(),
    ];
    // Each arm loses its barrier and is entered from the new block alone.
    for b in [b1, b2] {
        body[b.insts[0]].text = REMOVED.to_string();
        if let Some(at) = label_line(body, &b.label) {
            let head = body[at].text.split(';').next().unwrap_or("").trim_end().to_string();
            body[at].text = format!("{head}{}; preds = {name}", " ".repeat(50usize.saturating_sub(head.len())));
        }
    }
    let at = label_line(body, &b1.label)?;
    let no = body[at].no;
    body.splice(at..at, new.into_iter().map(|text| Line { no, text }));
    body.retain(|l| l.text != REMOVED);
    Some(merged + 1)
}

/// The index of the line that opens block `label` (`%name`).
fn label_line(body: &[Line], label: &str) -> Option<usize> {
    let head = format!("{}:", label.strip_prefix('%')?);
    body.iter().position(|l| l.text.starts_with(&head))
}

/// A terminator with its branch targets `label %from` renamed `label %to`.
fn retarget(term: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(term.len() + 8);
    let mut rest = term;
    let needle = format!("label {from}");
    let renamed = format!("label {to}");
    while let Some(at) = rest.find(&needle) {
        let end = at + needle.len();
        let whole = !rest[end..].bytes().next().is_some_and(super::is_ident_byte);
        out.push_str(&rest[..at]);
        out.push_str(if whole { &renamed } else { &needle });
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::tests::{assert_valid_ir, transformed};

    /// scan_blocks' shape after rustc: warp 0 scans, then each arm has its own barrier.
    const SCAN: &str = "define void @k(i32 %warp, ptr %p) #0 {
start:
  %w0 = icmp eq i32 %warp, 0
  br i1 %w0, label %scan, label %others

scan:                                             ; preds = %start
  store i32 1, ptr %p, align 4
  br label %x1

x1:                                               ; preds = %scan
  tail call void asm sideeffect \"barrier.sync 0;\", \"~{memory}\"() #1
  br label %join

others:                                           ; preds = %start
  tail call void asm sideeffect \"barrier.sync 0;\", \"~{memory}\"() #1
  %v = load i32, ptr %p, align 4
  br label %join

join:                                             ; preds = %others, %x1
  %r = phi i32 [ 0, %x1 ], [ %v, %others ]
  store i32 %r, ptr %p, align 4
  ret void
}

attributes #1 = { convergent }
";

    #[test]
    fn a_barrier_copied_into_both_arms_is_one_barrier_again() {
        let (out, n) = transformed(SCAN, merge);
        assert_eq!(n, 1, "{out}");
        assert_eq!(out.matches("barrier.sync 0;").count(), 1, "{out}");
        assert!(out.contains("  %__oxide_mb0_from = phi i1 [ true, %scan ], [ false, %start ]\n"), "{out}");
        assert!(out.contains("  br i1 %__oxide_mb0_from, label %x1, label %others\n"), "{out}");
        assert!(out.contains("  br i1 %w0, label %scan, label %__oxide_mb0\n"), "{out}");
        assert!(out.contains("  br label %__oxide_mb0\n\n__oxide_mb0:"), "{out}");
        assert_valid_ir("merged_barriers", &out);
    }

    #[test]
    fn arms_that_meet_elsewhere_or_differ_keep_their_barriers() {
        let apart = SCAN.replace(
            "  %v = load i32, ptr %p, align 4\n  br label %join",
            "  %v = load i32, ptr %p, align 4\n  br label %late\n\nlate:                                             ; preds = %others\n  br label %join",
        );
        let other_barrier = SCAN.replacen("barrier.sync 0;", "barrier.sync 1;", 1);
        let switch = SCAN.replace(
            "  br i1 %w0, label %scan, label %others",
            "  switch i32 %warp, label %others [\n    i32 0, label %scan\n  ]",
        );
        for (what, ir) in [("apart", apart), ("other barrier", other_barrier), ("switch", switch)] {
            let (out, n) = transformed(&ir, merge);
            assert_eq!((n, out.as_str()), (0, ir.as_str()), "{what}");
        }
    }
}
