//! After `opt`: 64-bit integer arithmetic whose values provably fit 32 bits becomes 32-bit, in
//! the kernels `narrow_copies.rs` split; a narrow copy that gained nothing is dropped.
//!
//! The ranges come from `index_ranges.rs` (the narrow copy's masks bound thread positions and
//! lengths; special registers bound themselves). Let N = [-2^31, 2^31). The rewrite:
//! - An i64 `add/sub/mul/shl/lshr/ashr/udiv/urem/and/or/xor`, `select` or
//!   `umin/umax/smin/smax/usub.sat` whose result and operands all lie in N gets an i32 *twin*
//!   computed from its operands' twins, and the original becomes `sext i32 twin to i64`.
//!   Exact because `sext` maps N one-to-one onto the same values in i64: for add/sub/mul the
//!   i32 result is the true result modulo 2^32, and the true result lies in N (its range was
//!   computed without wrapping), so it is the true result; bitwise operations and `ashr` commute
//!   with `sext`; `shl`/`lshr` by an amount in [0, 31], `udiv`/`urem` and the unsigned min/max
//!   see non-negative operands or, for min/max, the same order (below); `select` picks a twin.
//! - An `icmp` of two i64 values in N compares their twins: signed predicates trivially;
//!   unsigned ones because both widths map N onto their unsigned range in the same order
//!   (non-negatives first, in order, then the negatives, in order).
//! - `and i64 x, C` with 0 <= C < 2^31 and x unbounded: the result depends only on x's low 32
//!   bits, and `add/sub/mul/shl` commute with taking them (arithmetic modulo 2^32), so x's
//!   chain of those is recomputed in i32 from its leaves' low halves.
//! - A twin's operand: a constant as itself; `sext`/`zext nneg` (or a `zext` of a
//!   non-negative value) of an i32 as that i32; another value in N through `trunc`.
//!
//! GEP indices then read `sext i32`, which llc lowers to `mul.wide.s32` like nvcc's `int`
//! indices. Only the kernels whose narrow copy ends up with more 32-bit arithmetic than its
//! wide copy keep both; the others branch to the wide copy unconditionally and lose the
//! narrow copy's blocks (the two inlined bodies are disjoint), so their PTX stays as before.

use super::guarded_loads::each_kernel;
use super::index_ranges::{self, Inst, Kind, Range};
use super::narrow_copies::NARROW_MARKER;
use super::Line;
use std::collections::{HashMap, HashSet};

/// Narrows every split kernel; returns how many kernels changed.
pub(super) fn narrow(lines: &mut Vec<Line>) -> usize {
    each_kernel(lines, |body, _, _| rewrite_kernel(body))
}

/// What [`narrow`] did to one kernel, for the report and the tests.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    NotSplit,
    Kept { narrowed: usize },
    Dropped,
}

fn rewrite_kernel(body: Vec<Line>) -> (Vec<Line>, usize) {
    let (body, outcome) = narrow_kernel(body);
    let changed = usize::from(outcome != Outcome::NotSplit);
    (body, changed)
}

/// The split kernel's branch: the condition's opaque `asm` becomes the identity, then the
/// narrow copy is narrowed or dropped.
pub(super) fn narrow_kernel(mut body: Vec<Line>) -> (Vec<Line>, Outcome) {
    let Some(at) = body.iter().position(|l| l.text.contains(NARROW_MARKER)) else { return (body, Outcome::NotSplit) };
    let Some((out, input)) = asm_parts(&body[at].text) else { return (body, Outcome::NotSplit) };
    body[at].text = format!("  {out} = add i32 {input}, 0");
    let Some((br, narrow, wide)) = branch(&body, &out) else { return (body, Outcome::Kept { narrowed: 0 }) };
    let spans = block_spans(&body);
    let succ = successors(&body, &spans);
    let (from_n, from_w) = (reach(&succ, &narrow), reach(&succ, &wide));
    let plan = plan(&body);
    let useful_in = |only: &HashSet<String>, other: &HashSet<String>| {
        plan.useful
            .iter()
            .filter(|&&i| block_of(&spans, i).is_some_and(|b| only.contains(b) && !other.contains(b)))
            .count()
    };
    let (n, w) = (useful_in(&from_n, &from_w), useful_in(&from_w, &from_n));
    if n > w {
        apply(&mut body, plan);
        return (body, Outcome::Kept { narrowed: n });
    }
    body[br].text = format!("  br label {wide}");
    drop_unreachable(&mut body);
    (body, Outcome::Dropped)
}

