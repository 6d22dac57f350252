//! Release builds, in the unchecked copies (`versioned_checks.rs`): address indices computed in
//! 32 bits where the copy's launch-wide test shows that they fit.
//!
//! Rust indexes with `usize`, so `input[(z * ny + y) * nx + x]` is 64-bit arithmetic: each
//! product is three multiply-adds in SASS where CUDA C++'s `int` index takes one (nvcc given
//! `size_t` indices: box27_3d 1.50x the time of its `int` twin on the H200). Addition,
//! subtraction, multiplication and left shifts commute with truncation, so an index below 2^32
//! is the zero extension of the same arithmetic done in 32 bits on its operands' low halves,
//! whatever their size. The copy computes each address index of a bounded value that way, and
//! its test gains `lt(bound, 4294967296)` for the index's launch-wide bound and for the
//! operands of the minimums, maximums, saturating subtractions and divisions on the way (they
//! do not commute with truncation, so they are narrowed only where their operands fit too).
//! A 32-bit sum keeps `nuw` where the 64-bit sum had it and its result is known to fit, so
//! LLVM still folds `input[i + 1]` into an offset from `&input[i]`.

use super::guarded_loads::{blocks, Block};
use super::narrow_compares::{compare, constant};
use super::versioned_checks::call_args;
use super::{is_phi, split_top, Line};
use std::collections::{HashMap, HashSet};

/// The launch-wide test the narrowed indices need: every bound it was given is below this.
pub const LIMIT: &str = "4294967296";

/// What the copy changes: lines to insert after a line (`after`), before one (`before`), at
/// the start of the entry block (`entry`), and lines rewritten in place.
#[derive(Default)]
pub(super) struct Edits {
    pub after: HashMap<usize, Vec<String>>,
    pub before: HashMap<usize, Vec<String>>,
    pub entry: Vec<String>,
    pub rewrite: HashMap<usize, String>,
}

/// Narrows the index of every `getelementptr T, ptr %p, i64 %idx` whose value `fits` (the
/// callback adds the value's bound at that line to the test and says whether it has one), and
/// every compare of two values that fit (see [`Narrow::compares`]). The lines in `dropped` are
/// the copy's fixed branches: a compare only they use is dead and stays as it is.
pub(super) fn narrow(
    body: &[Line],
    defs: &HashMap<String, usize>,
    dropped: &HashSet<usize>,
    fits: &mut dyn FnMut(&str, usize) -> bool,
) -> Edits {
    let blocks = blocks(body);
    let mut n = Narrow { body, defs, fits, memo: HashMap::new(), edits: Edits::default(), next: 0 };
    n.compares(dropped);
    for (i, line) in body.iter().enumerate() {
        let Some((lhs, rhs)) = line.text.split_once(" = ") else { continue };
        let Some(rest) = rhs.trim().strip_prefix("getelementptr ") else { continue };
        let (rest, meta) = rest.split_once(", !").map_or((rest, ""), |(r, m)| (r, m));
        let parts = split_top(rest);
        let [ty, base, index] = parts.as_slice() else { continue };
        let Some(idx) = index.trim().strip_prefix("i64 %").map(|v| format!("%{v}")) else { continue };
        // Kernel buffers only: shared memory addresses stay as LLVM makes them. A base that is
        // itself an address into a kernel buffer counts (rustc splits `out[row + x]` into
        // `&out[row]` and `+ x`).
        let Some(root) = base.trim().strip_prefix("ptr ") else { continue };
        if !root.starts_with('%')
            || !in_kernel_buffer(body, defs, root)
            || feeds_phi(body, &blocks, i)
            || !(n.fits)(&idx, i)
        {
            continue;
        }
        let narrow = n.value(&idx, true, DEPTH);
        let wide = n.fresh();
        n.edits.before.entry(i).or_default().push(format!("  {wide} = zext i32 {narrow} to i64"));
        let meta = if meta.is_empty() { String::new() } else { format!(", !{meta}") };
        let text = format!("{lhs} = getelementptr {}, {}, i64 {wide}{meta}", ty.trim(), base.trim());
        n.edits.rewrite.insert(i, text);
    }
    n.edits
}

