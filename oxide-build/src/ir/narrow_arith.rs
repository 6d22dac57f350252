//! 64-bit integer arithmetic whose values stay below 2^32 computed in 32 bits (after `opt`,
//! before `llc`).
//!
//! A block-stride loop over a row of `cols: usize` elements gets its trip count from `opt` as
//! a chain on `i64` (`(usub.sat((cols - t) * 4, K) ... >> 10) + 1`, then `& 7` for the
//! unrolled remainder): every step two SASS instructions, a `SEL` pair for each `umax`, about
//! 22 instructions per loop where nvcc's `int` twin needs 10 (xent_rows executed 1.20x the
//! instructions of its twin, H200 `ncu`, and was issue-bound). Where every value of such a
//! chain is known below 2^32, each step is made on the low halves and zero-extended back:
//!
//! ```text
//! %d = sub nuw i64 %cols, %t          %__oxide_na0 = sub i32 %__oxide_na0a, %__oxide_na0b
//!                                     %d = zext i32 %__oxide_na0 to i64
//! ```
//!
//! (operands narrowed themselves are read as their low halves, the others through `trunc`).
//! Upper bounds come from what the instructions show: constants, zero extensions (of a
//! `range(i32 a, b)` call's result too), `and`, shifts and divisions by constants, sums and
//! products of bounds, `sub nuw` (at most its first operand), the unsigned min/max and
//! saturating subtraction, selects and phis, and `llvm.assume(icmp ult %p, C)` in the entry
//! block for a parameter (the launch-wide copies of `versioned_checks.rs` assume that their
//! test holds). A step narrows when its result and its operands are below 2^32, which makes
//! the 32-bit operation exact: no sum, product or left shift wraps, a `sub nuw` or an added
//! negative constant `-c` has a first operand at least as large (`-c` then wraps in 32 bits as
//! it does in 64), and shift amounts stay below 32. Compares of two values below 2^31 are made
//! in 32 bits too (where signed and unsigned orders agree), and so is a signed compare of a
//! `sub nsw` of two values below 2^31 with a 32-bit constant (the difference is exact in 32
//! bits: a peeled row loop's `(cols - t) * 4 > 1024`, four SASS instructions in 64 bits).
//! Values that only feed addresses stay as they are (see [`narrow_function`]).

use super::guarded_loads::{apply, each_kernel};
use super::narrow_compares::compare;
use super::offset_checks::assumed_bounds;
use super::versioned_checks::call_args;
use super::{definitions, split_top, uses_value, Line};
use std::collections::HashMap;

/// Rewrites every qualifying instruction of every kernel; returns how many.
pub(super) fn narrow(lines: &mut Vec<Line>) -> usize {
    let n = each_kernel(lines, |body, _, first| narrow_function(body, first));
    for f in CALLS {
        let (call, declared) = (format!("@llvm.{f}.i32("), format!("declare i32 @llvm.{f}.i32("));
        let used = lines.iter().any(|l| l.text.contains(&call) && !l.text.starts_with("declare "));
        if used && !lines.iter().any(|l| l.text.starts_with(&declared)) {
            let no = lines.last().map_or(0, |l| l.no);
            lines.push(Line { no, text: format!("declare i32 @llvm.{f}.i32(i32, i32)") });
        }
    }
    n
}

/// The intrinsics narrowed, by their names without the type.
const CALLS: [&str; 3] = ["umax", "umin", "usub.sat"];

/// Values are followed at most this deep.
const DEPTH: usize = 16;
const LIMIT: u128 = 1 << 32;

fn narrow_function(body: Vec<Line>, first: usize) -> (Vec<Line>, usize) {
    let (body, n) = narrow_steps(body, first);
    let (body, m) = narrow_differences(body, first + n);
    (body, n + m)
}

