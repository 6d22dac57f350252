//! Interval analysis of a function's integer SSA values, for `narrow_indices.rs`.
//!
//! One pass in text order: an operand not yet seen (a loop's back edge, or a value defined in
//! a block printed later) is unknown, so loops stay 64-bit and nothing needs a fixpoint. Every
//! range is the exact set of mathematical values the instruction can produce, computed in
//! `i128` from its operands' ranges; a rule that would leave [`LIMIT`] (far inside the 64-bit
//! range, so nothing computed wraps) or the result width's signed range gives up (unknown).

use super::{skip_group, split_top, split_type};
use std::collections::HashMap;

/// Ranges are closed intervals `[lo, hi]` of signed values.
pub(super) type Range = (i128, i128);

/// Bounds beyond which a range is given up.
const LIMIT: i128 = 1 << 62;

/// One parsed instruction, for the integer operations the analysis and the rewrite know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Inst {
    /// `%name` it defines.
    pub def: String,
    pub kind: Kind,
    /// Width of the result (of the compared operands, for `icmp`).
    pub bits: u32,
    /// Integer operands as written (`%x`, `-7`, `poison`).
    pub args: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Kind {
    /// `add`, `sub`, `mul`, `shl`, `lshr`, `ashr`, `udiv`, `urem`, `and`, `or`, `xor`.
    Bin(String),
    /// `zext` / `sext` / `trunc` from `from` bits.
    Cast(String, u32),
    /// `icmp <pred>`; `text_pred` is the predicate with any `samesign` flag dropped.
    Icmp(String),
    /// `select i1 %c, iN a, iN b`: args are the two values; `cond` the condition.
    Select(String),
    /// `@llvm.{umin,umax,smin,smax,usub.sat}.iN`.
    MinMax(String),
    /// A call with a known result range (special registers, `range(...)`).
    Known(Range),
    /// The overflow bit of `@llvm.u{add,mul}.with.overflow` (`Bin` is its value).
    Overflow(String),
}

/// Parses `line` if it is one of the integer instructions above.
pub(super) fn parse(line: &str) -> Option<Inst> {
    let t = line.trim_start();
    if !line.starts_with(char::is_whitespace) || !t.starts_with('%') {
        return None;
    }
    let (def, rhs) = t.split_once(" = ")?;
    let code = rhs.split(", !").next()?.trim_end();
    let mut words = code.split_whitespace();
    let op = words.next()?;
    let def = def.to_string();
    let after_op = code[op.len()..].trim_start();
    match op {
        "add" | "sub" | "mul" | "shl" | "lshr" | "ashr" | "udiv" | "urem" | "and" | "or" | "xor" => {
            let rest = skip_flags(after_op);
            let (ty, operands) = split_type(rest);
            let bits = int_type(ty)?;
            let args: Vec<String> = split_top(operands).into_iter().map(str::to_string).collect();
            (args.len() == 2).then_some(Inst { def, kind: Kind::Bin(op.to_string()), bits, args })
        }
        "zext" | "sext" | "trunc" => {
            let rest = skip_flags(after_op);
            let (from, rest) = split_type(rest);
            let from = int_type(from)?;
            let (value, to) = rest.split_once(" to ")?;
            let bits = int_type(to.trim())?;
            Some(Inst { def, kind: Kind::Cast(op.to_string(), from), bits, args: vec![value.trim().to_string()] })
        }
        "icmp" => {
            let rest = after_op.strip_prefix("samesign ").unwrap_or(after_op);
            let (pred, rest) = rest.split_once(' ')?;
            let (ty, operands) = split_type(rest);
            let bits = int_type(ty)?;
            let args: Vec<String> = split_top(operands).into_iter().map(str::to_string).collect();
            (args.len() == 2).then_some(Inst { def, kind: Kind::Icmp(pred.to_string()), bits, args })
        }
        "select" => {
            let parts = split_top(after_op);
            let [c, a, b] = parts.as_slice() else { return None };
            let cond = c.strip_prefix("i1 ")?.trim().to_string();
            let (ta, va) = split_type(a);
            let (tb, vb) = split_type(b);
            let bits = int_type(ta)?;
            (ta == tb).then(|| Inst { def, kind: Kind::Select(cond), bits, args: vec![va.to_string(), vb.to_string()] })
        }
        "call" | "tail" => call(def, code),
        _ => None,
    }
}