/// Whether `ptr` is a kernel parameter, or a `getelementptr` chain from one.
fn in_kernel_buffer(body: &[Line], defs: &HashMap<String, usize>, ptr: &str) -> bool {
    let mut at = ptr.to_string();
    for _ in 0..DEPTH {
        let Some(&d) = defs.get(&at) else { return true };
        let Some((_, rhs)) = body[d].text.split_once(" = ") else { return false };
        let Some(rest) = rhs.trim().strip_prefix("getelementptr ") else { return false };
        let parts = split_top(rest.split_once(", !").map_or(rest, |(r, _)| r));
        let Some(base) = parts.get(1).and_then(|b| b.trim().strip_prefix("ptr ")) else { return false };
        if !base.starts_with('%') {
            return false;
        }
        at = base.to_string();
    }
    false
}

/// Operations followed at most this deep from an index.
const DEPTH: usize = 24;

struct Narrow<'a, 'f> {
    body: &'a [Line],
    defs: &'a HashMap<String, usize>,
    fits: &'f mut dyn FnMut(&str, usize) -> bool,
    /// The 32-bit operand already made for a 64-bit value (and whether it fits).
    memo: HashMap<(String, bool), String>,
    edits: Edits,
    next: usize,
}

impl Narrow<'_, '_> {
    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%oxide.n{}", self.next)
    }

    /// The low 32 bits of the i64 value `v` as an i32 operand; `fits` when `v` is known to be
    /// below 2^32 in every thread that uses this operand (then its operations may say `nuw`;
    /// where it does not fit they are poison, which only threads that do not use it compute).
    /// The two forms are made apart: an index that fits may use `v` where `v` itself need not.
    fn value(&mut self, v: &str, fits: bool, depth: usize) -> String {
        if let Ok(c) = v.parse::<i64>() {
            return (c as i32).to_string();
        }
        let key = (v.to_string(), fits);
        if let Some(known) = self.memo.get(&key) {
            return known.clone();
        }
        let made = match self.defs.get(v) {
            Some(&d) if depth > 0 => self.operation(d, fits, depth - 1),
            _ => None,
        };
        let made = made.unwrap_or_else(|| self.leaf(v));
        self.memo.insert(key, made.clone());
        made
    }

    /// `trunc` of the value, right after its definition (or at the entry for a parameter).
    fn leaf(&mut self, v: &str) -> String {
        let name = self.fresh();
        let line = format!("  {name} = trunc i64 {v} to i32");
        match self.defs.get(v) {
            Some(&d) => self.edits.after.entry(self.after_phis(d)).or_default().push(line),
            None => self.edits.entry.push(line),
        }
        name
    }

    /// The line after which a value defined at `d` can be used: past the block's phis.
    fn after_phis(&self, mut d: usize) -> usize {
        while self.body.get(d + 1).is_some_and(|l| is_phi(&l.text)) {
            d += 1;
        }
        d
    }

    /// The 32-bit form of the operation defining `v` at line `d`, or None to truncate it.
    fn operation(&mut self, d: usize, fits: bool, depth: usize) -> Option<String> {
        let rhs = self.body[d].text.split_once(" = ")?.1.trim();
        let rhs = rhs.split(", !").next().unwrap_or(rhs).to_string();
        let words: Vec<&str> = rhs.split_whitespace().collect();
        let opcode = *words.first()?;
        let flags: Vec<&str> = words[1..].iter().take_while(|w| FLAGS.contains(w)).copied().collect();
        let rest = words[1 + flags.len()..].join(" ");
        let text = match opcode {
            "zext" | "sext" => {
                let [from, src, "to", "i64"] = rest.split_whitespace().collect::<Vec<_>>()[..] else { return None };
                if from == "i32" {
                    return Some(src.to_string());
                }
                super::int_bits(from).filter(|&b| b < 32)?;
                format!("{opcode} {from} {src} to i32")
            }
            "add" | "sub" | "mul" | "and" | "or" | "xor" | "shl" => {
                let (a, b) = rest.strip_prefix("i64 ")?.split_once(", ")?;
                let (a, b) = (a.trim(), b.trim());
                // `x - c` (`add x, -c`) that fits, of an `x` that fits: `sub nuw`, which LLVM
                // folds into an address offset (a 64-bit `x` of exactly 2^32 would not).
                if let Some(c) =
                    b.parse::<i64>().ok().filter(|&c| opcode == "add" && fits && c < 0 && c > i64::from(i32::MIN))
                {
                    if (self.fits)(a, d) {
                        let a = self.value(a, true, depth);
                        let name = self.fresh();
                        self.edits.after.entry(d).or_default().push(format!("  {name} = sub nuw i32 {a}, {}", -c));
                        return Some(name);
                    }
                }
                if opcode == "shl" && !b.parse::<u32>().is_ok_and(|s| s < 32) {
                    return None;
                }
                // `a - b` that fits, of operands that fit: `a >= b`, so `sub nuw`.
                if opcode == "sub" && fits && (self.fits)(a, d) && (self.fits)(b, d) {
                    let (a, b) = (self.value(a, true, depth), self.value(b, true, depth));
                    let name = self.fresh();
                    self.edits.after.entry(d).or_default().push(format!("  {name} = sub nuw i32 {a}, {b}"));
                    return Some(name);
                }
                // Operands below a sum (or a disjoint `or`, a shift) that fits fit as well.
                let keeps = fits && (flags.contains(&"nuw") || flags.contains(&"disjoint"));
                let passes = keeps && matches!(opcode, "add" | "or" | "shl");
                let (a, b) = (self.value(a, passes, depth), self.value(b, passes, depth));
                let nuw = if keeps && matches!(opcode, "add" | "mul" | "shl") { "nuw " } else { "" };
                format!("{opcode} {nuw}i32 {a}, {b}")
            }
            "select" => {
                let parts = split_top(&rest);
                let [c, a, b] = parts.as_slice() else { return None };
                let (a, b) = (a.strip_prefix("i64 ")?.trim(), b.strip_prefix("i64 ")?.trim());
                let (a, b) = (self.value(a, false, depth), self.value(b, false, depth));
                format!("select {c}, i32 {a}, i32 {b}")
            }
            "extractvalue" => {
                // The value of `umul/uadd.with.overflow`: the same product or sum.
                let (pair, idx) = rest.rsplit_once(", ")?;
                let pair = pair.split_whitespace().last()?;
                let call = self.body[*self.defs.get(pair).filter(|_| idx.trim() == "0")?].text.clone();
                let (a, b) = call_args(&call)?;
                let op = if call.contains("@llvm.umul.with.overflow.i64(") {
                    "mul"
                } else if call.contains("@llvm.uadd.with.overflow.i64(") {
                    "add"
                } else {
                    return None;
                };
                let (a, b) = (self.value(&a, false, depth), self.value(&b, false, depth));
                format!("{op} i32 {a}, {b}")
            }
            "tail" | "call" => return self.intrinsic(&rhs, d, depth),
            "lshr" | "udiv" => {
                let (a, b) = rest.strip_prefix("i64 ")?.split_once(", ")?;
                b.parse::<u64>().ok().filter(|&c| c > 0 && c < 1 << 31)?;
                if !(self.fits)(a.trim(), d) {
                    return None;
                }
                format!("{opcode} i32 {}, {b}", self.value(a.trim(), true, depth))
            }
            _ => return None,
        };
        let name = self.fresh();
        self.edits.after.entry(d).or_default().push(format!("  {name} = {text}"));
        Some(name)
    }

    /// `icmp PRED i64 a, b` of operands that fit (values whose bound the test holds below
    /// 2^32, or constants below it) as the same compare of their low halves, unsigned: both are
    /// non-negative, so a signed predicate orders them alike. ptxas compares 64-bit values in
    /// two instructions (`ISETP` and `ISETP.EX`), nvcc's `int` twins in one. Compares with a
    /// slice length stay wide: `guarded_loads.rs` and `speculated_blocks.rs` read them after
    /// `opt` as the checks of `get(i)`.
    fn compares(&mut self, dropped: &HashSet<usize>) {
        let body = self.body;
        for (i, line) in body.iter().enumerate() {
            let Some((name, pred, a, b)) = compare(&line.text) else { continue };
            let used = body
                .iter()
                .enumerate()
                .any(|(j, l)| j != i && !dropped.contains(&j) && super::uses_value(&l.text, name));
            if !used || (constant(a) && constant(b)) || !self.operand_fits(a, i) || !self.operand_fits(b, i) {
                continue;
            }
            let (a, b) = (self.value(a, true, DEPTH), self.value(b, true, DEPTH));
            self.edits.rewrite.insert(i, format!("  {name} = icmp {pred} i32 {a}, {b}"));
        }
    }

    /// Whether a compare's operand at line `i` is a constant below 2^32 or a value that fits
    /// (not the length of an input; an output's length may be one: the check of
    /// `out.get_mut(i)` guards a store, which no later pass reads, and the test holding the
    /// length below 2^32 lets the index's 64-bit sum (`IMAD.WIDE`) go with its compare).
    fn operand_fits(&mut self, v: &str, i: usize) -> bool {
        let input_len = v.ends_with("_len") && !v.starts_with("%__oxide_out_");
        constant(v) || (v.starts_with('%') && !input_len && (self.fits)(v, i))
    }

    /// `umin`, `umax` and `usub.sat` of operands that fit, as compares and selects.
    fn intrinsic(&mut self, rhs: &str, d: usize, depth: usize) -> Option<String> {
        let kind = ["umin", "umax", "usub.sat"].into_iter().find(|k| rhs.contains(&format!("@llvm.{k}.i64(")))?;
        let (a, b) = call_args(rhs)?;
        if !(self.fits)(&a, d) || !(b.parse::<u64>().is_ok() || (self.fits)(&b, d)) {
            return None;
        }
        let (a, b) = (self.value(&a, true, depth), self.value(&b, true, depth));
        let (c, r) = (self.fresh(), self.fresh());
        let lines = match kind {
            "umin" => {
                vec![format!("  {c} = icmp ult i32 {a}, {b}"), format!("  {r} = select i1 {c}, i32 {a}, i32 {b}")]
            }
            "umax" => {
                vec![format!("  {c} = icmp ugt i32 {a}, {b}"), format!("  {r} = select i1 {c}, i32 {a}, i32 {b}")]
            }
            _ => {
                let s = self.fresh();
                vec![
                    format!("  {c} = icmp ugt i32 {a}, {b}"),
                    format!("  {s} = sub i32 {a}, {b}"),
                    format!("  {r} = select i1 {c}, i32 {s}, i32 0"),
                ]
            }
        };
        self.edits.after.entry(d).or_default().extend(lines);
        Some(r)
    }
}