/// `%c = icmp sPRED i64 %d, C` where `%d = sub nsw i64 A, B`, `A` and `B` below 2^31 and `C`
/// a 32-bit constant: the difference made in 32 bits for the compare (the 64-bit one stays
/// for any other use).
fn narrow_differences(mut body: Vec<Line>, first: usize) -> (Vec<Line>, usize) {
    let defs = definitions(&body);
    let mut b = Bounds { body: &body, defs: &defs, facts: assumed(&body), memo: HashMap::new(), open: Vec::new() };
    // The compare's new text, and the lines that go in before it.
    let mut made: Vec<(usize, String, Vec<String>)> = Vec::new();
    for (i, line) in body.iter().enumerate() {
        let Some((name, pred, d, c)) = signed_compare(&line.text) else { continue };
        if c.parse::<i32>().is_err() {
            continue;
        }
        let Some(rhs) = b.rhs(d) else { continue };
        let Some(rest) = rhs.strip_prefix("sub ") else { continue };
        let (flags, args) = rest.split_once("i64 ").unwrap_or(("", ""));
        if !flags.split_whitespace().any(|f| f == "nsw") {
            continue;
        }
        let ops: Vec<String> = split_top(args).iter().map(|s| s.trim().to_string()).collect();
        if ops.len() != 2 || !ops.iter().all(|v| b.upper(v, DEPTH).is_some_and(|u| u < 1 << 31)) {
            continue;
        }
        let id = first + made.len();
        made.push((
            i,
            format!("  {name} = icmp {pred} i32 %__oxide_na{id}, {c}"),
            vec![
                format!("  %__oxide_na{id}_0 = trunc i64 {} to i32", ops[0]),
                format!("  %__oxide_na{id}_1 = trunc i64 {} to i32", ops[1]),
                format!("  %__oxide_na{id} = sub nsw i32 %__oxide_na{id}_0, %__oxide_na{id}_1"),
            ],
        ));
    }
    let n = made.len();
    let mut inserts = Vec::with_capacity(n);
    for (i, compare, before) in made {
        body[i].text = compare;
        inserts.push((i, before));
    }
    apply(&mut body, inserts);
    (body, n)
}

/// `%c = icmp sPRED i64 A, B` as its name, the predicate and the operands.
fn signed_compare(text: &str) -> Option<(&str, &str, &str, &str)> {
    let (lhs, rhs) = text.split_once(" = ")?;
    let rest = rhs.trim().strip_prefix("icmp ")?;
    let (pred, rest) = rest.split_once(' ')?;
    if !matches!(pred, "sgt" | "sge" | "slt" | "sle") {
        return None;
    }
    let (a, b) = rest.strip_prefix("i64 ")?.split_once(", ")?;
    Some((lhs.trim(), pred, a.trim(), b.split(", !").next()?.trim()))
}

