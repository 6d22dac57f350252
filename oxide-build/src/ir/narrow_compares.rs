//! Compares of 64-bit values whose high halves are zero made on the low halves (after `opt`,
//! before `llc`).
//!
//! ptxas compares 64-bit integers in two instructions, `ISETP` on the low halves and
//! `ISETP.EX` on the high ones, even where the high halves are known zero: xent_rows' unrolled
//! remainder tests `and i64 %n, 7` against 1 to 6 and pays an `ISETP.EX ... RZ, RZ` for each,
//! and every loop whose counter LLVM keeps in `i64` pays one per exit test. nvcc's twins count
//! in `int`. A value fits in 32 bits here when it is
//! - a constant in `0..2^32`, or the zero extension of at most 32 bits;
//! - an `and` with an operand that fits, a `urem` by one (or of one), a `udiv` or `lshr` of one,
//!   an `lshr` by 32 or more, `umin` with one, `ctpop`/`ctlz`/`cttz`;
//! - a `select` or `phi` of values that fit (around a loop too: each value the phi takes then
//!   fits if the ones before it did).
//!
//! A compare of two such values (`eq`, `ne` and the orders) becomes the same compare of their
//! `trunc`s, unsigned: both are non-negative, where signed and unsigned orders agree. Nothing
//! is assumed about the launch: only what the instructions themselves show.

use super::guarded_loads::each_kernel;
use super::versioned_checks::call_args;
use super::{definitions, split_top, Line};
use std::collections::HashMap;

/// Rewrites every qualifying compare of every kernel; returns how many.
pub(super) fn narrow(lines: &mut Vec<Line>) -> usize {
    each_kernel(lines, |body, _, first| narrow_function(body, first))
}

/// Values followed at most this deep from a compare's operand.
const DEPTH: usize = 12;

fn narrow_function(body: Vec<Line>, first: usize) -> (Vec<Line>, usize) {
    let defs = definitions(&body);
    let fits = Fits { body: &body, defs: &defs };
    let mut made: HashMap<usize, Vec<String>> = HashMap::new();
    for (i, line) in body.iter().enumerate() {
        let Some((name, pred, a, b)) = compare(&line.text) else { continue };
        if constant(a) && constant(b)
            || !fits.value(a, &mut Vec::new(), DEPTH)
            || !fits.value(b, &mut Vec::new(), DEPTH)
        {
            continue;
        }
        let id = first + made.len();
        let mut lines = Vec::new();
        let mut low = |v: &str, side: &str| {
            if constant(v) {
                return v.to_string();
            }
            let t = format!("%__oxide_c{id}{side}");
            lines.push(format!("  {t} = trunc i64 {v} to i32"));
            t
        };
        let (a, b) = (low(a, "a"), low(b, "b"));
        lines.push(format!("  {name} = icmp {pred} i32 {a}, {b}"));
        made.insert(i, lines);
    }
    let n = made.len();
    let mut out = Vec::with_capacity(body.len() + 2 * n);
    for (i, line) in body.into_iter().enumerate() {
        match made.remove(&i) {
            Some(lines) => out.extend(lines.into_iter().map(|text| Line { no: line.no, text })),
            None => out.push(line),
        }
    }
    (out, n)
}

/// `%c = icmp [samesign] PRED i64 A, B` as its name, the unsigned predicate and the operands
/// (the unsigned order is the signed one for the non-negative operands both passes allow).
pub(super) fn compare(text: &str) -> Option<(&str, &'static str, &str, &str)> {
    let (lhs, rhs) = text.split_once(" = ")?;
    let rest = rhs.trim().strip_prefix("icmp ")?;
    let rest = rest.strip_prefix("samesign ").unwrap_or(rest);
    let (pred, rest) = rest.split_once(' ')?;
    let pred = match pred {
        "eq" => "eq",
        "ne" => "ne",
        "ult" | "slt" => "ult",
        "ule" | "sle" => "ule",
        "ugt" | "sgt" => "ugt",
        "uge" | "sge" => "uge",
        _ => return None,
    };
    let (a, b) = rest.strip_prefix("i64 ")?.split_once(", ")?;
    Some((lhs.trim(), pred, a.trim(), b.trim()))
}

/// An integer constant in `0..2^32`.
pub(super) fn constant(v: &str) -> bool {
    v.parse::<i64>().is_ok_and(|c| (0..1 << 32).contains(&c))
}

struct Fits<'a> {
    body: &'a [Line],
    defs: &'a HashMap<String, usize>,
}