/// `nuw`, `nsw`, `exact`, `disjoint`, `nneg` flags skipped.
fn skip_flags(mut s: &str) -> &str {
    while let Some((w, rest)) = s.split_once(' ') {
        if !matches!(w, "nuw" | "nsw" | "exact" | "disjoint" | "nneg") {
            break;
        }
        s = rest.trim_start();
    }
    s
}

fn int_type(ty: &str) -> Option<u32> {
    let bits: u32 = ty.trim().strip_prefix('i')?.parse().ok()?;
    (1..=64).contains(&bits).then_some(bits)
}

/// Calls of the min/max intrinsics and of functions with a known result range.
fn call(def: String, code: &str) -> Option<Inst> {
    let at = code.find(" @")?;
    let head = &code[..at];
    let b = code.as_bytes();
    let name_end = at + 1 + code[at + 1..].find('(')?;
    let name = &code[at + 2..name_end];
    let ret = head.split_whitespace().last()?;
    let bits = int_type(ret)?;
    let close = skip_group(b, name_end);
    let args: Vec<String> = split_top(&code[name_end + 1..close - 1])
        .into_iter()
        .filter(|a| !a.is_empty())
        .map(|a| split_type(a).1.trim().rsplit(' ').next().unwrap_or_default().to_string())
        .collect();
    for f in ["umin", "umax", "smin", "smax", "usub.sat"] {
        if name == format!("llvm.{f}.i{bits}") && args.len() == 2 {
            return Some(Inst { def, kind: Kind::MinMax(f.to_string()), bits, args });
        }
    }
    let known = match (sreg_range(name), range_attr(head)) {
        (Some(a), Some(b)) => (a.0.max(b.0), a.1.min(b.1)),
        (a, b) => a.or(b)?,
    };
    (known.0 <= known.1).then(|| Inst { def, kind: Kind::Known(known), bits, args: vec![] })
}

/// `range(i32 lo, hi)` on a call: the result is in [lo, hi) (a non-wrapping one only).
fn range_attr(head: &str) -> Option<Range> {
    let r = head.find("range(")?;
    let inner = &head[r + "range(".len()..r + head[r..].find(')')?];
    let (_, bounds) = split_type(inner);
    let mut it = bounds.split(',').map(|x| x.trim().parse::<i128>());
    let (Some(Ok(lo)), Some(Ok(hi))) = (it.next(), it.next()) else { return None };
    (lo < hi).then_some((lo, hi - 1))
}

/// The values a PTX special register can hold (CUDA's limits on block and grid shapes).
fn sreg_range(name: &str) -> Option<Range> {
    let reg = name.strip_prefix("llvm.nvvm.read.ptx.sreg.")?;
    Some(match reg {
        "tid.x" | "tid.y" => (0, 1023),
        "tid.z" => (0, 63),
        "ntid.x" | "ntid.y" => (1, 1024),
        "ntid.z" => (1, 64),
        "ctaid.x" => (0, (1 << 31) - 2),
        "ctaid.y" | "ctaid.z" => (0, 65534),
        "nctaid.x" => (1, (1 << 31) - 1),
        "nctaid.y" | "nctaid.z" => (1, 65535),
        "laneid" => (0, 31),
        _ => return None,
    })
}

