//! A branch on `x == C` whose two arms make the same test once `x` is `C`: the general arm
//! alone.
//!
//! core's `skip(t)` handles `t == 0` on a path of its own, and `step_by` peels its first step,
//! so `row.iter().skip(t).step_by(B)` (the block-stride loop of a row kernel) starts with
//! `if t == 0 { cols == 0 ? exit : loop(0) } else { cols > t ? loop(t) : exit }`. Both arms
//! are `cols > t ? loop(t) : exit` once `t` is 0, but LLVM keeps the three branches, which
//! ptxas turns into a dozen instructions of divergent control flow (`BSSY`, `BREAK`, `BSYNC`)
//! before each such loop (xent_rows, layernorm_rows: two loops each), where nvcc tests
//! `t < cols` once.
//!
//! Here a block `A` ending in `br (icmp eq x, C), B1, B2` (or `ne`, arms swapped), where `B1`
//! and `B2` are entered only from `A` and each is one compare and a branch to the same two
//! blocks, goes straight to `B2` when `B2`'s compare with `x` replaced by `C` is `B1`'s (or its
//! negation, with the targets swapped) and every phi of the targets receives from `B2` what it
//! receives from `B1` under the same replacement. `B2`'s compare loses `samesign`, which may
//! hold only where `x != C`. `B1` is left without predecessors for `opt` to delete. No branch
//! on poison is added: every value `B2`'s compare reads where `x == C` is a constant, an
//! extension of `C` (`zext nneg` of a negative one is no match), or a value `B1`'s compare
//! (equal to it) already branched on.

use super::guarded_epilogs::cond_branch;
use super::guarded_loads::{blocks, Block};
use super::{definitions, int_bits, Line};
use std::collections::HashMap;

/// Rewrites every such branch; returns how many.
pub(super) fn merge(lines: &mut [Line]) -> usize {
    let mut merged = 0;
    let mut start = 0;
    while let Some(offset) = lines[start..].iter().position(|l| l.text.starts_with("define ")) {
        let begin = start + offset;
        let end = lines[begin..].iter().position(|l| l.text == "}").map_or(lines.len(), |e| begin + e);
        merged += merge_function(&mut lines[begin..end]);
        start = end;
    }
    merged
}

fn merge_function(body: &mut [Line]) -> usize {
    let blocks = blocks(body);
    let defs = definitions(body);
    let mut edits: Vec<(usize, String, usize)> = Vec::new();
    for a in &blocks {
        let Some(&term) = a.insts.last() else { continue };
        let Some((z, on_true, on_false)) = cond_branch(&body[term].text) else { continue };
        let Some((eq, x, c)) = equality(body, &defs, &z) else { continue };
        let (special, general) = if eq { (on_true, on_false) } else { (on_false, on_true) };
        let Some(one) = arm(body, &blocks, &special, &a.label) else { continue };
        let Some(two) = arm(body, &blocks, &general, &a.label) else { continue };
        let subst = Subst { body, defs: &defs, x: &x, c };
        let (Some(t1), Some(t2)) = (subst.test(&one.cmp, false), subst.test(&two.cmp, true)) else { continue };
        let same = if (two.on_true.as_str(), two.on_false.as_str()) == (one.on_true.as_str(), one.on_false.as_str()) {
            t2 == t1
        } else if (two.on_true.as_str(), two.on_false.as_str()) == (one.on_false.as_str(), one.on_true.as_str()) {
            t2 == t1.negated()
        } else {
            false
        };
        let targets = [&one.on_true, &one.on_false];
        if !same || !targets.iter().all(|t| phis_agree(body, &blocks, t, &special, &general, &subst)) {
            continue;
        }
        let indent = body[term].text.len() - body[term].text.trim_start().len();
        edits.push((term, format!("{}br label {general}", &body[term].text[..indent]), two.cmp_line));
    }
    for (term, text, cmp) in &edits {
        body[*term].text = text.clone();
        body[*cmp].text = body[*cmp].text.replacen(" samesign ", " ", 1);
    }
    edits.len()
}