impl Fits<'_> {
    /// Whether `v` is below 2^32 wherever it is used. `around` holds the phis being decided:
    /// inside their own cycle they are taken to fit (induction over the values they take).
    fn value(&self, v: &str, around: &mut Vec<String>, depth: usize) -> bool {
        if constant(v) {
            return true;
        }
        if around.iter().any(|p| p == v) {
            return true;
        }
        let Some(&d) = self.defs.get(v).filter(|_| depth > 0) else { return false };
        let Some((_, rhs)) = self.body[d].text.split_once(" = ") else { return false };
        let rhs = rhs.split(", !").next().unwrap_or(rhs).trim();
        let (op, rest) = rhs.split_once(' ').unwrap_or((rhs, ""));
        let rest = strip_flags(rest);
        let depth = depth - 1;
        match op {
            "zext" => {
                let from = rest.split_whitespace().next().unwrap_or("");
                super::int_bits(from).is_some_and(|b| b <= 32) || from == "i1"
            }
            "and" | "urem" | "udiv" | "lshr" => {
                let Some((a, b)) = rest.strip_prefix("i64 ").and_then(|r| r.split_once(", ")) else { return false };
                let (a, b) = (a.trim(), b.trim());
                match op {
                    "and" | "urem" => self.value(a, around, depth) || self.value(b, around, depth),
                    "lshr" => b.parse::<u32>().is_ok_and(|s| (32..64).contains(&s)) || self.value(a, around, depth),
                    _ => self.value(a, around, depth),
                }
            }
            "select" => {
                let parts = split_top(rest);
                let [_, a, b] = parts.as_slice() else { return false };
                let (Some(a), Some(b)) = (a.trim().strip_prefix("i64 "), b.trim().strip_prefix("i64 ")) else {
                    return false;
                };
                self.value(a.trim(), around, depth) && self.value(b.trim(), around, depth)
            }
            "phi" => {
                let Some(incoming) = rest.strip_prefix("i64 ") else { return false };
                around.push(v.to_string());
                let all = split_top(incoming).iter().all(|pair| {
                    let value = pair.trim().trim_start_matches('[').split(',').next().unwrap_or("").trim();
                    self.value(value, around, depth)
                });
                around.pop();
                all
            }
            "call" | "tail" => {
                if ["@llvm.ctpop.i64(", "@llvm.ctlz.i64(", "@llvm.cttz.i64("].iter().any(|f| rhs.contains(f)) {
                    return true;
                }
                rhs.contains("@llvm.umin.i64(")
                    && call_args(rhs)
                        .is_some_and(|(a, b)| self.value(&a, around, depth) || self.value(&b, around, depth))
            }
            _ => false,
        }
    }
}

fn strip_flags(mut s: &str) -> &str {
    loop {
        let t = s.trim_start();
        match ["nuw ", "nsw ", "nneg ", "exact ", "disjoint "].iter().find_map(|f| t.strip_prefix(f)) {
            Some(rest) => s = rest,
            None => return t,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::tests::{assert_valid_ir, transformed};

    /// An unrolled remainder's count (`and` with 7) tested against constants, a loop counter
    /// kept below 256 by an `and`, and compares that must stay wide: a pointer distance, a
    /// counter that may pass 2^32, a constant past 2^32.
    const LOOPS: &str = "define ptx_kernel void @k(i64 %d, i32 %n32, ptr %out) {
start:
  %n = zext i32 %n32 to i64
  %rem = and i64 %d, 7
  %one = icmp eq i64 %rem, 1
  %many = icmp ult i64 %d, 7168
  %big = icmp ult i64 %rem, 4294967296
  br label %loop

loop:
  %i = phi i64 [ 0, %start ], [ %next, %loop ]
  %w = phi i64 [ 0, %start ], [ %wide, %loop ]
  %step = add i64 %i, 1
  %next = and i64 %step, 255
  %wide = add i64 %w, 1
  %more = icmp samesign slt i64 %i, %n
  %far = icmp ult i64 %w, %n
  br i1 %more, label %loop, label %exit

exit:
  store i1 %one, ptr %out, align 1
  store i1 %many, ptr %out, align 1
  store i1 %big, ptr %out, align 1
  store i1 %far, ptr %out, align 1
  ret void
}
";

    #[test]
    fn compares_of_values_below_2_32_use_their_low_halves() {
        let (out, n) = transformed(LOOPS, narrow);
        assert_eq!(n, 2, "{out}");
        assert_valid_ir("narrow_compares", &out);
        for want in [
            "  %__oxide_c0a = trunc i64 %rem to i32\n  %one = icmp eq i32 %__oxide_c0a, 1\n",
            // The phi fits: every value it takes is 0 or an `and` with 255. A signed order of
            // non-negative values is the unsigned one.
            "  %__oxide_c1a = trunc i64 %i to i32\n  %__oxide_c1b = trunc i64 %n to i32\n  %more = icmp ult i32 %__oxide_c1a, %__oxide_c1b\n",
        ] {
            assert!(out.contains(want), "{want}\n{out}");
        }
        for kept in [
            "%many = icmp ult i64 %d, 7168",
            "%big = icmp ult i64 %rem, 4294967296",
            // `w` counts up without a bound: it may pass 2^32.
            "%far = icmp ult i64 %w, %n",
        ] {
            assert!(out.contains(kept), "{kept}\n{out}");
        }
    }

    #[test]
    fn shifts_selects_and_bit_counts_fit() {
        let ir = LOOPS
            .replace("%rem = and i64 %d, 7", "%hi = lshr i64 %d, 40\n  %pc = tail call i64 @llvm.ctpop.i64(i64 %d)\n  %rem = select i1 true, i64 %hi, i64 %pc")
            .replace("define ptx_kernel", "declare i64 @llvm.ctpop.i64(i64)\n\ndefine ptx_kernel");
        let (out, n) = transformed(&ir, narrow);
        assert_eq!(n, 2, "{out}");
        assert!(out.contains("%one = icmp eq i32 %__oxide_c0a, 1"), "{out}");
        // A shift by less than 32 of a value that may not fit may not fit either.
        let (out, n) = transformed(&ir.replace("lshr i64 %d, 40", "lshr i64 %d, 31"), narrow);
        assert_eq!(n, 1, "{out}");
        assert!(out.contains("%one = icmp eq i64 %rem, 1"), "{out}");
    }
}