/// (`%out`, `%in`) of `%out = call i32 asm "// oxide.narrow...", "=r,r"(i32 %in)`.
fn asm_parts(line: &str) -> Option<(String, String)> {
    let (def, rhs) = line.trim_start().split_once(" = ")?;
    let open = rhs.rfind("(i32 ")?;
    let input = rhs[open + "(i32 ".len()..].split(')').next()?.trim();
    Some((def.to_string(), input.to_string()))
}

/// The line index of `br i1 (icmp ne/eq i32 cond, 0), ...` and its (narrow, wide) targets.
fn branch(body: &[Line], cond: &str) -> Option<(usize, String, String)> {
    let (flag, ne) = body.iter().find_map(|l| {
        let (def, rhs) = l.text.trim_start().split_once(" = ")?;
        let ne = if rhs.starts_with(&format!("icmp ne i32 {cond}, 0")) {
            true
        } else if rhs.starts_with(&format!("icmp eq i32 {cond}, 0")) {
            false
        } else {
            return None;
        };
        Some((def.to_string(), ne))
    })?;
    let head = format!("br i1 {flag}, label ");
    body.iter().enumerate().find_map(|(i, l)| {
        let rest = l.text.trim_start().strip_prefix(&head)?;
        let (t, f) = rest.split_once(", label ")?;
        let (t, f) = (t.trim().to_string(), f.split_whitespace().next()?.trim_end_matches(',').to_string());
        Some(if ne { (i, t, f) } else { (i, f, t) })
    })
}

/// Each block's `%label` (`""` for an unlabelled entry) and line range (label line included).
fn block_spans(body: &[Line]) -> Vec<(String, usize, usize)> {
    let mut out: Vec<(String, usize, usize)> = Vec::new();
    for (i, line) in body.iter().enumerate() {
        let t = &line.text;
        let label = (!t.starts_with(char::is_whitespace) && !t.trim().is_empty())
            .then(|| t.split(';').next().unwrap_or_default().trim_end().strip_suffix(':'))
            .flatten();
        match label {
            Some(l) => out.push((format!("%{l}"), i, i + 1)),
            None if out.is_empty() => out.push((String::new(), 0, i + 1)),
            None => {}
        }
        if let Some(last) = out.last_mut() {
            last.2 = i + 1;
        }
    }
    out
}

fn block_of(spans: &[(String, usize, usize)], line: usize) -> Option<&String> {
    spans.iter().find(|(_, s, e)| (*s..*e).contains(&line)).map(|(l, _, _)| l)
}

/// Each block's successors: the `label %x` operands of its lines (terminators, `switch` cases).
fn successors(body: &[Line], spans: &[(String, usize, usize)]) -> HashMap<String, Vec<String>> {
    let mut out = HashMap::new();
    for (label, s, e) in spans {
        let mut succ = Vec::new();
        for line in &body[*s..*e] {
            let mut rest = line.text.as_str();
            if !rest.starts_with(char::is_whitespace) {
                continue;
            }
            while let Some(at) = rest.find("label %") {
                let name = &rest[at + "label ".len()..];
                let end = 1 + name[1..].bytes().take_while(|b| super::is_ident_byte(*b)).count();
                succ.push(name[..end].to_string());
                rest = &name[end..];
            }
        }
        out.insert(label.clone(), succ);
    }
    out
}

fn reach(succ: &HashMap<String, Vec<String>>, from: &str) -> HashSet<String> {
    let mut seen = HashSet::from([from.to_string()]);
    let mut work = vec![from.to_string()];
    while let Some(b) = work.pop() {
        for s in succ.get(&b).into_iter().flatten() {
            if seen.insert(s.clone()) {
                work.push(s.clone());
            }
        }
    }
    seen
}