/// The signed range of a `bits`-wide integer.
pub(super) fn signed(bits: u32) -> Range {
    (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
}

fn within(r: Range, outer: Range) -> bool {
    r.0 >= outer.0 && r.1 <= outer.1
}

/// The range of an operand: a constant, or a value already analysed.
pub(super) fn operand(ranges: &HashMap<String, Range>, arg: &str) -> Option<Range> {
    if let Ok(c) = arg.parse::<i128>() {
        return Some((c, c));
    }
    if arg == "true" {
        return Some((-1, -1));
    }
    if arg == "false" {
        return Some((0, 0));
    }
    ranges.get(arg).copied()
}

/// Every line's instruction ([`parse`]), where the two `extractvalue`s of an unsigned
/// `add`/`mul` `with.overflow` call (what `checked_add`/`checked_mul` become) read as the
/// operation (`Bin`) and its overflow bit (`Overflow`).
pub(super) fn parse_body<'a>(body: impl Iterator<Item = &'a str>) -> Vec<Option<Inst>> {
    let mut calls: HashMap<String, (String, Vec<String>)> = HashMap::new();
    let mut insts: Vec<Option<Inst>> = body
        .map(|line| {
            if let Some(inst) = parse(line) {
                return Some(inst);
            }
            let (def, rhs) = line.trim_start().split_once(" = ")?;
            if let Some(at) = rhs.find("@llvm.u").filter(|_| rhs.contains("call { i64, i1 } ")) {
                let name = &rhs[at + "@llvm.u".len()..];
                let op = ["add", "mul"].into_iter().find(|op| name.starts_with(&format!("{op}.with.overflow.i64(")))?;
                let open = rhs[at..].find('(')? + at;
                let args: Vec<String> = split_top(&rhs[open + 1..skip_group(rhs.as_bytes(), open) - 1])
                    .into_iter()
                    .map(|a| split_type(a).1.to_string())
                    .collect();
                calls.insert(def.to_string(), (op.to_string(), args));
                return None;
            }
            let rest = rhs.strip_prefix("extractvalue { i64, i1 } ")?;
            let (agg, index) = rest.split(", !").next()?.split_once(", ")?;
            let (op, args) = calls.get(agg.trim())?.clone();
            let (kind, args) = match index.trim() {
                "0" => (Kind::Bin(op), args),
                // The call's name, for the value's (below).
                "1" => (Kind::Overflow(op), [args, vec![agg.trim().to_string()]].concat()),
                _ => return None,
            };
            Some(Inst { def: def.to_string(), kind, bits: 64, args })
        })
        .collect();
    // Each overflow bit's third operand: the value of its call, whose range bounds the result.
    let values: HashMap<(String, String), String> = insts
        .iter()
        .flatten()
        .filter(|i| matches!(i.kind, Kind::Bin(_)) && i.args.len() == 2)
        .map(|i| ((i.args[0].clone(), i.args[1].clone()), i.def.clone()))
        .collect();
    for inst in insts.iter_mut().flatten() {
        if matches!(inst.kind, Kind::Overflow(_)) {
            let value = values.get(&(inst.args[0].clone(), inst.args[1].clone())).cloned();
            inst.args.truncate(2);
            inst.args.extend(value);
        }
    }
    insts
}

/// Ranges of every integer value of `body` (lines of one function) the rules can bound.
pub(super) fn analyse<'a>(body: impl Iterator<Item = &'a str>) -> HashMap<String, Range> {
    let mut ranges = HashMap::new();
    for inst in parse_body(body).into_iter().flatten() {
        if let Some(r) = range_of(&inst, &ranges) {
            ranges.insert(inst.def, r);
        }
    }
    ranges
}