/// `(is_eq, %x, C)` of `%z = icmp eq|ne <int> %x, C` (either order).
fn equality(body: &[Line], defs: &HashMap<String, usize>, z: &str) -> Option<(bool, String, i128)> {
    let (_, rhs) = body[*defs.get(z)?].text.split_once(" = ")?;
    let (pred, ty, a, b) = parse_icmp(rhs)?;
    int_bits(ty)?;
    let eq = match pred {
        "eq" => true,
        "ne" => false,
        _ => return None,
    };
    match (constant(a), constant(b)) {
        (None, Some(c)) if a.starts_with('%') => Some((eq, a.to_string(), c)),
        (Some(c), None) if b.starts_with('%') => Some((eq, b.to_string(), c)),
        _ => None,
    }
}

/// An arm: a block entered only from `from`, holding one compare and a branch on it.
struct Arm {
    cmp: String,
    cmp_line: usize,
    on_true: String,
    on_false: String,
}

fn arm(body: &[Line], blocks: &[Block], label: &str, from: &str) -> Option<Arm> {
    let b = blocks.iter().find(|b| b.label == label)?;
    let [cmp_line, term] = b.insts[..] else { return None };
    let entered = blocks.iter().filter(|m| m.label != from).any(|m| {
        m.insts.last().is_some_and(|&t| {
            body[t].text.split("label ").skip(1).any(|s| s.split([',', ' ', ']']).next() == Some(label))
        })
    });
    let (c, on_true, on_false) = cond_branch(&body[term].text)?;
    let (name, rhs) = body[cmp_line].text.trim().split_once(" = ")?;
    if entered || name != c || !rhs.starts_with("icmp ") {
        return None;
    }
    Some(Arm { cmp: rhs.to_string(), cmp_line, on_true, on_false })
}

/// Every phi of `target` receives from `general`, after the replacement, what it receives from
/// `special` (a target without phis agrees).
fn phis_agree(body: &[Line], blocks: &[Block], target: &str, special: &str, general: &str, subst: &Subst<'_>) -> bool {
    let Some(b) = blocks.iter().find(|b| b.label == target) else { return false };
    b.insts.iter().map(|&l| &body[l].text).take_while(|t| t.contains(" = phi ")).all(|text| {
        let incoming = |label: &str| {
            text.split('[')
                .skip(1)
                .filter_map(|arm| arm.split(']').next()?.split_once(", "))
                .find_map(|(v, l)| (l.trim() == label).then(|| v.trim().to_string()))
        };
        match (incoming(special), incoming(general)) {
            (Some(v1), Some(v2)) => subst.term(&v1, false, 4).is_some_and(|t1| subst.term(&v2, true, 4) == Some(t1)),
            _ => false,
        }
    })
}

/// A value: a constant, or a name (or literal text, such as a float) left as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Term {
    Const(i128),
    Other(String),
}

/// A compare in a normal form: a constant on the right, unsigned tests against 0 and 1 as
/// `eq`/`ne` with 0.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Test {
    pred: String,
    ty: String,
    a: Term,
    b: Term,
}

impl Test {
    fn negated(&self) -> Test {
        let pred = match self.pred.as_str() {
            "eq" => "ne",
            "ne" => "eq",
            "ugt" => "ule",
            "ule" => "ugt",
            "uge" => "ult",
            "ult" => "uge",
            "sgt" => "sle",
            "sle" => "sgt",
            "sge" => "slt",
            "slt" => "sge",
            other => other,
        };
        Test { pred: pred.to_string(), ..self.clone() }
    }
}

/// Values read with `x` replaced by `C` (`replace`) or as they are.
struct Subst<'a> {
    body: &'a [Line],
    defs: &'a HashMap<String, usize>,
    x: &'a str,
    c: i128,
}