/// Whether line `i` is in a block that ends by handing a value to a phi of the block it goes
/// to, and one of the phi's other edges skips the block (it comes from a block the read's
/// block is reached from, or passes on a value its block did not compute, a constant): the
/// shape of a read behind a check that returns `None` (`get(i)`) or skips it, which
/// `guarded_loads.rs` and `speculated_blocks.rs` make unconditional by the index it compares.
/// Narrowed, the index hides from them (examples/scan's block totals: the read stayed behind
/// its branch; conv2d_3x3's taps: 93 -> 98 SASS). The arms of an `if`/`else` that each compute
/// their value (stencil7_3d's interior and face cells) are no such read.
fn feeds_phi(body: &[Line], blocks: &[Block], i: usize) -> bool {
    let Some(b) = blocks.iter().find(|b| b.insts.contains(&i)) else { return false };
    let Some(next) = b.insts.last().and_then(|&t| body[t].text.trim().strip_prefix("br label ")) else { return false };
    let from = format!(", {} ]", b.label);
    let block = |label: &str| blocks.iter().find(|m| m.label == label);
    let computed_in = |value: &str, label: &str| {
        block(label).is_some_and(|m| {
            m.insts.iter().any(|&l| {
                let text = &body[l].text;
                text.split_once(" = ").is_some_and(|(lhs, _)| lhs.trim() == value) && !is_phi(text)
            })
        })
    };
    let Some(join) = block(next.trim()) else { return false };
    join.insts.iter().any(|&l| {
        let text = &body[l].text;
        if !is_phi(text) || !text.contains(&from) {
            return false;
        }
        let arms = text.split('[').skip(1).filter_map(|arm| arm.split(']').next()?.split_once(", "));
        arms.map(|(v, label)| (v.trim(), label.trim()))
            .filter(|&(_, label)| label != b.label)
            .any(|(v, label)| !computed_in(v, label) || reaches(body, blocks, label, &b.label))
    })
}