fn narrow_steps(body: Vec<Line>, first: usize) -> (Vec<Line>, usize) {
    let defs = definitions(&body);
    let mut b = Bounds { body: &body, defs: &defs, facts: assumed(&body), memo: HashMap::new(), open: Vec::new() };
    // First which instructions narrow, then their text: an operand may be defined further down.
    let mut steps: HashMap<usize, Step> = HashMap::new();
    // The assumptions themselves stay: they are what the bounds come from.
    let assumed_by = |name: &str| body.iter().any(|l| l.text.contains("@llvm.assume(") && uses_value(&l.text, name));
    for (i, line) in body.iter().enumerate() {
        if let Some(step) = step(&line.text).filter(|s| !(s.compare && assumed_by(&s.name)) && s.narrows(&mut b)) {
            steps.insert(i, step);
        }
    }
    // Address arithmetic stays as it was: a value only addresses read (`getelementptr`
    // indices, directly or through other such values) is what ptxas folds into its 64-bit
    // address math, and a 32-bit copy of it measured slower (H200: sgemm's shared-memory
    // offsets, 2104 -> 2120 SASS instructions, 0.966 -> 0.980 of nvcc's time).
    let mut addressing: Vec<usize> = Vec::new();
    loop {
        let only_addresses = |s: &Step| {
            !s.compare
                && body.iter().enumerate().all(|(j, l)| {
                    !uses_value(&l.text, &s.name)
                        || l.text.trim_start().starts_with(&format!("{} = ", s.name))
                        || l.text.contains(" = getelementptr ")
                        || addressing.contains(&j)
                })
        };
        let more: Vec<usize> = steps.iter().filter(|(_, s)| only_addresses(s)).map(|(&i, _)| i).collect();
        if more.is_empty() {
            break;
        }
        for i in more {
            steps.remove(&i);
            addressing.push(i);
        }
    }
    let low: HashMap<String, String> = steps
        .iter()
        .filter(|(_, s)| !s.compare)
        .map(|(&i, s)| (s.name.clone(), format!("%__oxide_na{}", first + index_of(&steps, i))))
        .collect();
    let mut out = Vec::with_capacity(body.len() + 3 * steps.len());
    for (i, line) in body.into_iter().enumerate() {
        let Some(step) = steps.get(&i) else {
            out.push(line);
            continue;
        };
        let id = first + index_of(&steps, i);
        let mut texts = Vec::new();
        let operands: Vec<String> = step
            .operands
            .iter()
            .enumerate()
            .map(|(k, v)| match (v.parse::<i128>(), low.get(v)) {
                (Ok(c), _) => (if c >= 1 << 31 { c - (1 << 32) } else { c }).to_string(),
                (_, Some(lo)) => lo.clone(),
                _ => {
                    let t = format!("%__oxide_na{id}_{k}");
                    texts.push(format!("  {t} = trunc i64 {v} to i32"));
                    t
                }
            })
            .collect();
        texts.push(step.text32(&operands, &format!("%__oxide_na{id}")));
        if !step.compare {
            texts.push(format!("  {} = zext i32 %__oxide_na{id} to i64", step.name));
        }
        out.extend(texts.into_iter().map(|text| Line { no: line.no, text }));
    }
    let n = steps.len();
    (out, n)
}

/// Where `i` falls among the narrowed lines (a stable id for its names).
fn index_of(steps: &HashMap<usize, Step>, i: usize) -> usize {
    steps.keys().filter(|&&k| k < i).count()
}

/// One 64-bit instruction this pass can make in 32 bits.
struct Step {
    name: String,
    /// `add`, `icmp ult`, `@llvm.umax` ...
    op: String,
    operands: Vec<String>,
    compare: bool,
}

impl Step {
    fn narrows(&self, b: &mut Bounds) -> bool {
        let limit = if self.compare { 1 << 31 } else { LIMIT };
        let fits = |b: &mut Bounds, v: &str| b.upper(v, DEPTH).is_some_and(|u| u < limit);
        // A negative constant is exact in 32 bits only as an addend or a mask.
        let signed_ok = matches!(self.op.as_str(), "add" | "and");
        if !self.operands.iter().all(|v| fits(b, v) || (signed_ok && negative(v))) {
            return false;
        }
        if self.compare {
            return true;
        }
        if matches!(self.op.as_str(), "shl" | "lshr") && self.operands[1].parse::<u32>().map_or(true, |s| s >= 32) {
            return false;
        }
        fits(b, &self.name)
    }

    fn text32(&self, ops: &[String], name: &str) -> String {
        let lhs = if self.compare { self.name.clone() } else { name.to_string() };
        match self.op.strip_prefix('@') {
            Some(f) => format!("  {lhs} = tail call i32 @{f}.i32(i32 {}, i32 {})", ops[0], ops[1]),
            None => format!("  {lhs} = {} i32 {}, {}", self.op, ops[0], ops[1]),
        }
    }
}

