//! Loop exits on a remaining distance, rewritten as a bound on the moving address.
//!
//! core's `step_by` over a slice iterator (`row.iter().skip(t).step_by(B)`, the block-stride
//! loop of a row kernel) stops when the bytes left drop to `K` or below:
//! `icmp ugt (sub nuw end, p), K`. LLVM's scalar evolution finds no trip count for that
//! decreasing difference, so the loop is never unrolled and its loads run one at a time (H200,
//! frozen suite: xent_rows 2.0 and layernorm_rows 1.7 of nvcc's time). The same test written
//! `p < usub.sat(end, K)` has a counted exit (`end - K` is loop-invariant, `p` an induction
//! variable) and is exactly equal: `nuw` makes `p <= end`, so `end - p > K` is `p + K < end`,
//! is `p < end - K`, and both sides are false when `end <= K`.

use super::{uses_value, Line};

/// Rewrites each `%d = sub nuw i64 %end, %p` whose only use is `%c = icmp ugt i64 %d, K` (an
/// integer literal) into `%d = usub.sat(%end, K)` and `%c = icmp ult i64 %p, %d`. Returns
/// whether any was rewritten (the optimiser should then unroll at run time).
pub(super) fn counted_exits(lines: &mut Vec<Line>) -> bool {
    let mut rewrote = false;
    let mut start = 0;
    while let Some(offset) = lines[start..].iter().position(|l| l.text.starts_with("define ")) {
        let begin = start + offset;
        let end = lines[begin..].iter().position(|l| l.text == "}").map_or(lines.len(), |e| begin + e);
        rewrote |= rewrite_function(&mut lines[begin..end]);
        start = end;
    }
    if rewrote && !lines.iter().any(|l| l.text.starts_with("declare ") && l.text.contains("@llvm.usub.sat.i64(")) {
        let no = lines.last().map_or(0, |l| l.no);
        lines.push(Line { no, text: "declare i64 @llvm.usub.sat.i64(i64, i64)".to_string() });
    }
    rewrote
}

fn rewrite_function(body: &mut [Line]) -> bool {
    let mut rewrote = false;
    for i in 0..body.len() {
        let Some((indent, d, end, p)) = parse_sub(&body[i].text) else { continue };
        let (indent, d, end, p) = (indent.to_string(), d.to_string(), end.to_string(), p.to_string());
        // `%d` must have exactly one use, that compare.
        let uses: Vec<usize> = (0..body.len()).filter(|&j| j != i && uses_value(&body[j].text, &d)).collect();
        let [j] = uses[..] else { continue };
        let Some((c, k)) = parse_cmp(&body[j].text, &d) else { continue };
        let c = c.to_string();
        body[i].text = format!("{indent}{d} = call i64 @llvm.usub.sat.i64(i64 {end}, i64 {k})");
        body[j].text = format!("{indent}{c} = icmp ult i64 {p}, {d}");
        rewrote = true;
    }
    rewrote
}

/// `(indentation, %d, %end, %p)` of `%d = sub nuw [nsw] i64 %end, %p`.
fn parse_sub(text: &str) -> Option<(&str, &str, &str, &str)> {
    let body = text.trim_start();
    let indent = &text[..text.len() - body.len()];
    let (d, rhs) = body.split_once(" = ")?;
    let ops = rhs.strip_prefix("sub nuw nsw i64 ").or_else(|| rhs.strip_prefix("sub nuw i64 "))?;
    let (end, p) = ops.split_once(", ")?;
    let local = |v: &str| v.starts_with('%') && !v.contains([' ', ',', ')']);
    (d.starts_with('%') && local(end) && local(p)).then_some((indent, d, end, p))
}

/// `(%c, K)` of `%c = icmp ugt i64 %d, K` with `K` an integer literal.
fn parse_cmp<'a>(text: &'a str, d: &str) -> Option<(&'a str, &'a str)> {
    let (c, rhs) = text.trim_start().split_once(" = ")?;
    let k = rhs.strip_prefix("icmp ugt i64 ")?.strip_prefix(d)?.strip_prefix(", ")?;
    (!k.is_empty() && k.bytes().all(|b| b.is_ascii_digit())).then_some((c, k))
}

#[cfg(test)]
mod tests {
    use crate::ir::tests::run;

    const STEP_BY: &str = "define ptx_kernel void @k(ptr %row, i64 %n) {\n\
        start:\n  %end = getelementptr inbounds nuw float, ptr %row, i64 %n\n  %e = ptrtoint ptr %end to i64\n  br label %loop\n\
        loop:\n  %p = phi ptr [ %row, %start ], [ %next, %loop ]\n  %v = load float, ptr %p, align 4\n\
        \x20 %next = getelementptr inbounds nuw i8, ptr %p, i64 1024\n  %a = ptrtoint ptr %next to i64\n\
        \x20 %left = sub nuw i64 %e, %a\n  %more = icmp ugt i64 %left, 1020\n  br i1 %more, label %loop, label %done\n\
        done:\n  ret void\n}\n";

    #[test]
    fn a_remaining_distance_exit_becomes_a_bound_on_the_address() {
        let out = run(STEP_BY).ir;
        assert!(out.contains("  %left = call i64 @llvm.usub.sat.i64(i64 %e, i64 1020)\n"), "{out}");
        assert!(out.contains("  %more = icmp ult i64 %a, %left\n"), "{out}");
        assert!(out.contains("declare i64 @llvm.usub.sat.i64(i64, i64)"), "{out}");
    }

    #[test]
    fn a_difference_with_another_use_is_left_alone() {
        let ir = STEP_BY.replace("  br i1 %more", "  store i64 %left, ptr %row, align 8\n  br i1 %more");
        let out = run(&ir).ir;
        assert!(out.contains("%left = sub nuw i64 %e, %a") && out.contains("icmp ugt i64 %left, 1020"), "{out}");
        assert!(!out.contains("usub.sat"), "{out}");
    }

    #[test]
    fn a_compare_with_a_variable_or_a_wrapping_sub_is_left_alone() {
        for ir in [STEP_BY.replace("%left, 1020", "%left, %n"), STEP_BY.replace("sub nuw i64", "sub i64")] {
            let out = run(&ir).ir;
            assert!(!out.contains("usub.sat"), "{out}");
        }
    }
}