impl Subst<'_> {
    fn term(&self, v: &str, replace: bool, depth: usize) -> Option<Term> {
        if let Some(c) = constant(v) {
            return Some(Term::Const(c));
        }
        if replace && v == self.x {
            return Some(Term::Const(self.c));
        }
        if depth == 0 || !v.starts_with('%') {
            return Some(Term::Other(v.to_string()));
        }
        // Extensions of a constant fold: `zext nneg` of a negative one is poison (no match).
        let Some(&d) = self.defs.get(v) else { return Some(Term::Other(v.to_string())) };
        let (_, rhs) = self.body[d].text.split_once(" = ")?;
        let ext = rhs.strip_prefix("zext nneg ").map(|r| (r, true, false));
        let ext = ext.or_else(|| rhs.strip_prefix("zext ").map(|r| (r, false, false)));
        let ext = ext.or_else(|| rhs.strip_prefix("sext ").map(|r| (r, false, true)));
        if let Some((rest, nneg, signed)) = ext {
            let (from, rest) = rest.split_once(' ')?;
            let (operand, _) = rest.split_once(" to ")?;
            let bits = int_bits(from)?;
            if let Term::Const(c) = self.term(operand.trim(), replace, depth - 1)? {
                let as_signed = wrap(c, bits, true);
                if nneg && as_signed < 0 {
                    return None;
                }
                return Some(Term::Const(if signed { as_signed } else { wrap(c, bits, false) }));
            }
        }
        Some(Term::Other(v.to_string()))
    }

    fn test(&self, icmp: &str, replace: bool) -> Option<Test> {
        let (pred, ty, a, b) = parse_icmp(icmp)?;
        let bits = int_bits(ty)?;
        let (mut a, mut b) = (self.term(a, replace, 4)?, self.term(b, replace, 4)?);
        let mut pred = pred.to_string();
        if matches!(a, Term::Const(_)) && !matches!(b, Term::Const(_)) {
            std::mem::swap(&mut a, &mut b);
            pred = swapped(&pred).to_string();
        }
        if let Term::Const(c) = b {
            b = Term::Const(wrap(c, bits, false));
        }
        let zero = Term::Const(0);
        let (pred, b) = match (pred.as_str(), &b) {
            ("ugt", Term::Const(0)) => ("ne".to_string(), zero),
            ("ule", Term::Const(0)) => ("eq".to_string(), zero),
            ("uge", Term::Const(1)) => ("ne".to_string(), zero),
            ("ult", Term::Const(1)) => ("eq".to_string(), zero),
            _ => (pred, b),
        };
        Some(Test { pred, ty: ty.to_string(), a, b })
    }
}

/// `c` as a `bits`-bit integer read unsigned, or signed.
fn wrap(c: i128, bits: u32, signed: bool) -> i128 {
    if bits >= 64 {
        let u = c as u64;
        return if signed && bits == 64 { u as i64 as i128 } else { u as i128 };
    }
    let m = (1i128 << bits) - 1;
    let u = c & m;
    if signed && u >> (bits - 1) == 1 {
        u - (1i128 << bits)
    } else {
        u
    }
}

/// The predicate with its operands swapped.
fn swapped(pred: &str) -> &str {
    match pred {
        "ugt" => "ult",
        "ult" => "ugt",
        "uge" => "ule",
        "ule" => "uge",
        "sgt" => "slt",
        "slt" => "sgt",
        "sge" => "sle",
        "sle" => "sge",
        other => other,
    }
}

/// `(pred, type, a, b)` of `icmp [samesign] pred ty a, b`.
fn parse_icmp(rhs: &str) -> Option<(&str, &str, &str, &str)> {
    let rest = rhs.trim().strip_prefix("icmp ")?;
    let rest = rest.strip_prefix("samesign ").unwrap_or(rest);
    let (pred, rest) = rest.split_once(' ')?;
    let (ty, rest) = rest.split_once(' ')?;
    let (a, b) = rest.split_once(", ")?;
    let b = b.split([',', ' ']).next()?;
    Some((pred, ty, a.trim(), b.trim()))
}

