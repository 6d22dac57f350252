//! Single-block loops whose branch goes back on `true` (after `opt`, before `llc`).
//!
//! LLVM's runtime unroller ends an unrolled loop that has an epilogue (codegen.rs asks for
//! epilogues, for `guarded_epilogs.rs`) with
//! `br i1 %done, label %exit, label %loop`. The NVPTX backend cannot invert a branch's
//! predicate, so it keeps that shape: `@%p bra exit; bra.uni loop` — two branches per iteration,
//! a loop ptxas does not unroll further (the frozen suite's matvec_warp: 16 loads in flight
//! instead of 32, 1.035 of nvcc's time against 1.017 with the loop the other way round). The same
//! test negated, `br i1 (xor %done, true), label %loop, label %exit`, becomes `@%p bra loop`
//! falling through to the exit, the form llc gives every other loop (the `xor` folds into the
//! compare).

use super::guarded_loads::{apply, blocks, each_kernel};
use super::Line;

/// Rewrites every qualifying loop of every kernel; returns how many changed.
pub(super) fn rewrite(lines: &mut Vec<Line>) -> usize {
    each_kernel(lines, |mut body, _, first| {
        let mut n = 0;
        let mut inserts = Vec::new();
        for b in blocks(&body) {
            let Some(&term) = b.insts.last() else { continue };
            let Some(rest) = body[term].text.trim().strip_prefix("br i1 ") else { continue };
            let parts: Vec<&str> = rest.split(", ").collect();
            let [cond, exit, back] = parts[..] else { continue };
            let (Some(exit), Some(back)) = (exit.strip_prefix("label "), back.strip_prefix("label ")) else {
                continue;
            };
            // Only loops runtime-unrolled with an epilogue (their exit is LLVM's `*.unr-lcssa`
            // block): other loops already come out of llc branching back on true, and the
            // remainder flags in codegen.rs are what made these ones.
            if back.trim_end() != b.label || exit == b.label || !exit.ends_with(".unr-lcssa") {
                continue;
            }
            let go = format!("%__oxide_latch{}", first + n);
            inserts.push((term, vec![format!("  {go} = xor i1 {cond}, true")]));
            body[term].text = format!("  br i1 {go}, label {}, label {exit}", b.label);
            n += 1;
        }
        apply(&mut body, inserts);
        (body, n)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ir: &str) -> (String, usize) {
        let mut lines: Vec<Line> =
            ir.lines().enumerate().map(|(i, text)| Line { no: i + 1, text: text.to_string() }).collect();
        let n = rewrite(&mut lines);
        let text: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        (text.join("\n"), n)
    }

    #[test]
    fn a_loop_leaving_on_true_branches_back_on_true() {
        let ir = "define ptx_kernel void @k(i64 %n) #0 {\nstart:\n  br label %loop\n\n\
                  loop:                                             ; preds = %loop, %start\n  %i = phi i64 [ 0, %start ], [ %j, %loop ]\n\
                  \x20 %j = add i64 %i, 1\n  %done = icmp eq i64 %j, %n\n  br i1 %done, label %exit.unr-lcssa, label %loop\n\n\
                  exit.unr-lcssa:                                             ; preds = %loop\n  ret void\n}";
        let (out, n) = run(ir);
        assert_eq!(n, 1, "{out}");
        assert!(
            out.contains(
                "  %__oxide_latch0 = xor i1 %done, true\n  br i1 %__oxide_latch0, label %loop, label %exit.unr-lcssa"
            ),
            "{out}"
        );
        // Loops that already branch back on true, and branches that are not a block's own loop,
        // stay as they are.
        let (same, n) = run(&out);
        assert_eq!((same.as_str(), n), (out.as_str(), 0));
        let other = ir.replace("label %exit.unr-lcssa, label %loop", "label %exit.unr-lcssa, label %start");
        assert_eq!(run(&other).1, 0);
        let not_unrolled = ir.replace("exit.unr-lcssa", "exit");
        assert_eq!(run(&not_unrolled).1, 0);
        assert_eq!(run(&other).1, 0);
    }
}
