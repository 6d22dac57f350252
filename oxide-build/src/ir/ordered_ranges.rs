//! The start-after-end test of a range `a * n..(a + k) * n` dropped (after `opt`, before
//! `llc`): with both products `nuw`, the end is never below the start.
//!
//! `row = x.get(r * cols..(r + 1) * cols)` is how a kernel takes row `r`; slicing tests
//! `start > end` before `end > len`. `opt` keeps the first test, as it cannot order two
//! products, so every thread of xent_rows made it in 64 bits at its start (four compares
//! where nvcc's `if (r >= rows) return` makes one):
//!
//! ```text
//! %s = mul nuw i64 %cols, %r
//! %r1 = add nuw i64 %r, 1
//! %e = mul nuw i64 %cols, %r1
//! %bad = icmp ult i64 %e, %s        ; false: r1 >= r, and neither product wraps
//! ```
//!
//! A compare `icmp ult E, S` (or `ugt S, E`) of products `E = n * b`, `S = n * a` (either
//! operand order, both `nuw`) where `b = a + k` (`add nuw`, so `b >= a`) is `false`, and
//! `uge E, S` (`ule S, E`) is `true`; its uses read the constant and `llc` folds them.

use super::guarded_epilogs::replace_value;
use super::guarded_loads::{each_kernel, REMOVED};
use super::narrow_compares::compare;
use super::{definitions, split_top, Line};
use std::collections::HashMap;

/// Folds every such compare of every kernel; returns how many.
pub(super) fn fold(lines: &mut Vec<Line>) -> usize {
    each_kernel(lines, |body, _, _| fold_function(body))
}

fn fold_function(mut body: Vec<Line>) -> (Vec<Line>, usize) {
    let defs = definitions(&body);
    let mut folds: Vec<(usize, String, &'static str)> = Vec::new();
    for (i, line) in body.iter().enumerate() {
        let Some((name, pred, a, b)) = compare(&line.text) else { continue };
        // `compare` reads signed predicates as unsigned; that holds only under `samesign`.
        let signed = [" slt ", " sle ", " sgt ", " sge "].iter().any(|p| line.text.contains(p));
        if signed && !line.text.contains(" samesign ") {
            continue;
        }
        // As `(smaller, larger, value when larger >= smaller is what the compare asks)`.
        let (lo, hi, holds) = match pred {
            "ult" => (b, a, "false"),
            "ugt" => (a, b, "false"),
            "uge" => (b, a, "true"),
            "ule" => (a, b, "true"),
            _ => continue,
        };
        if ordered(&body, &defs, lo, hi) {
            folds.push((i, name.to_string(), holds));
        }
    }
    for (i, name, value) in &folds {
        body[*i].text = REMOVED.to_string();
        for line in body.iter_mut().filter(|l| l.text != REMOVED) {
            if line.text.contains(name.as_str()) {
                line.text = replace_value(&line.text, name, value);
            }
        }
    }
    body.retain(|l| l.text != REMOVED);
    let n = folds.len();
    (body, n)
}

/// Whether `lo = n * a` and `hi = n * b` (`mul nuw`, either operand order) with
/// `b = a + k` (`add nuw`, so `b >= a`).
fn ordered(body: &[Line], defs: &HashMap<String, usize>, lo: &str, hi: &str) -> bool {
    let (Some([p, q]), Some([u, v])) = (product(body, defs, lo), product(body, defs, hi)) else { return false };
    let grows = |a: &str, b: &str| {
        instruction(body, defs, b)
            .is_some_and(|(op, [x, y])| op.starts_with("add nuw ") && op.ends_with(" i64") && (x == a || y == a))
    };
    (p == u && grows(&q, &v)) || (p == v && grows(&q, &u)) || (q == u && grows(&p, &v)) || (q == v && grows(&p, &u))
}

/// The operands of `v = mul nuw [nsw] i64 X, Y`.
fn product(body: &[Line], defs: &HashMap<String, usize>, v: &str) -> Option<[String; 2]> {
    let (op, args) = instruction(body, defs, v)?;
    (op.starts_with("mul nuw ") && op.ends_with(" i64")).then_some(args)
}

/// `v = OP FLAGS TY X, Y` as (`OP FLAGS TY`, `[X, Y]`).
fn instruction(body: &[Line], defs: &HashMap<String, usize>, v: &str) -> Option<(String, [String; 2])> {
    let &i = defs.get(v)?;
    let (_, rhs) = body[i].text.split_once(" = ")?;
    let rhs = rhs.split(", !").next()?.trim();
    let parts = split_top(rhs);
    let [first, second] = &parts[..] else { return None };
    let (head, x) = first.rsplit_once(' ')?;
    Some((head.to_string(), [x.to_string(), second.trim().to_string()]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::tests::{assert_valid_ir, transformed};

    const ROW: &str =
        "define ptx_kernel void @k(ptr noalias readonly %__oxide_in_x, i64 %__oxide_in_x_len, i64 %cols, i64 %r) #0 {
start:
  %s = mul nuw nsw i64 %cols, %r
  %r1 = add nuw nsw i64 %r, 1
  %e = mul nuw nsw i64 %cols, %r1
  %bad = icmp samesign ult i64 %e, %s
  %long = icmp samesign ugt i64 %e, %__oxide_in_x_len
  %out = or i1 %bad, %long
  br i1 %out, label %x, label %x

x:                                                ; preds = %start, %start
  ret void
}
";

    #[test]
    fn a_rows_end_below_its_start_is_false() {
        let (out, n) = transformed(ROW, fold);
        assert_eq!(n, 1, "{out}");
        assert!(!out.contains("%bad ="), "{out}");
        assert!(out.contains("  %out = or i1 false, %long\n"), "{out}");
        assert_valid_ir("ordered_ranges", &out);
        // The same as `ugt S, E`, and `uge E, S` is true.
        let swapped = ROW.replace("icmp samesign ult i64 %e, %s", "icmp ugt i64 %s, %e");
        assert!(transformed(&swapped, fold).0.contains("  %out = or i1 false, %long\n"));
        let holds = ROW.replace("icmp samesign ult i64 %e, %s", "icmp uge i64 %e, %s");
        assert!(transformed(&holds, fold).0.contains("  %out = or i1 true, %long\n"));
    }

    #[test]
    fn products_that_may_wrap_or_shrink_are_compared() {
        let wraps = ROW.replace("%e = mul nuw nsw i64", "%e = mul nsw i64");
        let shrinks = ROW.replace("%r1 = add nuw nsw i64 %r, 1", "%r1 = sub nuw nsw i64 %r, 1");
        let other_factor = ROW.replace("%e = mul nuw nsw i64 %cols, %r1", "%e = mul nuw nsw i64 %r, %r1");
        let backwards = ROW.replace("icmp samesign ult i64 %e, %s", "icmp samesign ult i64 %s, %e");
        // A signed order: `n * b` may be past 2^63, negative as a signed value.
        let signed = ROW.replace("icmp samesign ult i64 %e, %s", "icmp slt i64 %e, %s");
        let cases = [
            ("wraps", wraps),
            ("smaller", shrinks),
            ("factor", other_factor),
            ("order", backwards),
            ("signed", signed),
        ];
        for (what, ir) in cases {
            let (out, n) = transformed(&ir, fold);
            assert_eq!((n, out.as_str()), (0, ir.as_str()), "{what}");
        }
    }
}