fn constant(v: &str) -> Option<i128> {
    match v {
        "true" => Some(1),
        "false" => Some(0),
        _ => v.parse::<i128>().ok(),
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::tests::{assert_valid_ir, transformed};

    /// core's `skip(t).step_by(B)` entry: `t == 0` tests `cols == 0`, other threads `cols > t`.
    const SKIP: &str = "\
define ptx_kernel void @k(ptr %row, i64 %cols, ptr %out) {
start:
  %t32 = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t = zext nneg i32 %t32 to i64
  %first = icmp eq i32 %t32, 0
  br i1 %first, label %zero, label %other

other:                                            ; preds = %start
  %more = icmp samesign ugt i64 %cols, %t
  br i1 %more, label %loop, label %done

zero:                                             ; preds = %start
  %empty = icmp eq i64 %cols, 0
  br i1 %empty, label %done, label %loop

loop:                                             ; preds = %zero, %other
  %at = phi i64 [ 0, %zero ], [ %t, %other ]
  %p = getelementptr inbounds float, ptr %row, i64 %at
  %v = load float, ptr %p, align 4
  br label %done

done:                                             ; preds = %loop, %zero, %other
  %m = phi float [ 0xFFF0000000000000, %other ], [ 0xFFF0000000000000, %zero ], [ %v, %loop ]
  store float %m, ptr %out, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
";

    /// The merged IR (checked by LLVM's verifier; `what` names its files) and the count.
    fn merged(ir: &str, what: &str) -> (String, usize) {
        let (out, n) = transformed(ir, |lines| super::merge(lines));
        assert_valid_ir(what, &out);
        (out, n)
    }

    #[test]
    fn skips_zero_case_goes_the_general_way() {
        let (out, n) = merged(SKIP, "equal_arms_skip");
        assert_eq!(n, 1, "{out}");
        assert!(out.contains("  br label %other\n"), "{out}");
        // `samesign` held only for t != 0 (cols >= 2^63 and t = 0 would make it poison).
        assert!(out.contains("  %more = icmp ugt i64 %cols, %t\n"), "{out}");
    }

    #[test]
    fn arms_that_differ_once_x_is_c_stay() {
        for ir in [
            // The special arm tests `cols < 2`: not the general test at t = 0.
            SKIP.replace("%empty = icmp eq i64 %cols, 0", "%empty = icmp ult i64 %cols, 2"),
            // The loop starts at 1 from the special arm.
            SKIP.replace("[ 0, %zero ]", "[ 1, %zero ]"),
            // The phi of `done` takes another value from the special arm.
            SKIP.replace("[ 0xFFF0000000000000, %zero ]", "[ 0.0, %zero ]"),
            // The branch tests `t == 1`.
            SKIP.replace("icmp eq i32 %t32, 0", "icmp eq i32 %t32, 1"),
        ]
        .iter()
        .enumerate()
        {
            let (out, n) = merged(ir.1, &format!("equal_arms_differ_{}", ir.0));
            assert_eq!(n, 0, "{out}");
            assert!(out.contains("br i1 %first, label %zero, label %other"), "{out}");
        }
    }

    #[test]
    fn a_negative_constant_under_zext_nneg_is_no_match() {
        let ir = SKIP.replace("icmp eq i32 %t32, 0", "icmp eq i32 %t32, -1");
        let ir = ir.replace("%empty = icmp eq i64 %cols, 0", "%empty = icmp ule i64 %cols, 4294967295");
        let (out, n) = merged(&ir, "equal_arms_negative");
        assert_eq!(n, 0, "{out}");
    }

    #[test]
    fn an_arm_entered_from_elsewhere_stays() {
        let ir = SKIP.replace("  %t = zext nneg i32 %t32 to i64\n", "  %t = zext nneg i32 %t32 to i64\n  %early = icmp eq i64 %cols, 7\n  br i1 %early, label %zero, label %mid\n\nmid:\n")
            .replace("preds = %start", "preds = %mid");
        let (out, n) = merged(&ir, "equal_arms_entered");
        assert_eq!(n, 0, "{out}");
    }
}