/// `%x = OP [flags] i64 A, B`, a narrowable intrinsic call, or a compare of two `i64`s.
fn step(text: &str) -> Option<Step> {
    const OPS: [&str; 10] = ["add", "sub", "mul", "shl", "lshr", "and", "or", "xor", "udiv", "urem"];
    if let Some((name, pred, a, b)) = compare(text) {
        let op = format!("icmp {pred}");
        return Some(Step { name: name.to_string(), op, operands: vec![a.to_string(), b.to_string()], compare: true });
    }
    let (lhs, rhs) = text.split_once(" = ")?;
    let name = lhs.trim().to_string();
    let rhs = rhs.split(", !").next()?.trim();
    if let Some(call) = rhs.strip_prefix("tail call ").or_else(|| rhs.strip_prefix("call ")) {
        let f = CALLS.iter().find(|f| call.contains(&format!("i64 @llvm.{f}.i64(")))?;
        let (a, b) = call_args(call)?;
        return Some(Step { name, op: format!("@llvm.{f}"), operands: vec![a, b], compare: false });
    }
    let (op, rest) = rhs.split_once(' ')?;
    if !OPS.contains(&op) {
        return None;
    }
    let (flags, args) = rest.split_once("i64 ")?;
    if !flags.split_whitespace().all(|f| matches!(f, "nuw" | "nsw" | "exact" | "disjoint")) {
        return None;
    }
    let nuw = flags.split_whitespace().any(|f| f == "nuw");
    let operands: Vec<String> = split_top(args).iter().map(|s| s.trim().to_string()).collect();
    if operands.len() != 2 {
        return None;
    }
    // A subtraction narrows only where it cannot wrap: `nuw`, or a constant the first operand
    // is known to reach (left to the bound of the result, which needs it).
    if op == "sub" && !nuw && operands[1].parse::<u64>().is_err() {
        return None;
    }
    Some(Step { name, op: op.to_string(), operands, compare: false })
}

/// A negative integer literal.
fn negative(v: &str) -> bool {
    v.parse::<i64>().is_ok_and(|c| c < 0)
}

/// Upper bounds from `llvm.assume(icmp ult %p, C)` in the entry block (which every
/// instruction comes after).
fn assumed(body: &[Line]) -> HashMap<String, u128> {
    let entry_end = body.iter().position(|l| {
        let t = l.text.trim_start();
        t.starts_with("br ") || t.starts_with("ret") || t.starts_with("switch ") || t.starts_with("unreachable")
    });
    let entry = &body[..entry_end.unwrap_or(0)];
    assumed_bounds(entry, &definitions(entry))
}

struct Bounds<'a> {
    body: &'a [Line],
    defs: &'a HashMap<String, usize>,
    facts: HashMap<String, u128>,
    memo: HashMap<String, Option<u128>>,
    /// Phis being bounded (a cycle through one has no bound here).
    open: Vec<String>,
}