/// Whether block `to` can be reached from block `from` (labels with `%`).
fn reaches(body: &[Line], blocks: &[Block], from: &str, to: &str) -> bool {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut work = vec![from];
    while let Some(label) = work.pop() {
        let Some(m) = blocks.iter().find(|m| m.label == label) else { continue };
        let Some(&t) = m.insts.last() else { continue };
        for target in body[t].text.split("label ").skip(1) {
            let target = target.split([',', ' ', ']']).next().unwrap_or("");
            if target == to {
                return true;
            }
            if let Some(known) = blocks.iter().find(|m| m.label == target) {
                if seen.insert(known.label.as_str()) {
                    work.push(known.label.as_str());
                }
            }
        }
    }
    false
}

const FLAGS: [&str; 6] = ["nuw", "nsw", "nneg", "exact", "disjoint", "samesign"];

#[cfg(test)]
mod tests {
    use super::super::tests::{assert_valid_ir, transformed};
    use super::super::versioned_checks::{add, TEST_MARK};

    /// `input[y * cols + x - 1]` behind `1 <= x < cols`, `y < rows` (a panic on a short input),
    /// a read of `@tile` (shared memory) at the same index, and `ix.get(x)` (a read that hands
    /// its value to a phi).
    const KERNEL: &str = "\
@tile = internal addrspace(3) global [256 x float] poison, align 4

define ptx_kernel void @k(ptr noalias readonly %__oxide_in_input, i64 %__oxide_in_input_len, i64 %cols, i32 %rows, ptr noalias readonly %__oxide_in_ix, i64 %__oxide_in_ix_len, ptr %out) {
start:
  %bx = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %nx = tail call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tx = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = mul nuw nsw i32 %bx, %nx
  %x32 = add nuw nsw i32 %m, %tx
  %x = zext nneg i32 %x32 to i64
  %ty = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %y = zext nneg i32 %ty to i64
  %rows64 = zext i32 %rows to i64
  %in_x = icmp ult i64 %x, %cols
  %in_y = icmp ult i64 %y, %rows64
  %pos = icmp uge i64 %x, 1
  %in_xy = select i1 %in_x, i1 %in_y, i1 false
  %inside = and i1 %in_xy, %pos
  br i1 %inside, label %body, label %exit

body:                                             ; preds = %start
  %row = mul i64 %y, %cols
  %i = add nuw nsw i64 %row, %x
  %left = add nsw i64 %i, -1
  %ok = icmp ult i64 %left, %__oxide_in_input_len
  br i1 %ok, label %read, label %panic

read:                                             ; preds = %body
  %p = getelementptr inbounds float, ptr %__oxide_in_input, i64 %left
  %v = load float, ptr %p, align 4
  %t = getelementptr inbounds float, ptr addrspacecast (ptr addrspace(3) @tile to ptr), i64 %x
  %u = load float, ptr %t, align 4
  %has = icmp ult i64 %x, %__oxide_in_ix_len
  br i1 %has, label %get, label %join

get:                                              ; preds = %read
  %q = getelementptr inbounds float, ptr %__oxide_in_ix, i64 %x
  %w = load float, ptr %q, align 4
  br label %join

join:                                             ; preds = %get, %read
  %got = phi float [ %w, %get ], [ 0.0, %read ]
  %s = fadd float %v, %got
  %s2 = fadd float %s, %u
  store float %s2, ptr %out, align 4
  br label %exit

exit:                                             ; preds = %join, %start
  ret void

panic:                                            ; preds = %body
  call void asm sideeffect \"trap;\", \"\"()
  unreachable
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
";

    /// The copy of `ir`'s kernel, checked by LLVM's verifier (`what` names its files).
    fn copy(ir: &str, what: &str) -> String {
        let (out, n) = transformed(ir, |lines| add(lines).len());
        assert_eq!(n, 1, "{out}");
        assert_valid_ir(what, &out);
        out[out.find("@k__oxide_vc(").unwrap()..].to_string()
    }

    #[test]
    fn a_checked_read_indexes_with_32_bit_arithmetic_behind_the_test() {
        let copy = copy(KERNEL, "narrow_indices_32");
        // (y * cols + x) - 1 on the low halves; the sum keeps its `nuw` (it fits), and `x >= 1`
        // with `i < 2^32` make the difference `sub nuw` (offsets LLVM folds into the address);
        // the read takes the zero extension.
        for want in [
            "%oxide.n2 = trunc i64 %cols to i32",
            "%oxide.n3 = mul i32 %ty, %oxide.n2",
            "%oxide.n4 = add nuw i32 %oxide.n3, %x32",
            "%oxide.n5 = sub nuw i32 %oxide.n4, 1",
            "%oxide.n6 = zext i32 %oxide.n5 to i64",
            "%p = getelementptr inbounds float, ptr %__oxide_in_input, i64 %oxide.n6",
        ] {
            assert!(copy.contains(want), "{want}\n{copy}");
        }
        // The test bounds both the read's index and `i` below 2^32.
        let test = copy.lines().find(|l| l.contains(TEST_MARK)).unwrap();
        let want = ",usub.sat:1(__oxide_in_input_len),uadd.sat(mul.sat(umin(ntid.y-1,usub.sat:1(rows)),cols),";
        assert!(test.contains(want), "{test}");
        assert!(test.ends_with("),4294967296)\", \"\"()"), "{test}");
    }

    #[test]
    fn compares_of_values_that_fit_take_their_low_halves() {
        let made = copy(KERNEL, "narrow_indices_compares");
        // `x < cols`, `y < rows` (zero extensions: the narrow values themselves), `x >= 1`.
        for want in [
            "%oxide.n1 = trunc i64 %cols to i32",
            "%in_x = icmp ult i32 %x32, %oxide.n1",
            "%in_y = icmp ult i32 %ty, %rows",
            "%pos = icmp uge i32 %x32, 1",
        ] {
            assert!(made.contains(want), "{want}\n{made}");
        }
        // The dropped check is dead (its branch is fixed) and a compare with a length is the
        // check of a `get`, which later passes read: both stay wide.
        assert!(made.contains("%ok = icmp ult i64 %left, %__oxide_in_input_len"), "{made}");
        assert!(made.contains("%has = icmp ult i64 %x, %__oxide_in_ix_len"), "{made}");
        // `cols` and `rows` joined the values the test holds below 2^32.
        let test = made.lines().find(|l| l.contains(TEST_MARK)).unwrap();
        assert!(test.contains("&lt(umax(uadd.sat(mul.sat(nctaid.x-1,ntid.x),ntid.x-1),cols,ntid.y-1,rows,"), "{test}");
        // Each value's own bound, whole: an operand-wise merge of `x`'s bound with the index's
        // (both `uadd.sat(mul.sat(..), ..)`) would multiply the larger factors of each.
        let index = "uadd.sat(mul.sat(umin(ntid.y-1,usub.sat:1(rows)),cols),umin(uadd.sat(mul.sat(nctaid.x-1,ntid.x),ntid.x-1),usub.sat:1(cols)))";
        assert!(test.contains(&format!(",{index},")) || test.contains(&format!(",{index})")), "{test}");
        // A signed compare of values that fit orders them as the unsigned one; a constant past
        // 2^32 keeps the compare wide.
        let also = |cmp: &str| {
            let extra =
                format!("%extra = {cmp}\n  %in_more = and i1 %in_xy, %extra\n  %inside = and i1 %in_more, %pos");
            copy(&KERNEL.replace("%inside = and i1 %in_xy, %pos", &extra), "narrow_indices_compare_variants")
        };
        assert!(also("icmp sgt i64 %x, 7").contains("%extra = icmp ugt i32 %x32, 7"));
        assert!(also("icmp ult i64 %x, 4294967296").contains("%extra = icmp ult i64 %x, 4294967296"));
    }

    #[test]
    fn an_index_compared_with_an_outputs_length_compares_low_halves() {
        // `out.get_mut(x)`'s check: the test holds the output's length below 2^32 too, and the
        // compare takes the low halves; an input's length stays a wide compare (see above).
        let with_output = KERNEL
            .replace("ptr %out) {", "ptr %out, i64 %__oxide_out_o_len) {")
            .replace(
                "%inside = and i1 %in_xy, %pos",
                "%in_o = icmp ult i64 %x, %__oxide_out_o_len\n  %in_more = and i1 %in_xy, %in_o\n  %inside = and i1 %in_more, %pos",
            );
        let made = copy(&with_output, "narrow_indices_output_len");
        let trunc = made.lines().find(|l| l.contains("= trunc i64 %__oxide_out_o_len to i32")).expect(&made);
        let low = trunc.trim().split(' ').next().unwrap();
        assert!(made.contains(&format!("%in_o = icmp ult i32 %x32, {low}\n")), "{made}");
        let test = made.lines().find(|l| l.contains(TEST_MARK)).unwrap();
        let bounds = &test[test.rfind("&lt(umax(").unwrap()..];
        assert!(bounds.contains("__oxide_out_o_len") && bounds.ends_with(",4294967296)\", \"\"()"), "{test}");
    }

    /// Two reads, `a[x]` and `b[4 * x + 3]`, and compares of `4 * x + 3` and `x`: bounds
    /// of one shape (`uadd.sat(mul.sat(..), ..)`).
    const TWO_READS: &str = "\
define ptx_kernel void @k(ptr noalias readonly %__oxide_in_a, i64 %__oxide_in_a_len, ptr noalias readonly %__oxide_in_b, i64 %__oxide_in_b_len, ptr %out) {
start:
  %bx = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %nx = tail call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tx = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bx64 = zext i32 %bx to i64
  %nx64 = zext i32 %nx to i64
  %tx64 = zext i32 %tx to i64
  %m = mul nuw nsw i64 %bx64, %nx64
  %x = add nuw nsw i64 %m, %tx64
  %y4 = mul nuw nsw i64 %x, 4
  %y = add nuw nsw i64 %y4, 3
  %c2 = icmp ult i64 %y, 1000
  %c1 = icmp ult i64 %x, 77
  %c = and i1 %c1, %c2
  %ok = icmp ult i64 %x, %__oxide_in_a_len
  br i1 %ok, label %one, label %panic

one:                                              ; preds = %start
  %p = getelementptr inbounds float, ptr %__oxide_in_a, i64 %x
  %v = load float, ptr %p, align 4
  %x4 = mul nuw nsw i64 %x, 4
  %j = add nuw nsw i64 %x4, 3
  %ok2 = icmp ult i64 %j, %__oxide_in_b_len
  br i1 %ok2, label %two, label %panic

two:                                              ; preds = %one
  %q = getelementptr inbounds float, ptr %__oxide_in_b, i64 %j
  %w = load float, ptr %q, align 4
  %s = fadd float %v, %w
  %r = select i1 %c, float %s, float 0.0
  store float %r, ptr %out, align 4
  ret void

panic:                                            ; preds = %one, %start
  call void asm sideeffect \"trap;\", \"\"()
  unreachable
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
";

    #[test]
    fn the_test_holds_each_narrowed_value_below_2_32_by_its_own_bound() {
        let made = copy(TWO_READS, "narrow_indices_two_reads");
        let test = made.lines().find(|l| l.contains(TEST_MARK)).unwrap();
        // The exact maximum of the two bounds: merged operand by operand, the term would
        // multiply x's largest factor by 4 * x's (2^45 for 2^26 threads: a test that fails).
        let x = "uadd.sat(mul.sat(nctaid.x-1,ntid.x),ntid.x-1)";
        let want = format!("&lt(umax(uadd.sat(mul.sat({x},4),3),{x},");
        assert!(test.contains(&want), "{want}\n{test}");
    }

    #[test]
    fn shared_memory_and_reads_that_may_not_run_keep_their_indices() {
        let copy = copy(KERNEL, "narrow_indices_kept");
        assert!(copy.contains("addrspace(3) @tile to ptr), i64 %x"), "{copy}");
        assert!(copy.contains("%q = getelementptr inbounds float, ptr %__oxide_in_ix, i64 %x"), "{copy}");
    }

    /// `x < n`, then `if x == 0 { a[x] } else { a[x - 1] + v }` (a stencil's face and interior
    /// cells: each arm computes what it hands the phi), every read checked against `a.len()`.
    /// `v` is `a[x]` read before the branch.
    const ARMS: &str = "\
define ptx_kernel void @k(ptr noalias readonly %__oxide_in_a, i64 %__oxide_in_a_len, i64 %n, ptr %out) {
start:
  %bx = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %nx = tail call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tx = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = mul nuw nsw i32 %bx, %nx
  %x32 = add nuw nsw i32 %m, %tx
  %x = zext nneg i32 %x32 to i64
  %in = icmp ult i64 %x, %n
  br i1 %in, label %body, label %exit

body:                                             ; preds = %start
  %ok = icmp ult i64 %x, %__oxide_in_a_len
  br i1 %ok, label %first, label %panic

first:                                            ; preds = %body
  %p = getelementptr inbounds float, ptr %__oxide_in_a, i64 %x
  %v = load float, ptr %p, align 4
  %face = icmp eq i64 %x, 0
  br i1 %face, label %edge, label %inner

edge:                                             ; preds = %first
  %e = fmul float %v, 2.0
  br label %join

inner:                                            ; preds = %first
  %l = add nsw i64 %x, -1
  %ok2 = icmp ult i64 %l, %__oxide_in_a_len
  br i1 %ok2, label %read, label %panic

read:                                             ; preds = %inner
  %q = getelementptr inbounds float, ptr %__oxide_in_a, i64 %l
  %w = load float, ptr %q, align 4
  %s = fadd float %v, %w
  br label %join

join:                                             ; preds = %read, %edge
  %r = phi float [ %s, %read ], [ %e, %edge ]
  store float %r, ptr %out, align 4
  br label %exit

exit:                                             ; preds = %join, %start
  ret void

panic:                                            ; preds = %inner, %body
  call void asm sideeffect \"trap;\", \"\"()
  unreachable
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
";

    #[test]
    fn a_read_in_one_arm_of_an_if_else_is_narrowed_and_a_skipped_read_is_not() {
        // Both arms compute their value: the interior read takes 32-bit arithmetic.
        let made = copy(ARMS, "narrow_indices_arms");
        let read = made.lines().find(|l| l.contains("%q = getelementptr")).unwrap();
        assert!(read.contains("i64 %oxide.n") && !read.ends_with("i64 %l"), "{made}");
        // The face arm passes on `v`, computed before the branch: the interior read is then a
        // read the code may skip, which later passes make unconditional by its wide index.
        let skipped = copy(&ARMS.replace("[ %e, %edge ]", "[ %v, %edge ]"), "narrow_indices_skipped");
        assert!(skipped.contains("%q = getelementptr inbounds float, ptr %__oxide_in_a, i64 %l\n"), "{skipped}");
    }

    #[test]
    fn an_index_off_an_address_into_a_kernel_buffer_is_narrowed() {
        // `&input[row..]` then `[x - 1]`, as rustc splits `input[row + x - 1]`: both indices
        // take 32-bit arithmetic; the same index off a loaded address keeps its width.
        let split = KERNEL.replace(
            "  %p = getelementptr inbounds float, ptr %__oxide_in_input, i64 %left\n",
            "  %rowp = getelementptr inbounds float, ptr %__oxide_in_input, i64 %row\n  %x1 = add nsw i64 %x, -1\n  %p = getelementptr inbounds float, ptr %rowp, i64 %x1\n",
        );
        let made = copy(&split, "narrow_indices_split");
        for name in ["%rowp", "%p"] {
            let read = made.lines().find(|l| l.trim_start().starts_with(&format!("{name} = getelementptr"))).unwrap();
            assert!(read.contains("i64 %oxide.n"), "{name}: {read}\n{made}");
        }
        let loaded = split.replace(
            "%rowp = getelementptr inbounds float, ptr %__oxide_in_input, i64 %row",
            "%rowp = load ptr, ptr %out, align 8",
        );
        let made = copy(&loaded, "narrow_indices_loaded_base");
        assert!(made.contains("%p = getelementptr inbounds float, ptr %rowp, i64 %x1\n"), "{made}");
    }

    #[test]
    fn an_index_without_a_bound_is_not_narrowed() {
        // A loaded row: no bound for the index, so its check stays, and a copy for narrowing
        // alone is not made.
        let loaded = KERNEL.replace("%row = mul i64 %y, %cols", "%row = load i64, ptr %out, align 8");
        let (out, n) = transformed(&loaded, |lines| add(lines).len());
        assert_eq!(n, 0, "{out}");
        assert!(!out.contains("oxide.n"), "{out}");
    }
}