/// Removes the blocks the entry no longer reaches, and their incoming entries in the phis left.
fn drop_unreachable(body: &mut Vec<Line>) {
    let spans = block_spans(body);
    let Some(entry) = spans.first().map(|s| s.0.clone()) else { return };
    let live = reach(&successors(body, &spans), &entry);
    let dead: Vec<&(String, usize, usize)> = spans.iter().filter(|s| !live.contains(&s.0)).collect();
    let dead_lines: HashSet<usize> = dead.iter().flat_map(|(_, s, e)| *s..*e).collect();
    let dead_labels: HashSet<&str> = dead.iter().map(|s| s.0.as_str()).collect();
    let mut i = 0;
    body.retain(|_| {
        i += 1;
        !dead_lines.contains(&(i - 1))
    });
    for line in body.iter_mut() {
        if let Some((head, incoming)) = line.text.split_once(" = phi ").map(|(d, r)| {
            let (ty, rest) = super::split_type(r);
            (format!("{d} = phi {ty} "), rest.to_string())
        }) {
            let kept: Vec<&str> = super::split_top(&incoming)
                .into_iter()
                .filter(|e| {
                    let label = e.trim_end_matches(']').rsplit(',').next().unwrap_or_default().trim();
                    !dead_labels.contains(label)
                })
                .collect();
            line.text = format!("{head}{}", kept.join(", "));
        }
    }
}

/// The rewrite of one function: lines to insert, lines to replace, and which rewrites count.
pub(super) struct Plan {
    inserts: Vec<(usize, Vec<String>)>,
    replace: Vec<(usize, String)>,
    /// Line indices of the 32-bit operations that replace 64-bit ones (masks not counted).
    useful: Vec<usize>,
}

const N: Range = (-(1 << 31), (1 << 31) - 1);

fn in_n(r: Option<Range>) -> bool {
    r.is_some_and(|r| r.0 >= N.0 && r.1 <= N.1)
}

struct Planner<'a> {
    ranges: HashMap<String, Range>,
    defs: HashMap<String, Inst>,
    twins: HashMap<String, String>,
    next: usize,
    plan: &'a mut Plan,
}

