//! After `opt`: 64-bit integer arithmetic whose values provably fit 32 bits becomes 32-bit, in
//! the kernels `narrow_copies.rs` split; a narrow copy that gained nothing is dropped.
//!
//! The ranges come from `index_ranges.rs` (the narrow copy's masks bound thread positions and
//! lengths; special registers bound themselves) and, for the values the narrow copy compares or
//! indexes with whose constant range is too wide (a row index `y * cols + x`), from
//! `runtime_bounds.rs`: the entry computes their largest value over the launch and takes the
//! narrow copy only when it is below 2^31, so those ranges hold in the narrow copy's lines only.
//! Let N = [-2^31, 2^31). The rewrite:
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
//! - The overflow bit of `checked_add`/`checked_mul` (`@llvm.u{add,mul}.with.overflow`) of
//!   non-negative operands whose result lies in N is `false`: the result is its true value.
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
use super::runtime_bounds;
use super::Line;
use std::collections::{HashMap, HashSet};

/// Narrows every split kernel; returns how many kernels changed.
pub(super) fn narrow(lines: &mut Vec<Line>) -> usize {
    each_kernel(lines, |body, define, _| rewrite_kernel(body, define))
}

/// What [`narrow`] did to one kernel, for the report and the tests.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    NotSplit,
    Kept { narrowed: usize },
    Dropped,
}

fn rewrite_kernel(body: Vec<Line>, define: &str) -> (Vec<Line>, usize) {
    let (body, outcome) = narrow_kernel(body, &int_params(define));
    let changed = usize::from(outcome != Outcome::NotSplit);
    (body, changed)
}

/// The split kernel's branch: the condition's opaque `asm` becomes the identity, then the
/// narrow copy is narrowed or dropped.
pub(super) fn narrow_kernel(mut body: Vec<Line>, params: &HashMap<String, String>) -> (Vec<Line>, Outcome) {
    let Some(at) = body.iter().position(|l| l.text.contains(NARROW_MARKER)) else { return (body, Outcome::NotSplit) };
    let Some((out, input)) = asm_parts(&body[at].text) else { return (body, Outcome::NotSplit) };
    body[at].text = format!("  {out} = add i32 {input}, 0");
    let Some((br, narrow, wide, ne)) = branch(&body, &out) else { return (body, Outcome::Kept { narrowed: 0 }) };
    let spans = block_spans(&body);
    let succ = successors(&body, &spans);
    let (from_n, from_w) = (reach(&succ, &narrow), reach(&succ, &wide));
    let only = |i: usize, a: &HashSet<String>, b: &HashSet<String>| {
        block_of(&spans, i).is_some_and(|blk| a.contains(blk) && !b.contains(blk))
    };
    let narrow_only: Vec<bool> = (0..body.len()).map(|i| only(i, &from_n, &from_w)).collect();
    let bounds = runtime_bounds(&body, params, &narrow_only);
    let mut plan = plan(&body, &bounds.ranges, &narrow_only);
    let n = plan.useful.iter().filter(|&&i| narrow_only[i]).count();
    let w = plan.useful.iter().filter(|&&i| only(i, &from_w, &from_n)).count();
    if n > w {
        if let (true, Some(over)) = (plan.used_bounds, &bounds.over) {
            // The narrow copy only where every checked maximum is below 2^31.
            let flag = body[br].text.trim_start()["br i1 ".len()..].split(',').next().unwrap_or_default().to_string();
            let mut entry = bounds.entry.clone();
            // Named after the copy its true edge takes.
            let cond = if ne { "%oxb.narrow" } else { "%oxb.wide" };
            if ne {
                entry.push(format!("  %oxb.fits = xor i1 {over}, true"));
                entry.push(format!("  {cond} = and i1 {flag}, %oxb.fits"));
            } else {
                entry.push(format!("  {cond} = or i1 {flag}, {over}"));
            }
            plan.inserts.push((br, entry));
            let (t, f) = if ne { (&narrow, &wide) } else { (&wide, &narrow) };
            plan.replace.push((br, format!("  br i1 {cond}, label {t}, label {f}")));
        }
        apply(&mut body, plan);
        return (body, Outcome::Kept { narrowed: n });
    }
    body[br].text = format!("  br label {wide}");
    drop_unreachable(&mut body);
    (body, Outcome::Dropped)
}

/// The kernel's integer parameters and their types.
fn int_params(define: &str) -> HashMap<String, String> {
    let (Some(open), Some(close)) = (define.find('('), super::find_params_close(define)) else { return HashMap::new() };
    super::split_top(&define[open + 1..close])
        .into_iter()
        .filter_map(|p| {
            let ty = p.split_whitespace().next()?;
            let name = p.split_whitespace().last()?;
            (matches!(ty, "i64" | "i32") && name.starts_with('%')).then(|| (name.to_string(), ty.to_string()))
        })
        .collect()
}

