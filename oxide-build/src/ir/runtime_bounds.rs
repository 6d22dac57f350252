//! Upper bounds the narrow copy's entry checks at run time, for index arithmetic whose
//! constant range is too wide (`narrow_indices.rs`).
//!
//! A 2-D or 3-D index such as `(z * rows + y) * cols + x` is below 2^31 for every thread of a
//! launch over a small enough array, but its constant range (thread positions below 2^30,
//! shapes below 2^31) is not. Its largest value over the launch, however, is the same
//! expression evaluated at the largest value of each leaf — every operation on the way is
//! non-decreasing in its operands (`add`, `mul`/`shl` of non-negative values, `sub` of a
//! constant lower bound, `lshr`/`udiv` by constants, `and` with a non-negative constant,
//! min/max, `select`, `zext`/`sext`) — and each leaf's largest value is known before any thread
//! runs: a special register's (`tid.x < ntid.x`, `ctaid.x < nctaid.x`), a parameter's (itself).
//! So the entry computes that maximum for every node of the expression (in 64 bits, each node
//! clamped to 2^31 so that no product of two can wrap) and takes the narrow copy only when each
//! is below 2^31. Each node's lower bound is a constant (the same rules, from the leaves' lower
//! bounds); both together put every node in [-2^31, 2^31) whenever the narrow copy runs.
//! Leaves that are neither (loads, phis) end the expression: no bound.

use super::index_ranges::{Inst, Kind, Range};
use std::collections::{HashMap, HashSet};

/// Ranges that hold in the narrow copy unless `over` (computed by `entry`) is true.
pub(super) struct Bounds {
    pub ranges: HashMap<String, Range>,
    pub entry: Vec<String>,
    /// Some node's maximum is 2^31 or more this launch.
    pub over: Option<String>,
}

/// Largest value the narrow copy admits (exclusive of 2^31).
const TOP: i128 = (1 << 31) - 1;
/// Constant upper bounds saturate here (no product of two overflows `i128`).
const HUGE: i128 = 1 << 62;
/// The entry checks at most this many nodes (each costs three uniform instructions).
const MAX_NODES: usize = 48;

#[derive(Clone)]
struct Node {
    lo: i128,
    /// A constant upper bound (loose; at most [`HUGE`]): nodes below 2^31 need no check.
    hi: i128,
    /// The node's largest value as computed in the entry (an i64 value or constant).
    max: String,
    /// Its `max > TOP` flag, or None for a constant maximum checked at compile time.
    flag: Option<String>,
    children: Vec<String>,
}

pub(super) struct Builder<'a> {
    pub defs: &'a HashMap<String, Inst>,
    /// Each defining line, for the special registers' names.
    pub texts: &'a HashMap<String, String>,
    /// Integer parameters of the kernel.
    pub params: &'a HashSet<String>,
    memo: HashMap<String, Option<Node>>,
    entry: Vec<String>,
    next: usize,
}