impl Planner<'_> {
    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%oxn.{}", self.next)
    }

    fn range(&self, arg: &str) -> Option<Range> {
        index_ranges::operand(&self.ranges, arg)
    }

    /// The i32 form of an operand in N, inserting a `trunc` before line `at` where needed.
    fn twin(&mut self, arg: &str, at: usize, out: &mut Vec<String>) -> String {
        if let Ok(c) = arg.parse::<i128>() {
            return c.to_string();
        }
        if arg == "poison" || arg == "undef" {
            return arg.to_string();
        }
        if let Some(t) = self.twins.get(arg) {
            return t.clone();
        }
        let _ = at;
        let t = self.fresh();
        out.push(format!("  {t} = trunc i64 {arg} to i32"));
        t
    }

    /// The low 32 bits of any i64 value, recomputing its `add/sub/mul/shl` chain in i32.
    fn low(&mut self, arg: &str, at: usize, depth: usize, out: &mut Vec<String>) -> String {
        if let Ok(c) = arg.parse::<i128>() {
            return (c as i64 as i32).to_string();
        }
        if in_n(self.range(arg)) || self.twins.contains_key(arg) {
            return self.twin(arg, at, out);
        }
        let def = self.defs.get(arg).cloned();
        if let Some(Inst { kind: Kind::Bin(op), bits: 64, args, .. }) = def.filter(|_| depth < 8) {
            let shift_ok = op != "shl" || args[1].parse::<u32>().is_ok_and(|s| s < 32);
            if matches!(op.as_str(), "add" | "sub" | "mul" | "shl") && shift_ok {
                let a = self.low(&args[0], at, depth + 1, out);
                let b = self.low(&args[1], at, depth + 1, out);
                let t = self.fresh();
                // Not counted: on its own this only recomputes the mask's input.
                out.push(format!("  {t} = {op} i32 {a}, {b}"));
                return t;
            }
        }
        let t = self.fresh();
        out.push(format!("  {t} = trunc i64 {arg} to i32"));
        t
    }

    fn line(&mut self, at: usize, inst: Inst) {
        let mut out = Vec::new();
        let all_in_n = |p: &Planner<'_>| inst.args.iter().all(|a| in_n(p.range(a)));
        match &inst.kind {
            Kind::Cast(op, 32) if inst.bits == 64 => {
                let arg = &inst.args[0];
                let nonneg = self.range(arg).is_some_and(|r| r.0 >= 0);
                if op == "sext" || (op == "zext" && nonneg) {
                    self.twins.insert(inst.def.clone(), arg.clone());
                }
            }
            Kind::Icmp(pred) if inst.bits == 64 && all_in_n(self) => {
                let a = self.twin(&inst.args[0], at, &mut out);
                let b = self.twin(&inst.args[1], at, &mut out);
                self.plan.replace.push((at, format!("  {} = icmp {pred} i32 {a}, {b}", inst.def)));
                self.plan.useful.push(at);
            }
            Kind::Bin(op) if inst.bits == 64 && in_n(self.range(&inst.def)) => {
                let shift = matches!(op.as_str(), "shl" | "lshr" | "ashr");
                let amount_ok = !shift || self.range(&inst.args[1]).is_some_and(|r| r.0 >= 0 && r.1 < 32);
                let t = self.fresh();
                let text = if all_in_n(self) && amount_ok {
                    let a = self.twin(&inst.args[0], at, &mut out);
                    let b = self.twin(&inst.args[1], at, &mut out);
                    if !(op == "and" && inst.args[1].parse::<i64>().is_ok()) {
                        self.plan.useful.push(at);
                    }
                    format!("  {t} = {op} i32 {a}, {b}")
                } else if let Some(c) = mask(op, &inst.args) {
                    let x = self.low(&inst.args[0], at, 0, &mut out);
                    format!("  {t} = and i32 {x}, {c}")
                } else {
                    return;
                };
                out.push(text);
                self.narrowed(at, &inst.def, t, out);
                return;
            }
            Kind::Select(cond) if inst.bits == 64 && in_n(self.range(&inst.def)) && all_in_n(self) => {
                let a = self.twin(&inst.args[0], at, &mut out);
                let b = self.twin(&inst.args[1], at, &mut out);
                let t = self.fresh();
                out.push(format!("  {t} = select i1 {cond}, i32 {a}, i32 {b}"));
                self.plan.useful.push(at);
                self.narrowed(at, &inst.def, t, out);
                return;
            }
            Kind::MinMax(f) if inst.bits == 64 && in_n(self.range(&inst.def)) && all_in_n(self) => {
                let a = self.twin(&inst.args[0], at, &mut out);
                let b = self.twin(&inst.args[1], at, &mut out);
                let t = self.fresh();
                out.push(format!("  {t} = call i32 @llvm.{f}.i32(i32 {a}, i32 {b})"));
                self.plan.useful.push(at);
                self.narrowed(at, &inst.def, t, out);
                return;
            }
            _ => {}
        }
        if !out.is_empty() {
            self.plan.inserts.push((at, out));
        }
    }

    /// Records `def`'s twin `t` (computed by `out`, before line `at`); `def` becomes its `sext`.
    fn narrowed(&mut self, at: usize, def: &str, t: String, out: Vec<String>) {
        self.plan.replace.push((at, format!("  {def} = sext i32 {t} to i64")));
        self.plan.inserts.push((at, out));
        self.twins.insert(def.to_string(), t);
    }
}

/// `C` of `and i64 x, C` with 0 <= C < 2^31.
fn mask(op: &str, args: &[String]) -> Option<i64> {
    let c: i64 = args.get(1)?.parse().ok()?;
    (op == "and" && (0..1 << 31).contains(&c)).then_some(c)
}