/// Runtime-checked ranges (`runtime_bounds.rs`) for the values the narrow copy compares or
/// indexes with whose constant range is too wide.
fn runtime_bounds(body: &[Line], params: &HashMap<String, String>, narrow_only: &[bool]) -> runtime_bounds::Bounds {
    let consts = index_ranges::analyse(body.iter().map(|l| l.text.as_str()));
    let mut defs = HashMap::new();
    let mut texts: HashMap<String, String> = params.clone();
    for (line, inst) in body.iter().zip(index_ranges::parse_body(body.iter().map(|l| l.text.as_str()))) {
        if let Some(inst) = inst {
            texts.insert(inst.def.clone(), line.text.clone());
            defs.insert(inst.def.clone(), inst);
        }
    }
    let mut roots = Vec::new();
    for (i, line) in body.iter().enumerate().filter(|(i, _)| narrow_only[*i]) {
        let used: Vec<String> = if let Some(inst) = index_ranges::parse(&line.text) {
            match inst.kind {
                Kind::Icmp(_) if inst.bits == 64 => inst.args,
                _ => continue,
            }
        } else if line.text.contains(" = getelementptr ") {
            line.text.rsplit(", i64 ").next().map(|v| vec![v.trim().to_string()]).unwrap_or_default()
        } else {
            continue;
        };
        let _ = i;
        for v in used {
            let wide = defs.get(&v).is_some_and(|d| d.bits == 64) && !in_n(index_ranges::operand(&consts, &v));
            if wide && !roots.contains(&v) {
                roots.push(v);
            }
        }
    }
    let params: HashSet<String> = params.keys().cloned().collect();
    runtime_bounds::Builder::new(&defs, &texts, &params).bounds(&roots)
}

/// (`%out`, `%in`) of `%out = call i32 asm "// oxide.narrow...", "=r,r"(i32 %in)`.
fn asm_parts(line: &str) -> Option<(String, String)> {
    let (def, rhs) = line.trim_start().split_once(" = ")?;
    let open = rhs.rfind("(i32 ")?;
    let input = rhs[open + "(i32 ".len()..].split(')').next()?.trim();
    Some((def.to_string(), input.to_string()))
}

/// The line index of `br i1 (icmp ne/eq i32 cond, 0), ...`, its (narrow, wide) targets, and
/// whether the flag is `ne` (true for the narrow copy).
fn branch(body: &[Line], cond: &str) -> Option<(usize, String, String, bool)> {
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
        Some(if ne { (i, t, f, true) } else { (i, f, t, false) })
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
    /// Some rewrite relies on a runtime-checked range.
    used_bounds: bool,
}

const N: Range = (-(1 << 31), (1 << 31) - 1);

fn in_n(r: Option<Range>) -> bool {
    r.is_some_and(|r| r.0 >= N.0 && r.1 <= N.1)
}