impl Bounds<'_> {
    /// The largest value `v` (an `i64` or a narrower integer) can have, if known.
    fn upper(&mut self, v: &str, depth: usize) -> Option<u128> {
        if let Ok(c) = v.parse::<u64>() {
            return Some(u128::from(c));
        }
        if let Some(&f) = self.facts.get(v) {
            return Some(f);
        }
        if let Some(&m) = self.memo.get(v) {
            return m;
        }
        if depth == 0 || self.open.iter().any(|o| o == v) {
            return None;
        }
        let u = self.compute(v, depth - 1);
        self.memo.insert(v.to_string(), u);
        u
    }

    /// The smallest value `v` can have (0 where nothing is known).
    fn lower(&mut self, v: &str, depth: usize) -> u128 {
        if let Ok(c) = v.parse::<u64>() {
            return u128::from(c);
        }
        let Some(rhs) = self.rhs(v).filter(|_| depth > 0) else { return 0 };
        if rhs.contains("@llvm.umax.i64(") {
            if let Some((a, b)) = call_args(&rhs) {
                return self.lower(&a, depth - 1).max(self.lower(&b, depth - 1));
            }
        }
        0
    }

    fn rhs(&self, v: &str) -> Option<String> {
        let &d = self.defs.get(v)?;
        let (_, rhs) = self.body[d].text.split_once(" = ")?;
        Some(rhs.split(", !").next().unwrap_or(rhs).trim().to_string())
    }

    fn compute(&mut self, v: &str, depth: usize) -> Option<u128> {
        let rhs = self.rhs(v)?;
        let max = u128::from(u64::MAX);
        let cap = |x: u128| (x <= max).then_some(x);
        if let Some(call) = rhs.strip_prefix("tail call ").or_else(|| rhs.strip_prefix("call ")) {
            // `range(i32 0, 256) i32 @llvm.nvvm.read.ptx.sreg.tid.x()`
            // (A range starting below zero holds large unsigned values: no bound.)
            if let Some(r) = call.strip_prefix("range(") {
                let (lo, hi) =
                    r.split(')').next()?.split_whitespace().nth(1).zip(r.split(')').next()?.rsplit(',').next())?;
                let (lo, hi) = (lo.trim_end_matches(',').parse::<u128>().ok()?, hi.trim().parse::<u128>().ok()?);
                return (lo < hi).then(|| hi - 1);
            }
            let (a, b) = call_args(call)?;
            let f = call.split('@').nth(1)?.split('(').next()?;
            return match f {
                "llvm.umax.i64" => Some(self.upper(&a, depth)?.max(self.upper(&b, depth)?)),
                "llvm.umin.i64" => match (self.upper(&a, depth), self.upper(&b, depth)) {
                    (Some(x), Some(y)) => Some(x.min(y)),
                    (x, y) => x.or(y),
                },
                "llvm.usub.sat.i64" => self.upper(&a, depth),
                _ => None,
            };
        }
        let (op, rest) = rhs.split_once(' ')?;
        let mut rest = rest.trim_start();
        while let Some(r) = ["nuw ", "nsw ", "nneg ", "exact ", "disjoint "].iter().find_map(|f| rest.strip_prefix(f)) {
            rest = r.trim_start();
        }
        match op {
            "zext" => {
                // `zext i32 %x to i64`
                let mut w = rest.split_whitespace();
                let bits = super::int_bits(w.next()?).filter(|&b| b <= 64)?;
                let x = w.next()?;
                let full = (1u128 << bits) - 1;
                Some(self.upper(x, depth).map_or(full, |u| u.min(full)))
            }
            "trunc" => {
                // `trunc i64 %x to i32` (this pass's own, read again by `narrow_differences`)
                let x = rest.split_whitespace().nth(1)?;
                let bits = super::int_bits(rest.rsplit(' ').next()?).filter(|&b| b <= 64)?;
                let full = (1u128 << bits) - 1;
                Some(self.upper(x, depth).map_or(full, |u| u.min(full)))
            }
            "phi" => {
                let incoming = rest.split_once(' ')?.1;
                self.open.push(v.to_string());
                let mut best = Some(0u128);
                for pair in split_top(incoming) {
                    let value = pair.trim().trim_start_matches('[').split(',').next().unwrap_or("").trim();
                    best = match (best, self.upper(value, depth)) {
                        (Some(x), Some(y)) => Some(x.max(y)),
                        _ => None,
                    };
                }
                self.open.pop();
                best
            }
            "select" => {
                let parts = split_top(rest);
                let [_, a, b] = parts.as_slice() else { return None };
                let a = a.split_whitespace().last()?.to_string();
                let b = b.split_whitespace().last()?.to_string();
                Some(self.upper(&a, depth)?.max(self.upper(&b, depth)?))
            }
            _ => {
                let operands = split_top(rest.split_once(' ')?.1);
                let [a, b] = operands.as_slice() else { return None };
                let (a, b) = (a.trim().to_string(), b.trim().to_string());
                let ub = |s: &mut Self, x: &str| s.upper(x, depth);
                match op {
                    "add" if negative(&b) => {
                        let c = u128::from(b.parse::<i64>().ok()?.unsigned_abs());
                        (self.lower(&a, depth) >= c).then_some(ub(self, &a)? - c)
                    }
                    "add" => cap(ub(self, &a)? + ub(self, &b)?),
                    "sub" if rhs.contains(" nuw ") => ub(self, &a),
                    "sub" => {
                        let c = b.parse::<u128>().ok()?;
                        (self.lower(&a, depth) >= c).then_some(ub(self, &a)? - c)
                    }
                    "mul" => cap(ub(self, &a)?.checked_mul(ub(self, &b)?)?),
                    "shl" => cap(ub(self, &a)?.checked_shl(b.parse::<u32>().ok().filter(|&s| s < 64)?)?),
                    "lshr" => Some(ub(self, &a)? >> b.parse::<u32>().ok().filter(|&s| s < 64)?),
                    "udiv" => Some(ub(self, &a)? / b.parse::<u128>().ok().filter(|&c| c > 0).unwrap_or(1)),
                    "urem" => match (ub(self, &a), ub(self, &b)) {
                        (Some(x), Some(y)) => Some(x.min(y.saturating_sub(1))),
                        (x, y) => x.or(y.map(|y| y.saturating_sub(1))),
                    },
                    "and" => match (ub(self, &a), ub(self, &b)) {
                        (Some(x), Some(y)) => Some(x.min(y)),
                        (x, y) => x.or(y),
                    },
                    "or" | "xor" => {
                        let m = ub(self, &a)?.max(ub(self, &b)?);
                        Some((m + 1).next_power_of_two() - 1)
                    }
                    _ => None,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::tests::{assert_valid_ir, transformed};

    /// A row loop's trip count as `opt` leaves it, `cols` assumed below 2^29, `t` a thread
    /// index; and values that must stay wide.
    const TRIP: &str = "define ptx_kernel void @k(i64 %cols, i64 %n, ptr %out) {
start:
  %small = icmp ult i64 %cols, 536870912
  tail call void @llvm.assume(i1 %small)
  %tid = tail call range(i32 0, 256) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t = zext nneg i32 %tid to i64
  %d = sub nuw i64 %cols, %t
  %bytes = shl i64 %d, 2
  %l = tail call i64 @llvm.usub.sat.i64(i64 %bytes, i64 1020)
  %m = tail call i64 @llvm.umax.i64(i64 %l, i64 1028)
  %a = add i64 %m, -5
  %s = lshr i64 %a, 10
  %trip = add nuw nsw i64 %s, 1
  %rem = and i64 %trip, 7
  %long = icmp ult i64 %a, 7168
  %wide = mul i64 %n, %cols
  %wrap = add i64 %d, -5
  %far = shl i64 %cols, 8
  store i64 %rem, ptr %out, align 8
  store i64 %wide, ptr %out, align 8
  store i64 %wrap, ptr %out, align 8
  store i64 %far, ptr %out, align 8
  br i1 %long, label %x, label %x

x:                                                ; preds = %start, %start
  ret void
}
";

    #[test]
    fn a_trip_count_chain_below_two_to_the_32_runs_in_32_bits() {
        let (out, n) = transformed(TRIP, narrow);
        for want in [
            "  %__oxide_na0_0 = trunc i64 %cols to i32\n  %__oxide_na0_1 = trunc i64 %t to i32\n  %__oxide_na0 = sub i32 %__oxide_na0_0, %__oxide_na0_1\n  %d = zext i32 %__oxide_na0 to i64\n",
            "  %__oxide_na1 = shl i32 %__oxide_na0, 2\n",
            "  %__oxide_na2 = tail call i32 @llvm.usub.sat.i32(i32 %__oxide_na1, i32 1020)\n",
            "  %__oxide_na3 = tail call i32 @llvm.umax.i32(i32 %__oxide_na2, i32 1028)\n",
            "  %__oxide_na4 = add i32 %__oxide_na3, -5\n",
            "  %__oxide_na7 = and i32 %__oxide_na6, 7\n",
            "  %long = icmp ult i32 %__oxide_na4, 7168\n",
            // Unbounded, may go below zero, or past 2^32: stay wide.
            "  %wide = mul i64 %n, %cols\n",
            "  %wrap = add i64 %d, -5\n",
            "  %far = shl i64 %cols, 8\n",
            "  %small = icmp ult i64 %cols, 536870912\n",
        ] {
            assert!(out.contains(want), "missing\n{want}\nin\n{out}");
        }
        assert_eq!(n, 9, "{out}");
        assert!(
            out.ends_with("declare i32 @llvm.umax.i32(i32, i32)\ndeclare i32 @llvm.usub.sat.i32(i32, i32)\n"),
            "{out}"
        );
        let ir = format!(
            "{out}declare void @llvm.assume(i1)\ndeclare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n\
             declare i64 @llvm.usub.sat.i64(i64, i64)\ndeclare i64 @llvm.umax.i64(i64, i64)\n"
        );
        assert_valid_ir("narrow-arith", &ir);
    }

    #[test]
    fn a_range_from_below_zero_bounds_nothing() {
        let shifted =
            TRIP.replace("  %d = sub", "  %big = shl i64 %t, 20\n  store i64 %big, ptr %out, align 8\n  %d = sub");
        let (out, _) = transformed(&shifted, narrow);
        assert!(out.contains("  %big = zext i32 "), "{out}");
        let (out, _) = transformed(&shifted.replace("range(i32 0, 256)", "range(i32 -1, 256)"), narrow);
        assert!(out.contains("  %big = shl i64 %t, 20\n"), "{out}");
    }

    #[test]
    fn values_only_addresses_read_stay_wide() {
        // `%o` and `%row` only index addresses (`%row` through `%o`): both stay; `%d` has
        // other uses and narrows.
        let ir = TRIP.replace(
            "  %bytes = shl i64 %d, 2\n",
            "  %bytes = shl i64 %d, 2\n  %row = mul i64 %t, 33\n  %o = or i64 %row, 1\n  %p = getelementptr float, ptr %out, i64 %o\n  store float 0.0, ptr %p, align 4\n",
        );
        let (out, _) = transformed(&ir, narrow);
        assert!(out.contains("  %row = mul i64 %t, 33\n  %o = or i64 %row, 1\n"), "{out}");
        assert!(out.contains("  %d = zext i32 "), "{out}");
    }

    #[test]
    fn a_signed_compare_of_a_small_difference_runs_in_32_bits() {
        let ir = "define ptx_kernel void @k(i64 %cols) {
start:
  %small = icmp ult i64 %cols, 536870912
  tail call void @llvm.assume(i1 %small)
  %tid = tail call range(i32 0, 256) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t = zext nneg i32 %tid to i64
  %d = sub nsw i64 %cols, %t
  %more = icmp sgt i64 %d, 1024
  %big = icmp sgt i64 %d, 4294967296
  %loose = sub i64 %cols, %t
  %also = icmp sgt i64 %loose, 1024
  br i1 %more, label %x, label %x

x:                                                ; preds = %start, %start
  ret void
}

declare void @llvm.assume(i1)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
";
        let (out, _) = transformed(ir, narrow);
        assert!(out.contains("  %more = icmp sgt i32 %__oxide_na"), "{out}");
        assert!(out.contains(" = sub nsw i32 %__oxide_na"), "{out}");
        // A constant beyond 32 bits, and a difference that may wrap, stay as they were.
        assert!(out.contains("  %big = icmp sgt i64 %d, 4294967296"), "{out}");
        assert!(out.contains("  %also = icmp sgt i64 %loose, 1024"), "{out}");
        assert_valid_ir("narrow_differences", &out);
        // Without the assumption `cols` has no bound: nothing changes.
        let free = ir.replace("  tail call void @llvm.assume(i1 %small)\n", "");
        assert!(transformed(&free, narrow).0.contains("  %more = icmp sgt i64 %d, 1024"));
    }

    #[test]
    fn without_the_assumption_nothing_narrows() {
        let ir = TRIP.replace("  tail call void @llvm.assume(i1 %small)\n", "");
        let (out, n) = transformed(&ir, narrow);
        assert_eq!(n, 0, "{out}");
    }
}