/// The range of `inst`'s result from its operands' ranges. Each rule is exact interval
/// arithmetic on the mathematical values; the final check keeps only results that the
/// instruction's own width represents as the same signed value (so none wrapped).
pub(super) fn range_of(inst: &Inst, ranges: &HashMap<String, Range>) -> Option<Range> {
    let arg = |i: usize| inst.args.get(i).and_then(|a| operand(ranges, a));
    let r = match &inst.kind {
        Kind::Known(r) => Some(*r),
        Kind::Bin(op) => bin(op, arg(0), arg(1)),
        Kind::Cast(op, from) => match (op.as_str(), arg(0)) {
            // zext of a non-negative value keeps it; of anything else, the unsigned range.
            ("zext", Some(a)) if a.0 >= 0 => Some(a),
            ("zext", _) => Some((0, (1i128 << from) - 1)),
            ("sext", Some(a)) => Some(a),
            ("sext", None) => Some(signed(*from)),
            // trunc keeps a value the narrower width represents.
            ("trunc", Some(a)) if within(a, signed(inst.bits)) => Some(a),
            _ => None,
        },
        Kind::Select(_) => match (arg(0), arg(1)) {
            (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
            _ => None,
        },
        Kind::MinMax(f) => {
            let (a, b) = (arg(0)?, arg(1)?);
            // Unsigned order equals signed order on non-negative values.
            let nonneg = a.0 >= 0 && b.0 >= 0;
            match f.as_str() {
                "smin" => Some((a.0.min(b.0), a.1.min(b.1))),
                "smax" => Some((a.0.max(b.0), a.1.max(b.1))),
                "umin" if nonneg => Some((a.0.min(b.0), a.1.min(b.1))),
                "umax" if nonneg => Some((a.0.max(b.0), a.1.max(b.1))),
                "usub.sat" if nonneg => Some(((a.0 - b.1).max(0), (a.1 - b.0).max(0))),
                _ => None,
            }
        }
        Kind::Icmp(_) | Kind::Overflow(_) => None,
    }?;
    let fits = within(r, signed(inst.bits)) && within(r, (-LIMIT, LIMIT));
    fits.then_some(r)
}

/// Interval arithmetic for the binary operations (None = unknown).
pub(super) fn bin(op: &str, a: Option<Range>, b: Option<Range>) -> Option<Range> {
    // `and` with one non-negative operand is at most that operand's maximum, whatever the other.
    if op == "and" {
        let bounds = [a, b].into_iter().flatten().filter(|r| r.0 >= 0).map(|r| r.1).min()?;
        return Some((0, bounds));
    }
    let (a, b) = (a?, b?);
    let out_of_limit = |r: Range| r.0.abs() > LIMIT || r.1.abs() > LIMIT;
    if out_of_limit(a) || out_of_limit(b) {
        return None;
    }
    let nonneg = a.0 >= 0 && b.0 >= 0;
    match op {
        "add" => Some((a.0 + b.0, a.1 + b.1)),
        "sub" => Some((a.0 - b.1, a.1 - b.0)),
        "mul" => {
            let p = [a.0 * b.0, a.0 * b.1, a.1 * b.0, a.1 * b.1];
            Some((*p.iter().min()?, *p.iter().max()?))
        }
        // A constant shift by less than 63: multiplication by a power of two.
        "shl" if b.0 == b.1 && (0..63).contains(&b.0) => Some((a.0 << b.0, a.1 << b.0)),
        "lshr" if a.0 >= 0 && b.0 >= 0 && b.1 < 64 => Some((a.0 >> b.1, a.1 >> b.0)),
        "ashr" if b.0 == b.1 && (0..64).contains(&b.0) => Some((a.0 >> b.0, a.1 >> b.0)),
        "udiv" if a.0 >= 0 && b.0 >= 1 => Some((a.0 / b.1, a.1 / b.0)),
        "urem" if a.0 >= 0 && b.0 >= 1 => Some((0, a.1.min(b.1 - 1))),
        // Bitwise or / xor of non-negative values stay below the next power of two.
        "or" | "xor" if nonneg => {
            let top = a.1.max(b.1);
            let bound = if top == 0 { 0 } else { (1i128 << (128 - top.leading_zeros())) - 1 };
            Some((0, bound))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges_of(body: &str) -> HashMap<String, Range> {
        analyse(body.lines())
    }

    #[test]
    fn thread_positions_and_masks_bound_what_follows() {
        let r = ranges_of(
            "  %t = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n\
             \x20 %c = call range(i32 0, 256) i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()\n\
             \x20 %w = zext nneg i32 %t to i64\n\
             \x20 %i = and i64 %x, 1073741823\n\
             \x20 %j = add nsw i64 %i, -7\n\
             \x20 %k = mul nuw i64 %j, 3\n\
             \x20 %s = shl i64 %w, 2\n\
             \x20 %q = lshr i64 %i, 4\n\
             \x20 %m = tail call i64 @llvm.umin.i64(i64 %i, i64 %w)\n\
             \x20 %e = select i1 %b, i64 %j, i64 %s\n\
             \x20 %u = sext i32 %unknown to i64\n\
             \x20 %z = zext i32 %unknown to i64\n\
             \x20 %r = urem i64 %i, 10\n\
             \x20 %o = or disjoint i64 %w, 4096\n",
        );
        assert_eq!(r["%t"], (0, 1023));
        assert_eq!(r["%c"], (0, 255), "the tighter of the register's range and the attribute");
        assert_eq!(r["%w"], (0, 1023));
        assert_eq!(r["%i"], (0, (1 << 30) - 1));
        assert_eq!(r["%j"], (-7, (1 << 30) - 8));
        assert_eq!(r["%k"], (-21, 3 * ((1 << 30) - 8)));
        assert_eq!(r["%s"], (0, 4092));
        assert_eq!(r["%q"], (0, (1 << 26) - 1));
        assert_eq!(r["%m"], (0, 1023));
        assert_eq!(r["%e"], (-7, (1 << 30) - 8));
        assert_eq!(r["%u"], (-(1 << 31), (1 << 31) - 1));
        assert_eq!(r["%z"], (0, (1 << 32) - 1));
        assert_eq!(r["%r"], (0, 9));
        assert_eq!(r["%o"], (0, 8191));
    }

    #[test]
    fn unknown_operands_and_overflow_give_up() {
        let r = ranges_of(
            "  %a = add i64 %x, 1\n\
             \x20 %z = zext i32 %y to i64\n\
             \x20 %b = mul i64 %z, 3\n\
             \x20 %c = mul i64 %b, %z\n\
             \x20 %n = trunc i64 %z to i32\n\
             \x20 %p = phi i64 [ 0, %entry ], [ %q, %loop ]\n\
             \x20 %q = add i64 %p, 1\n\
             \x20 %s = mul i32 %n, 2\n\
             \x20 %d = udiv i64 %z, %x\n",
        );
        for gone in ["%a", "%c", "%n", "%p", "%q", "%s", "%d"] {
            assert!(!r.contains_key(gone), "{gone}: {:?}", r.get(gone));
        }
        assert_eq!(r["%b"], (0, 3 * ((1i128 << 32) - 1)));
    }

    #[test]
    fn checked_arithmetic_reads_as_its_operation() {
        let body = "  %r = tail call { i64, i1 } @llvm.umul.with.overflow.i64(i64 %a, i64 %b)\n\
                    \x20 %v = extractvalue { i64, i1 } %r, 0\n  %o = extractvalue { i64, i1 } %r, 1\n\
                    \x20 %s = call { i64, i1 } @llvm.usub.with.overflow.i64(i64 %a, i64 %b)\n\
                    \x20 %w = extractvalue { i64, i1 } %s, 0\n";
        let insts: Vec<Option<Inst>> = parse_body(body.lines());
        let args = vec!["%a".to_string(), "%b".to_string()];
        assert_eq!(
            insts[1],
            Some(Inst { def: "%v".into(), kind: Kind::Bin("mul".into()), bits: 64, args: args.clone() })
        );
        let with_value = [args, vec!["%v".to_string()]].concat();
        assert_eq!(
            insts[2],
            Some(Inst { def: "%o".into(), kind: Kind::Overflow("mul".into()), bits: 64, args: with_value })
        );
        assert_eq!(insts[4], None, "usub's overflow is no constant: not read");
    }

    #[test]
    fn parses_the_forms_opt_prints() {
        let i = parse("  %_92.i = add nuw nsw i64 %4, -7, !dbg !3").unwrap();
        assert_eq!((i.def.as_str(), i.bits, i.args.clone()), ("%_92.i", 64, vec!["%4".into(), "-7".into()]));
        let c = parse("  %c = icmp samesign ult i64 %a, %b").unwrap();
        assert_eq!(c.kind, Kind::Icmp("ult".into()));
        let s = parse("  %s = select i1 %c, i64 %a, i64 7").unwrap();
        assert_eq!((s.kind, s.args), (Kind::Select("%c".into()), vec!["%a".to_string(), "7".to_string()]));
        let z = parse("  %z = zext nneg i32 %t to i64").unwrap();
        assert_eq!((z.kind, z.bits), (Kind::Cast("zext".into(), 32), 64));
        assert!(parse("  %f = fadd float %a, %b").is_none());
        assert!(parse("  store i64 %a, ptr %p").is_none());
    }
}