/// Plans the rewrite of `body` (see the module docs).
pub(super) fn plan(body: &[Line]) -> Plan {
    let ranges = index_ranges::analyse(body.iter().map(|l| l.text.as_str()));
    let defs: HashMap<String, Inst> =
        body.iter().filter_map(|l| index_ranges::parse(&l.text)).map(|i| (i.def.clone(), i)).collect();
    let mut plan = Plan { inserts: Vec::new(), replace: Vec::new(), useful: Vec::new() };
    let mut p = Planner { ranges, defs, twins: HashMap::new(), next: 0, plan: &mut plan };
    for (at, line) in body.iter().enumerate() {
        if let Some(inst) = index_ranges::parse(&line.text) {
            p.line(at, inst);
        }
    }
    plan
}

/// Applies a plan: replacements in place, then the inserted lines before their line.
fn apply(body: &mut Vec<Line>, plan: Plan) {
    for (at, text) in plan.replace {
        body[at].text = text;
    }
    super::guarded_loads::apply(body, plan.inserts);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(ir: &str) -> Vec<Line> {
        ir.lines().enumerate().map(|(i, t)| Line { no: i + 1, text: t.to_string() }).collect()
    }

    fn text(lines: &[Line]) -> String {
        lines.iter().map(|l| format!("{}\n", l.text)).collect()
    }

    /// An entry choosing between two inlined copies of `y[i] = x[i - 7]` (guarded), as `opt`
    /// leaves a split kernel; the narrow copy's index and length carry the masks.
    fn split_kernel(narrow_index: &str) -> String {
        format!(
            "oxide.entry:\n\
             \x20 %oxide.narrow.out = call i32 asm \"// oxide.narrow\\0A\\09mov.b32 $0, $1;\", \"=r,r\"(i32 %in)\n\
             \x20 %oxide.narrow = icmp ne i32 %oxide.narrow.out, 0\n\
             \x20 br i1 %oxide.narrow, label %n, label %w\n\
             n:\n\
             \x20 %len.n = and i64 %len, 2147483647\n\
             \x20 %p.n = mul i64 %b, %d\n\
             \x20 %i.n = {narrow_index}\n\
             \x20 %j.n = add i64 %i.n, -7\n\
             \x20 %c.n = icmp ult i64 %j.n, %len.n\n\
             \x20 br i1 %c.n, label %ld.n, label %exit\n\
             ld.n:\n\
             \x20 %a.n = getelementptr inbounds float, ptr %x, i64 %j.n\n\
             \x20 br label %exit\n\
             w:\n\
             \x20 %p.w = mul i64 %b, %d\n\
             \x20 %i.w = or i64 %p.w, 0\n\
             \x20 %j.w = add i64 %i.w, -7\n\
             \x20 %c.w = icmp ult i64 %j.w, %len\n\
             \x20 br i1 %c.w, label %ld.w, label %exit\n\
             ld.w:\n\
             \x20 %a.w = getelementptr inbounds float, ptr %x, i64 %j.w\n\
             \x20 br label %exit\n\
             exit:\n\
             \x20 ret void\n"
        )
    }

    #[test]
    fn the_narrow_copy_computes_its_indices_in_32_bits() {
        let (body, outcome) = narrow_kernel(lines(&split_kernel("and i64 %p.n, 1073741823")));
        let out = text(&body);
        // The subtraction and the comparison (the product under the mask only feeds them).
        assert_eq!(outcome, Outcome::Kept { narrowed: 2 }, "{out}");
        // The condition's asm is gone; the index's product is taken modulo 2^32 under the mask.
        assert!(out.contains("  %oxide.narrow.out = add i32 %in, 0\n"), "{out}");
        for want in [
            "  %oxn.2 = trunc i64 %len to i32\n  %oxn.1 = and i32 %oxn.2, 2147483647\n  %len.n = sext i32 %oxn.1 to i64\n",
            "  %oxn.4 = trunc i64 %b to i32\n  %oxn.5 = trunc i64 %d to i32\n  %oxn.6 = mul i32 %oxn.4, %oxn.5\n\
             \x20 %oxn.3 = and i32 %oxn.6, 1073741823\n  %i.n = sext i32 %oxn.3 to i64\n",
            "  %oxn.7 = add i32 %oxn.3, -7\n  %j.n = sext i32 %oxn.7 to i64\n  %c.n = icmp ult i32 %oxn.7, %oxn.1\n",
        ] {
            assert!(out.contains(want), "{want}\n{out}");
        }
        // The wide copy is untouched.
        assert!(out.contains("  %j.w = add i64 %i.w, -7\n  %c.w = icmp ult i64 %j.w, %len\n"), "{out}");
    }

    #[test]
    fn a_narrow_copy_that_gains_nothing_is_dropped() {
        // Without the mask the narrow copy is the wide one: nothing to narrow.
        let (body, outcome) = narrow_kernel(lines(&split_kernel("or i64 %p.n, 0")));
        let out = text(&body);
        assert_eq!(outcome, Outcome::Dropped);
        assert!(out.contains("  br label %w\n"), "{out}");
        assert!(!out.contains("%i.n") && !out.contains("\nn:") && !out.contains("ld.n:"), "{out}");
        assert!(out.contains("w:\n") && out.contains("ld.w:\n") && out.contains("exit:\n"), "{out}");
        assert!(!out.contains("i32 %oxn"), "{out}");
    }

    #[test]
    fn kernels_without_the_branch_are_left_alone() {
        let ir = "start:\n  %a = and i64 %x, 255\n  %b = add i64 %a, 1\n  ret void\n";
        let (body, outcome) = narrow_kernel(lines(ir));
        assert_eq!(outcome, Outcome::NotSplit);
        assert_eq!(text(&body), ir);
    }

    #[test]
    fn only_values_in_range_are_narrowed() {
        let ir = "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n\
                  \x20 %w = zext i32 %t to i64\n\
                  \x20 %big = shl i64 %w, 40\n\
                  \x20 %s = add i64 %w, %big\n\
                  \x20 %u = add i64 %w, %unknown\n\
                  \x20 %k = mul i64 %w, 1024\n\
                  \x20 %c = icmp slt i64 %k, %s\n\
                  \x20 %m = call i64 @llvm.umin.i64(i64 %k, i64 1000)\n";
        let mut body = lines(ir);
        let p = plan(&body);
        apply(&mut body, p);
        let out = text(&body);
        // tid * 1024 fits; tid << 40 and what adds it (or an unknown) do not.
        assert!(out.contains("  %oxn.1 = mul i32 %t, 1024\n  %k = sext i32 %oxn.1 to i64\n"), "{out}");
        assert!(
            out.contains("  %big = shl i64 %w, 40\n  %s = add i64 %w, %big\n  %u = add i64 %w, %unknown\n"),
            "{out}"
        );
        assert!(out.contains("  %c = icmp slt i64 %k, %s\n"), "{out}");
        assert!(
            out.contains("  %oxn.2 = call i32 @llvm.umin.i32(i32 %oxn.1, i32 1000)\n  %m = sext i32 %oxn.2 to i64\n"),
            "{out}"
        );
    }

    /// A kernel as rustc leaves it: `y[i] = x[i - 7]` when in range, `i` the marked thread index;
    /// `store` adds a second, unused use of the index's 64-bit form.
    fn marked_kernel(body_end: &str) -> String {
        format!(
            "target triple = \"nvptx64-nvidia-cuda\"\n\
             define ptx_kernel void @shift(ptr noalias readonly %__oxide_in_x, i64 %__oxide_in_x_len, ptr noalias %__oxide_out_y, i64 %__oxide_out_y_len) unnamed_addr #0 {{\n\
             start:\n\
             \x20 %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n\
             \x20 %c = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n\
             \x20 %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()\n\
             \x20 %tw = zext i32 %t to i64\n  %cw = zext i32 %c to i64\n  %nw = zext i32 %n to i64\n\
             \x20 %p = mul i64 %cw, %nw\n  %g = add i64 %p, %tw\n\
             \x20 %i = call i64 asm \"// oxide.index\\0A\\09mov.b64 ${{0}}, ${{1}};\", \"=&l,l\"(i64 %g) #1\n\
             {body_end}\
             exit:\n  ret void\n}}\n\
             declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\ndeclare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n\
             declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()\n\
             attributes #0 = {{ nounwind }}\nattributes #1 = {{ nounwind memory(none) }}\n"
        )
    }

    const SHIFT: &str = "  %in = icmp ult i64 %i, %__oxide_out_y_len\n  br i1 %in, label %body, label %exit\n\
        body:\n  %j = add i64 %i, -7\n  %ok = icmp ult i64 %j, %__oxide_in_x_len\n  br i1 %ok, label %load, label %exit\n\
        load:\n  %a = getelementptr inbounds float, ptr %__oxide_in_x, i64 %j\n  %v = load float, ptr %a, align 4\n\
        \x20 %b = getelementptr inbounds float, ptr %__oxide_out_y, i64 %i\n  store float %v, ptr %b, align 4\n  br label %exit\n";

    /// The pipeline's steps around the two passes: split, `opt` (as codegen runs it without
    /// libdevice), `after_opt`, then llc and ptxas.
    fn through_pipeline(name: &str, ir: &str) -> crate::ir::tests::TestResult<Option<(String, String)>> {
        let Some(opt) = crate::ir::tests::find_tool("opt-22") else {
            eprintln!("skipped: opt-22 not found on PATH (apt-get install llvm-22)");
            return Ok(None);
        };
        let split = crate::ir::index_copies(ir, true);
        let dir = std::env::temp_dir().join(format!("oxide-narrow-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let (ll, optimized) = (dir.join("in.ll"), dir.join("opt.ll"));
        std::fs::write(&ll, &split)?;
        crate::ir::tests::tool_ok(
            std::process::Command::new(opt)
                .args(["-passes=always-inline,globaldce", "-S", "-o"])
                .arg(&optimized)
                .arg(&ll),
        );
        let (after, _) = crate::ir::after_opt(&std::fs::read_to_string(&optimized)?);
        let _ = std::fs::remove_dir_all(&dir);
        Ok(crate::ir::tests::compile(name, &after)?.map(|ptx| (after, ptx)))
    }

    #[test]
    fn a_split_kernel_compiles_to_a_32_bit_copy_and_a_64_bit_copy() -> crate::ir::tests::TestResult {
        let Some((ir, ptx)) = through_pipeline("kept", &marked_kernel(SHIFT))? else { return Ok(()) };
        assert!(ptx.contains(".visible .entry shift("), "{ptx}");
        assert!(!ptx.contains(".func"), "both copies are inlined:\n{ptx}");
        assert!(!ptx.contains("inline asm"), "no marker is left:\n{ptx}");
        // The narrow copy: 32-bit comparisons and a 32-bit index widened by the address multiply.
        assert!(ptx.contains("mul.wide.s32"), "{ptx}");
        assert!(ptx.contains("setp.") && ptx.contains(".u32"), "{ptx}");
        // The wide copy keeps its 64-bit comparisons.
        assert!(ptx.contains("setp.ge.u64") || ptx.contains("setp.lt.u64"), "{ptx}");
        assert!(ir.contains("icmp ult i32"), "{ir}");
        Ok(())
    }

    #[test]
    fn a_kernel_that_gains_nothing_keeps_one_copy() -> crate::ir::tests::TestResult {
        // The index is only stored: nothing to compute in 32 bits.
        let store = "  store i64 %i, ptr %__oxide_out_y, align 8\n  br label %exit\n";
        let Some((ir, ptx)) = through_pipeline("dropped", &marked_kernel(store))? else { return Ok(()) };
        assert!(ir.contains("br label %oxide.wide.call"), "{ir}");
        assert!(!ir.contains("1073741823") && !ptx.contains("1073741823"), "the narrow copy is gone:\n{ptx}");
        assert_eq!(ptx.matches("st.global.b64").count() + ptx.matches("st.global.u64").count(), 1, "{ptx}");
        Ok(())
    }
}