struct Planner<'a> {
    ranges: HashMap<String, Range>,
    /// Runtime-checked ranges, which hold in the narrow copy only.
    bounded: &'a HashMap<String, Range>,
    /// The line being planned is in the narrow copy.
    in_narrow: bool,
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

    fn range(&mut self, arg: &str) -> Option<Range> {
        let constant = index_ranges::operand(&self.ranges, arg);
        if in_n(constant) || !self.in_narrow {
            return constant;
        }
        let bounded = self.bounded.get(arg).copied();
        self.plan.used_bounds |= bounded.is_some();
        bounded.or(constant)
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
        let all_in_n = |p: &mut Planner<'_>| inst.args.iter().all(|a| in_n(p.range(a)));
        match &inst.kind {
            Kind::Cast(op, 32) if inst.bits == 64 => {
                let arg = &inst.args[0];
                let nonneg = self.range(arg).is_some_and(|r| r.0 >= 0);
                if op == "sext" || (op == "zext" && nonneg) {
                    self.twins.insert(inst.def.clone(), arg.clone());
                }
            }
            // Unsigned operands whose result fits 31 bits cannot overflow 64.
            Kind::Overflow(op) if inst.args[..2].iter().all(|a| in_n(self.range(a))) => {
                let (a, b) = (self.range(&inst.args[0]), self.range(&inst.args[1]));
                let nonneg = a.is_some_and(|r| r.0 >= 0) && b.is_some_and(|r| r.0 >= 0);
                // The result's range: from the operands', or the call's value's (a runtime bound).
                let value = inst.args.get(2).and_then(|v| self.range(v));
                if nonneg && (in_n(index_ranges::bin(op, a, b)) || in_n(value)) {
                    self.plan.replace.push((at, format!("  {} = icmp ne i32 0, 0", inst.def)));
                    self.plan.useful.push(at);
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

/// Plans the rewrite of `body` (see the module docs); `bounded` holds in the lines marked
/// `narrow`.
pub(super) fn plan(body: &[Line], bounded: &HashMap<String, Range>, narrow: &[bool]) -> Plan {
    let ranges = index_ranges::analyse(body.iter().map(|l| l.text.as_str()));
    let insts = index_ranges::parse_body(body.iter().map(|l| l.text.as_str()));
    let defs: HashMap<String, Inst> = insts.iter().flatten().map(|i| (i.def.clone(), i.clone())).collect();
    let mut plan = Plan { inserts: Vec::new(), replace: Vec::new(), useful: Vec::new(), used_bounds: false };
    let mut p = Planner { ranges, bounded, in_narrow: false, defs, twins: HashMap::new(), next: 0, plan: &mut plan };
    for (at, inst) in insts.into_iter().enumerate() {
        p.in_narrow = narrow.get(at).copied().unwrap_or(false);
        if let Some(inst) = inst {
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

    fn narrow_kernel_of(body: Vec<Line>) -> (Vec<Line>, Outcome) {
        narrow_kernel(body, &HashMap::new())
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
        let (body, outcome) = narrow_kernel_of(lines(&split_kernel("and i64 %p.n, 1073741823")));
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
        let (body, outcome) = narrow_kernel_of(lines(&split_kernel("or i64 %p.n, 0")));
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
        let (body, outcome) = narrow_kernel_of(lines(ir));
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
        let p = plan(&body, &HashMap::new(), &[]);
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

    /// `out[y * cols + x] = x[y * cols + x]`, a 2-D launch over `cols` columns (a shape
    /// parameter) and the rows `len / cols` checks.
    const ROWS: &str = "target triple = \"nvptx64-nvidia-cuda\"\n\
        define ptx_kernel void @rows(ptr noalias readonly %__oxide_in_x, i64 %__oxide_in_x_len, ptr noalias %__oxide_out_o, i64 %__oxide_out_o_len, i64 %__oxide_shape0_o) unnamed_addr #0 {\n\
        start:\n\
        \x20 %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %cx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n\
        \x20 %nx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()\n  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()\n\
        \x20 %cy = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()\n  %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()\n\
        \x20 %px = mul nuw nsw i32 %cx, %nx\n  %gx = add nuw nsw i32 %px, %tx\n  %wx = zext i32 %gx to i64\n\
        \x20 %py = mul nuw nsw i32 %cy, %ny\n  %gy = add nuw nsw i32 %py, %ty\n  %wy = zext i32 %gy to i64\n\
        \x20 %x = call i64 asm \"// oxide.index\\0A\\09mov.b64 ${0}, ${1};\", \"=&l,l\"(i64 %wx) #1\n\
        \x20 %y = call i64 asm \"// oxide.index\\0A\\09mov.b64 ${0}, ${1};\", \"=&l,l\"(i64 %wy) #1\n\
        \x20 %in = icmp ult i64 %x, %__oxide_shape0_o\n  br i1 %in, label %row, label %exit\n\
        row:\n  %r = mul i64 %y, %__oxide_shape0_o\n  %i = add i64 %r, %x\n\
        \x20 %ok = icmp ult i64 %i, %__oxide_in_x_len\n  br i1 %ok, label %load, label %exit\n\
        load:\n  %a = getelementptr inbounds float, ptr %__oxide_in_x, i64 %i\n  %v = load float, ptr %a, align 4\n\
        \x20 %b = getelementptr inbounds float, ptr %__oxide_out_o, i64 %i\n  store float %v, ptr %b, align 4\n  br label %exit\n\
        exit:\n  ret void\n}\n\
        attributes #0 = { nounwind }\nattributes #1 = { nounwind memory(none) }\n";

    #[test]
    fn a_2d_index_is_narrowed_under_a_runtime_bound() -> crate::ir::tests::TestResult {
        let Some((ir, ptx)) = through_pipeline("rows", ROWS)? else { return Ok(()) };
        // The entry checks the row index's largest value: (nctaid.y * ntid.y - 1) * cols + ...
        assert!(ir.contains("%oxb.narrow = and i1"), "{ir}");
        assert!(ir.contains("@llvm.nvvm.read.ptx.sreg.nctaid.y()"), "{ir}");
        // ... and the narrow copy compares the index in 32 bits.
        assert!(ir.contains("= icmp ult i32"), "{ir}");
        assert!(ptx.contains("mul.wide.s32") || ptx.contains("mul.wide.u32"), "{ptx}");
        assert!(ptx.contains("setp.ge.u64") || ptx.contains("setp.lt.u64"), "the wide copy stays:\n{ptx}");
        Ok(())
    }
}