impl<'a> Builder<'a> {
    pub(super) fn new(
        defs: &'a HashMap<String, Inst>,
        texts: &'a HashMap<String, String>,
        params: &'a HashSet<String>,
    ) -> Self {
        Builder { defs, texts, params, memo: HashMap::new(), entry: Vec::new(), next: 0 }
    }

    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%oxb.{}", self.next)
    }

    /// Emits `max = <op>` and, unless `hi` already bounds it below 2^31, its flag and its
    /// clamp; returns the node.
    fn emit(&mut self, op: String, lo: i128, hi: i128, children: Vec<String>) -> Option<Node> {
        if !(-(1 << 31)..=TOP).contains(&lo) {
            return None;
        }
        let hi = hi.min(HUGE);
        let v = self.fresh();
        self.entry.push(format!("  {v} = {op}"));
        if hi <= TOP {
            return Some(Node { lo, hi, max: v, flag: None, children });
        }
        let (f, c) = (self.fresh(), self.fresh());
        self.entry.push(format!("  {f} = icmp sgt i64 {v}, {TOP}"));
        self.entry.push(format!("  {c} = call i64 @llvm.smin.i64(i64 {v}, i64 {})", TOP + 1));
        Some(Node { lo, hi: TOP, max: c, flag: Some(f), children })
    }

    fn constant(lo: i128, hi: i128) -> Option<Node> {
        (lo >= -(1 << 31) && hi <= TOP).then(|| Node { lo, hi, max: hi.to_string(), flag: None, children: vec![] })
    }

    /// The node of value (or constant) `v`, or None where no bound follows.
    fn node(&mut self, v: &str) -> Option<Node> {
        if let Ok(c) = v.parse::<i128>() {
            return Self::constant(c, c);
        }
        if let Some(n) = self.memo.get(v) {
            return n.clone();
        }
        if self.memo.len() >= MAX_NODES {
            return None;
        }
        let n = self.derive(v);
        self.memo.insert(v.to_string(), n.clone());
        n
    }

    fn derive(&mut self, v: &str) -> Option<Node> {
        if self.params.contains(v) {
            let (op, hi) = match self.texts.get(v).map(String::as_str) {
                Some("i64") => (format!("add i64 {v}, 0"), HUGE),
                Some(ty) => (format!("zext {ty} {v} to i64"), HUGE),
                None => return None,
            };
            return self.emit(op, 0, hi, vec![]);
        }
        let inst = self.defs.get(v)?.clone();
        let kids = inst.args.iter().filter(|a| a.starts_with('%')).cloned().collect::<Vec<_>>();
        match &inst.kind {
            Kind::Known(r) => {
                let text = self.texts.get(v)?.clone();
                let reg = text.split("@llvm.nvvm.read.ptx.sreg.").nth(1).and_then(|r| r.split('(').next());
                let (extent, minus) = match reg {
                    Some(r) if r.starts_with("tid.") => (format!("ntid.{}", &r[4..]), 1),
                    Some(r) if r.starts_with("ctaid.") => (format!("nctaid.{}", &r[6..]), 1),
                    Some(r) if r.starts_with("ntid.") || r.starts_with("nctaid.") => (r.to_string(), 0),
                    _ => return Self::constant(r.0, r.1),
                };
                let raw = self.fresh();
                self.entry.push(format!("  {raw} = call i32 @llvm.nvvm.read.ptx.sreg.{extent}()"));
                let op = match minus {
                    0 => format!("zext i32 {raw} to i64"),
                    _ => {
                        let wide = self.fresh();
                        self.entry.push(format!("  {wide} = zext i32 {raw} to i64"));
                        format!("sub i64 {wide}, {minus}")
                    }
                };
                // The register's own range bounds its extent's: tid.x <= 1023 as ntid.x - 1.
                self.emit(op, r.0, r.1, vec![])
            }
            Kind::Cast(op, _) => {
                let a = self.node(&inst.args[0])?;
                // The node's value is its mathematical value, which `zext` keeps only when
                // non-negative; `sext` always keeps it.
                if op == "trunc" || (op == "zext" && a.lo < 0) {
                    return None;
                }
                Some(Node { children: kids, ..a })
            }
            Kind::Bin(op) => {
                let b_const = inst.args[1].parse::<i128>().ok();
                match op.as_str() {
                    "and" => {
                        // `x & c` with c >= 0 is at most min(x, c) for x >= 0 (`cols as u32`
                        // masks with 2^32 - 1), and at most c whatever x.
                        let c = b_const.filter(|c| *c >= 0)?;
                        match self.node(&inst.args[0]).filter(|a| a.lo >= 0) {
                            Some(a) => {
                                let hi = a.hi.min(c);
                                self.emit(format!("call i64 @llvm.smin.i64(i64 {}, i64 {c})", a.max), 0, hi, kids)
                            }
                            None => Self::constant(0, c),
                        }
                    }
                    "add" | "sub" | "mul" | "shl" | "lshr" | "udiv" => {
                        let a = self.node(&inst.args[0])?;
                        let (lo, hi) = match (op.as_str(), b_const) {
                            ("add", _) => {
                                let b = self.node(&inst.args[1])?;
                                (a.lo + b.lo, a.hi + b.hi)
                            }
                            // max(a - b) = max(a) - min(b): `b` must be a constant.
                            ("sub", Some(c)) => (a.lo - c, a.hi - c),
                            ("mul", _) => {
                                // One factor may be negative (`y - 1` where `y` may be 0): with
                                // b in [lo_b >= 0, TOP], a * b >= lo_a * TOP and
                                // a * b <= max(max_a, 0) * max_b.
                                let b = self.node(&inst.args[1])?;
                                let (x, y) = if a.lo < 0 { (&a, &b) } else { (&b, &a) };
                                if y.lo < 0 {
                                    return None;
                                }
                                let hi = x.hi.clamp(0, HUGE) * y.hi.min(HUGE);
                                if x.lo >= 0 {
                                    (x.lo * y.lo, hi)
                                } else {
                                    let (lo, x_max, y_max) = (x.lo * TOP, x.max.clone(), y.max.clone());
                                    let clamped = self.fresh();
                                    self.entry
                                        .push(format!("  {clamped} = call i64 @llvm.smax.i64(i64 {x_max}, i64 0)"));
                                    return self.emit(format!("mul i64 {clamped}, {y_max}"), lo, hi, kids);
                                }
                            }
                            ("shl", Some(c)) if a.lo >= 0 && (0..32).contains(&c) => (a.lo << c, a.hi.min(HUGE) << c),
                            ("lshr", Some(c)) if a.lo >= 0 && (0..64).contains(&c) => (a.lo >> c, a.hi >> c),
                            ("udiv", Some(c)) if a.lo >= 0 && c >= 1 => (a.lo / c, a.hi / c),
                            _ => return None,
                        };
                        let b = match b_const {
                            Some(c) => c.to_string(),
                            None => self.node(&inst.args[1])?.max,
                        };
                        self.emit(format!("{op} i64 {}, {b}", a.max), lo, hi, kids)
                    }
                    _ => None,
                }
            }
            Kind::Select(_) => {
                let (a, b) = (self.node(&inst.args[0])?, self.node(&inst.args[1])?);
                let (lo, hi) = (a.lo.min(b.lo), a.hi.max(b.hi));
                self.emit(format!("call i64 @llvm.smax.i64(i64 {}, i64 {})", a.max, b.max), lo, hi, kids)
            }
            Kind::MinMax(f) => {
                let (a, b) = (self.node(&inst.args[0])?, self.node(&inst.args[1])?);
                let nonneg = a.lo >= 0 && b.lo >= 0;
                let (g, lo, hi) = match f.as_str() {
                    "smin" => ("smin", a.lo.min(b.lo), a.hi.min(b.hi)),
                    "umin" if nonneg => ("smin", a.lo.min(b.lo), a.hi.min(b.hi)),
                    "smax" => ("smax", a.lo.max(b.lo), a.hi.max(b.hi)),
                    "umax" if nonneg => ("smax", a.lo.max(b.lo), a.hi.max(b.hi)),
                    _ => return None,
                };
                self.emit(format!("call i64 @llvm.{g}.i64(i64 {}, i64 {})", a.max, b.max), lo, hi, kids)
            }
            Kind::Icmp(_) | Kind::Overflow(_) => None,
        }
    }

    /// Bounds for `roots` (values the narrow copy compares or indexes with), with every node
    /// of their expressions.
    pub(super) fn bounds(mut self, roots: &[String]) -> Bounds {
        let mut ranges = HashMap::new();
        let mut flags = Vec::new();
        let mut seen = HashSet::new();
        for root in roots {
            if self.node(root).is_none() {
                continue;
            }
            let mut work = vec![root.clone()];
            while let Some(v) = work.pop() {
                if !seen.insert(v.clone()) {
                    continue;
                }
                let Some(Some(n)) = self.memo.get(&v).cloned() else { continue };
                ranges.insert(v.clone(), (n.lo, n.hi.min(TOP)));
                flags.extend(n.flag.clone().filter(|f| !flags.contains(f)));
                work.extend(n.children.iter().cloned());
            }
        }
        if flags.is_empty() {
            return Bounds { ranges, entry: Vec::new(), over: None };
        }
        let mut entry = self.entry;
        let mut any = flags[0].clone();
        for f in &flags[1..] {
            let t = format!("%oxb.{}", self.next + 1);
            self.next += 1;
            entry.push(format!("  {t} = or i1 {any}, {f}"));
            any = t;
        }
        Bounds { ranges, entry, over: Some(any) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::index_ranges::parse;

    fn bounds_of(body: &str, params: &[(&str, &str)], roots: &[&str]) -> Bounds {
        let mut defs = HashMap::new();
        let mut texts: HashMap<String, String> = params.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
        for line in body.lines() {
            if let Some(i) = parse(line) {
                texts.insert(i.def.clone(), line.to_string());
                defs.insert(i.def.clone(), i);
            }
        }
        let names: HashSet<String> = params.iter().map(|(n, _)| n.to_string()).collect();
        let roots: Vec<String> = roots.iter().map(|r| r.to_string()).collect();
        Builder::new(&defs, &texts, &names).bounds(&roots)
    }

    /// `(y - 1) * cols + x` of a 2-D launch: every node bounded, the maxima from `ntid.y`,
    /// `nctaid.y` and `cols`.
    const ROW_INDEX: &str = "  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()\n\
        \x20 %cy = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()\n\
        \x20 %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()\n\
        \x20 %p = mul nuw nsw i32 %cy, %ny\n  %y32 = add nuw nsw i32 %p, %ty\n\
        \x20 %y = zext nneg i32 %y32 to i64\n  %ym1 = add nsw i64 %y, -1\n\
        \x20 %c = and i64 %cols, 2147483647\n  %row = mul i64 %ym1, %c\n  %i = add i64 %row, %x\n\
        \x20 %x = zext i32 %tx to i64\n  %l = load i64, ptr %q\n  %j = add i64 %row, %l\n";

    #[test]
    fn a_row_index_is_bounded_by_the_launch_and_the_shape() {
        let b = bounds_of(ROW_INDEX, &[("%cols", "i64")], &["%row", "%j"]);
        let top = TOP;
        // y's own bound is static (ctaid.y < 65535, ntid.y <= 1024): no check needed for it.
        assert_eq!(b.ranges["%ym1"], (-1, 65534 * 1024 + 1023 - 1));
        assert_eq!(b.ranges["%c"], (0, top));
        assert_eq!(b.ranges["%row"], (-top, top), "a negative factor bounds the product below by -TOP");
        assert!(!b.ranges.contains_key("%j"), "a loaded leaf has no bound");
        let entry = b.entry.join("\n");
        for want in ["@llvm.nvvm.read.ptx.sreg.ntid.y()", "@llvm.nvvm.read.ptx.sreg.nctaid.y()", "%cols"] {
            assert!(entry.contains(want), "{want}:\n{entry}");
        }
        // The maximum of `y - 1` may be negative (one row): clamped to 0 before the product.
        assert!(entry.contains("@llvm.smax.i64("), "{entry}");
        assert!(b.over.is_some());
    }

    #[test]
    fn a_product_of_two_parameters_is_checked() {
        // Each parameter may be anything up to 2^64: the product's constant bound saturates
        // instead of wrapping, so its maximum is checked at run time.
        let b = bounds_of("  %p = mul i64 %a, %b\n", &[("%a", "i64"), ("%b", "i64")], &["%p"]);
        assert_eq!(b.ranges["%p"], (0, TOP));
        let entry = b.entry.join("\n");
        assert_eq!(entry.matches("icmp sgt i64").count(), 3, "a, b and a * b:\n{entry}");
    }

    #[test]
    fn roots_without_a_bound_cost_nothing() {
        let b = bounds_of("  %l = load i64, ptr %q\n  %j = add i64 %l, 1\n", &[], &["%j"]);
        assert!(b.ranges.is_empty() && b.over.is_none() && b.entry.is_empty());
    }
}
