//! Release builds: a kernel whose bounds checks provably pass for the whole launch runs a copy
//! of its body without them (before `opt`).
//!
//! `input[(zz * ny + yy) * nx + xx]` on a `&[f32]` argument checks every read against
//! `input.len()`: the kernel cannot know the buffer holds `nx * ny * nz` elements. A 27-point
//! box filter pays 27 compares and branches per thread, and ptxas cannot batch a read behind a
//! branch; the same CUDA C++ with `size_t` indices and the same checks is 1.94x the time of
//! nvcc's unchecked `int` twin, without the checks 1.50x, and with one launch-wide test choosing
//! between the two bodies 1.54x (H200, `bench/gpu/semantics_twins.py`).
//!
//! So here every check `idx < len` whose failing side can never return (a panic path) gets an
//! upper bound of `idx` over the whole launch, as an expression of what every thread of the
//! launch shares: the kernel's integer arguments, `%ntid` and `%nctaid` (a thread's `%tid.x`
//! is below `%ntid.x`, its `%ctaid.x` below `%nctaid.x`), constants, and the facts of the
//! branches that lead to the check (`x < cols` bounds `x` by `cols - 1`). The bounds follow
//! the index's arithmetic with saturating operations, so they never fall below the value they
//! bound even where the kernel's own arithmetic wraps (a wrapped result is smaller than the
//! true one): a sum by a saturating sum, a product by a saturating product, `umin(a, b)` by the
//! smaller bound, `x & m` by the smaller of the two, `x - c` only when `x` is known to be at
//! least `c`. A value without a bound (a loaded index, a loop counter) leaves its check alone.
//! The bounds of the checks against one length merge into one ([`merge`]).
//!
//! The kernel gets a copy `@k__oxide_vc` in which those checks' branches always go on (`opt`
//! deletes the compares and the panic paths); the copy starts with its launch-wide test as a
//! PTX comment, `// oxide.vc lt(<bound>,<len>)&...`. The launcher evaluates the test with the
//! launch's arguments and geometry (`oxide_rt`'s `Kernel::unchecked_copy`) and runs the copy
//! only where it holds, so every check the copy lacks would have passed in every thread; the
//! kernel itself runs otherwise. (The test inside the kernel, choosing between two bodies, was
//! measured first: 100 to 200 uniform instructions per warp, more than the checks it saved.)
//!
//! A kernel with a block-stride row loop (a counted exit from `distance_exits.rs`) gets a copy
//! of another kind under the same name and test format: all its checks kept, every 64-bit
//! integer argument and length assumed below 2^29 (`lt(cols,536870912)&...`), so that the
//! loop's trip count computes in 32 bits after `opt` (`narrow_arith.rs`).

use super::guarded_epilogs::cond_branch;
use super::guarded_loads::{blocks, Block};
use super::narrow_indices;
use super::one_d_copies;
use super::{definitions, find_params_close, is_ident_byte, split_top, Line};
use std::collections::{HashMap, HashSet};

/// The copy's symbol is the kernel's with this suffix; the runtime looks it up by that name
/// (`oxide_rt::__private::UNCHECKED_SUFFIX`, the same string).
pub const SUFFIX: &str = "__oxide_vc";
/// The copy's first line in PTX: this, then the test.
pub const TEST_MARK: &str = "// oxide.vc ";
/// Bounds are followed through at most this many nested instructions.
const MAX_DEPTH: usize = 24;

/// Appends the unchecked copy of every kernel with checks it can bound after the kernel;
/// returns the copies' names.
pub(super) fn add(lines: &mut Vec<Line>) -> Vec<String> {
    let names = super::append_copies(lines, |define, body| {
        let (name, copy) = unchecked_copy(define, body)?;
        let no = body.first().map_or(0, |l| l.no);
        Some((name, copy.into_iter().map(|text| Line { no, text }).collect()))
    });
    let assumes = lines.iter().any(|l| l.text.contains("call void @llvm.assume(") && !l.text.starts_with("declare"));
    if assumes && !lines.iter().any(|l| l.text.starts_with("declare void @llvm.assume(")) {
        let no = lines.last().map_or(0, |l| l.no);
        lines.push(Line { no, text: "declare void @llvm.assume(i1 noundef)".to_string() });
    }
    names
}

/// The copy's name and lines (`define` to `}`), or None when no check has a bound (and the
/// kernel has no loop a narrowing copy serves).
fn unchecked_copy(define: &str, body: &[Line]) -> Option<(String, Vec<String>)> {
    let name = define.split_once('@')?.1.split('(').next()?.to_string();
    let params = int_params(define)?;
    let blocks = blocks(body);
    let entry = blocks.first().filter(|b| !b.label.is_empty())?;
    let index: HashMap<&str, usize> = blocks.iter().enumerate().map(|(i, b)| (b.label.as_str(), i)).collect();
    let succs: Vec<Vec<usize>> = blocks.iter().map(|b| successors(body, b, &index)).collect();
    let doomed = doomed(body, &blocks, &succs);
    let doms = super::shared_bases::dominators(&blocks);
    // In a kernel with a loop the checks bounded here run outside it (a loop counter has no
    // bound), once per thread, and the copy's loop compiles differently: measured, that cost
    // more than the checks (H200: spmv_csr 0.965 -> 1.422 of nvcc's time, rgb_to_gray and
    // rgba16_levels +0.02), so only kernels without loops get such a copy; kernels with
    // block-stride loops get one that keeps its checks and narrows ([`narrowing_copy`]).
    if succs.iter().enumerate().any(|(b, s)| s.iter().any(|t| doms[b].contains(t))) {
        return narrowing_copy(&name, define, body, &params, *entry.insts.first()?);
    }
    let defs = definitions(body);
    let mut bounds =
        Bounds { body, defs: &defs, params: &params, memo: HashMap::new(), floors: HashMap::new(), in_ne: false };
    // The branch lines whose checks the copy drops, with the side that goes on.
    let mut fixed: HashMap<usize, bool> = HashMap::new();
    // One bound per length: the merge of its checks' bounds.
    let mut per_len: Vec<(String, Bound)> = Vec::new();
    for (b, block) in blocks.iter().enumerate() {
        let Some(&term) = block.insts.last() else { continue };
        let Some((cond, on_true, on_false)) = cond_branch(&body[term].text) else { continue };
        let (Some(&t), Some(&f)) = (index.get(on_true.as_str()), index.get(on_false.as_str())) else { continue };
        let goes_on_true = match (doomed.contains(&t), doomed.contains(&f)) {
            (false, true) => true,
            (true, false) => false,
            _ => continue,
        };
        let Some((idx, len, passes_when)) = below(body, &defs, &cond) else { continue };
        let exact_len = len.parse::<i64>().is_ok_and(|c| c >= 0) || params.get(&len).is_some_and(|&bits| bits > 0);
        if passes_when != goes_on_true || !exact_len {
            continue;
        }
        let facts = facts(body, &defs, &blocks, &doms, &index, b);
        bounds.forget();
        let Some(bound) = bounds.upper(&idx, &facts, MAX_DEPTH) else { continue };
        match per_len.iter_mut().find(|(l, _)| *l == len) {
            Some((_, merged)) => *merged = merge(merged.clone(), bound),
            None => per_len.push((len, bound)),
        }
        fixed.insert(term, goes_on_true);
    }
    if fixed.is_empty() {
        return None;
    }
    // Address indices in 32 bits where their launch-wide bounds are below 2^32 (outside the
    // panic paths, which the copy loses). Only in copies that drop checks: a copy for that
    // alone won nothing measurable (H200: bitonic_sort, fft_radix2, scan, saxpy unchanged
    // within 0.01) and costs each launch its test.
    let block_of: HashMap<usize, usize> =
        blocks.iter().enumerate().flat_map(|(b, block)| block.insts.iter().map(move |&i| (i, b))).collect();
    let mut wide: Option<Bound> = None;
    let dropped: HashSet<usize> = fixed.keys().copied().collect();
    let edits = narrow_indices::narrow(body, &defs, &dropped, &mut |v, line| {
        let Some(&b) = block_of.get(&line).filter(|b| !doomed.contains(b)) else { return false };
        let facts = facts(body, &defs, &blocks, &doms, &index, b);
        bounds.forget();
        let Some(u) = bounds.brief(v, &facts) else { return false };
        // An exact maximum, not `merge`'s operand-wise one: merging the bounds of unlike
        // values (`x`, `4 * i + 3`) multiplies the largest factor of each, and the copy's
        // test failed where every value fits (rgba16_levels: 2^45 - 1 >= 2^32).
        wide = Some(match wide.take() {
            Some(w) => umax_of(w, u),
            None => u,
        });
        true
    });
    if let Some(w) = wide {
        per_len.push((narrow_indices::LIMIT.to_string(), w));
    }
    // A kernel that reads the z extents but no z position (a 2-D output's check that the
    // launch is flat in z) reads them as 1 in the copy, whose test then requires it: two
    // per-thread `LDC`s and compares less (ptxas compares them with the thread's own bounds).
    let flat_z = reads_only_z_extents(body);
    if flat_z {
        for extent in ["nctaid.z", "ntid.z"] {
            per_len.push(("1".to_string(), Bound::Extent(extent.to_string(), true)));
        }
    }
    let test: Vec<String> =
        per_len.iter().map(|(len, b)| format!("lt({},{})", text(b), len.trim_start_matches('%'))).collect();
    let copy_name = format!("{name}{SUFFIX}");
    let mut out = vec![define.replacen(&format!("@{name}("), &format!("@{copy_name}("), 1)];
    // Inline PTX names the kernel's parameters by symbol (a tensor map's address).
    let (param_sym, copy_sym) = (format!("{name}_param_"), format!("{copy_name}_param_"));
    let first = *entry.insts.first()?;
    for (i, line) in body.iter().enumerate() {
        if i == first {
            out.push(format!("  call void asm sideeffect \"{TEST_MARK}{}\", \"\"()", test.join("&")));
            out.extend(edits.entry.iter().cloned());
        }
        out.extend(edits.before.get(&i).into_iter().flatten().cloned());
        let mut text = edits.rewrite.get(&i).unwrap_or(&line.text).replace(&param_sym, &copy_sym);
        if let Some(&on_true) = fixed.get(&i) {
            if let Some((_, t, f)) = cond_branch(&text) {
                text = format!("  br i1 {}, label {t}, label {f}", if on_true { "true" } else { "false" });
            }
        }
        if flat_z && one_d_copies::register(&text).is_some_and(|(reg, axis)| reg.starts_with('n') && axis == 3) {
            if let Some((lhs, _)) = text.split_once(" = ") {
                text = format!("{lhs} = add i32 1, 0");
            }
        }
        out.push(text);
        out.extend(edits.after.get(&i).into_iter().flatten().cloned());
    }
    out.push("}".to_string());
    Some((copy_name, out))
}

/// Every 64-bit integer argument and length is below this in a loop kernel's copy.
pub(super) const NARROW_LIMIT: u64 = 1 << 29;

/// A copy of a kernel with block-stride loops: the kernel itself, assuming every 64-bit
/// integer parameter (lengths too) below [`NARROW_LIMIT`], as its test requires. Loop trip counts computed from them then
/// fit in 32 bits, and `narrow_arith.rs` computes them so after `opt` (xent_rows: 22 SASS
/// instructions per loop on `i64`, against 10 in nvcc's `int` twin). The checks all stay.
fn narrowing_copy(
    name: &str,
    define: &str,
    body: &[Line],
    params: &HashMap<String, u32>,
    first: usize,
) -> Option<(String, Vec<String>)> {
    let mut wide: Vec<&String> = params.iter().filter(|(_, &bits)| bits == 64).map(|(p, _)| p).collect();
    // Only loops whose exit `distance_exits.rs` made counted: `opt` derives their trip count
    // from a remaining distance, on 64 bits. Copies of other loop kernels measured slower
    // (H200, two rounds: spmv_csr 0.96 -> 1.41, sgemm 0.97 -> 1.04; their loops compile
    // differently under the assumptions) and gained nothing elsewhere.
    if wide.is_empty() || !body.iter().any(|l| l.text.contains("%__oxide_de")) {
        return None;
    }
    wide.sort();
    let test: Vec<String> = wide.iter().map(|p| format!("lt({},{NARROW_LIMIT})", p.trim_start_matches('%'))).collect();
    let copy_name = format!("{name}{SUFFIX}");
    let mut out = vec![define.replacen(&format!("@{name}("), &format!("@{copy_name}("), 1)];
    let (param_sym, copy_sym) = (format!("{name}_param_"), format!("{copy_name}_param_"));
    for (i, line) in body.iter().enumerate() {
        if i == first {
            out.push(format!("  call void asm sideeffect \"{TEST_MARK}{}\", \"\"()", test.join("&")));
            for (k, p) in wide.iter().enumerate() {
                out.push(format!("  %__oxide_nl{k} = icmp ult i64 {p}, {NARROW_LIMIT}"));
                out.push(format!("  call void @llvm.assume(i1 %__oxide_nl{k})"));
            }
        }
        out.push(line.text.replace(&param_sym, &copy_sym));
    }
    out.push("}".to_string());
    Some((copy_name, out))
}

/// Whether the body reads `%ntid.z` or `%nctaid.z` and neither `%tid.z` nor `%ctaid.z`.
fn reads_only_z_extents(body: &[Line]) -> bool {
    let z: Vec<&str> =
        body.iter().filter_map(|l| one_d_copies::register(&l.text)).filter(|r| r.1 == 3).map(|r| r.0).collect();
    !z.is_empty() && z.iter().all(|reg| reg.starts_with('n'))
}

/// A bound as the runtime reads it: a parameter's name, a number, `ntid.x` / `nctaid.x-1`
/// (extents, less one), or `op(args)` with the operation's constant after a colon.
fn text(b: &Bound) -> String {
    match b {
        Bound::Exact(v) => v.trim_start_matches('%').to_string(),
        Bound::Extent(reg, minus_one) => format!("{reg}{}", if *minus_one { "-1" } else { "" }),
        Bound::Op(kind, args) => {
            let args: Vec<String> = args.iter().map(text).collect();
            format!("{}({})", kind.replace(' ', ":"), args.join(","))
        }
    }
}

/// The kernel's parameters by name, with their width where they are integers (0 otherwise).
/// Unnamed ones (`[9 x i32] %0`, an array argument) are left out: the launcher passes values
/// by name, so no test can use them.
fn int_params(define: &str) -> Option<HashMap<String, u32>> {
    let (open, close) = (define.find('(')?, find_params_close(define)?);
    let mut out = HashMap::new();
    for p in split_top(&define[open + 1..close]).into_iter().filter(|p| !p.is_empty()) {
        let name = p.split_whitespace().last()?;
        if !name.starts_with('%') {
            return None;
        }
        if name[1..].bytes().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let ty = p.split_whitespace().next().unwrap_or("");
        out.insert(name.to_string(), super::int_bits(ty).unwrap_or(0));
    }
    Some(out)
}

/// The blocks a block's terminator may go to.
fn successors(body: &[Line], b: &Block, index: &HashMap<&str, usize>) -> Vec<usize> {
    let Some(&last) = b.insts.last() else { return Vec::new() };
    let text = &body[last].text;
    text.match_indices("label %")
        .filter_map(|(at, _)| {
            let name = &text[at + "label ".len()..];
            let end = 1 + name[1..].bytes().take_while(|&c| is_ident_byte(c)).count();
            index.get(&name[..end]).copied()
        })
        .collect()
}

/// Blocks from which no `ret` can be reached (the panic paths).
fn doomed(body: &[Line], blocks: &[Block], succs: &[Vec<usize>]) -> HashSet<usize> {
    let mut live: HashSet<usize> = (0..blocks.len())
        .filter(|&b| blocks[b].insts.last().is_some_and(|&i| body[i].text.trim().starts_with("ret")))
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for (b, out) in succs.iter().enumerate() {
            if !live.contains(&b) && out.iter().any(|s| live.contains(s)) {
                live.insert(b);
                changed = true;
            }
        }
    }
    (0..blocks.len()).filter(|b| !live.contains(b)).collect()
}

/// `%c` as `idx < len`: (idx, len, the value of `%c` when `idx < len`).
fn below(body: &[Line], defs: &HashMap<String, usize>, c: &str) -> Option<(String, String, bool)> {
    let (pred, a, b) = icmp(body, defs, c)?;
    match pred {
        "ult" => Some((a, b, true)),
        "uge" => Some((a, b, false)),
        "ugt" => Some((b, a, true)),
        "ule" => Some((b, a, false)),
        _ => None,
    }
}

/// `%c = icmp [samesign] PRED T %a, %b` (T an integer type).
fn icmp<'a>(body: &'a [Line], defs: &HashMap<String, usize>, c: &str) -> Option<(&'a str, String, String)> {
    let rhs = body[*defs.get(c)?].text.split_once(" = ")?.1.trim();
    let rest = rhs.strip_prefix("icmp ")?;
    let rest = rest.strip_prefix("samesign ").unwrap_or(rest);
    let (pred, rest) = rest.split_once(' ')?;
    let (ty, ops) = rest.split_once(' ')?;
    super::int_bits(ty)?;
    let (a, b) = ops.split_once(", ")?;
    Some((pred, a.trim().to_string(), operand(b)))
}

/// An operand without trailing metadata.
fn operand(s: &str) -> String {
    s.split(", !").next().unwrap_or(s).trim().to_string()
}

/// A fact at a check: `value <= bound - strict` (as unsigned numbers), or where `ne`,
/// `value != bound`.
#[derive(Clone)]
struct Fact {
    value: String,
    bound: String,
    strict: bool,
    ne: bool,
}

impl Fact {
    fn order(value: String, bound: String, strict: bool) -> Fact {
        Fact { value, bound, strict, ne: false }
    }
}

/// The facts of the branches on the way to block `b`: for each block that dominates it whose
/// branch target is `b`'s dominator with that block as its only predecessor, what the branch
/// condition says on that edge.
fn facts(
    body: &[Line],
    defs: &HashMap<String, usize>,
    blocks: &[Block],
    doms: &[HashSet<usize>],
    index: &HashMap<&str, usize>,
    b: usize,
) -> Vec<Fact> {
    let mut out = Vec::new();
    // In block order: `doms` is a hash set, and the test's text (its `umin` operands) should
    // not change from one build of the same code to the next.
    let mut dominators: Vec<usize> = doms[b].iter().copied().collect();
    dominators.sort_unstable();
    for d in dominators {
        if d == b {
            continue;
        }
        let Some(&term) = blocks[d].insts.last() else { continue };
        let Some((cond, t, f)) = cond_branch(&body[term].text) else { continue };
        if t == f {
            continue;
        }
        for (target, truth) in [(t, true), (f, false)] {
            let Some(&tb) = index.get(target.as_str()) else { continue };
            let only_from_d = blocks[tb].preds.len() == 1 && blocks[tb].preds[0] == blocks[d].label;
            if only_from_d && doms[b].contains(&tb) {
                edge_facts(body, defs, &cond, truth, &mut out, 4);
            }
        }
    }
    out
}

/// What `%cond == truth` says (through `and`/`or` of conditions).
fn edge_facts(
    body: &[Line],
    defs: &HashMap<String, usize>,
    cond: &str,
    truth: bool,
    out: &mut Vec<Fact>,
    depth: usize,
) {
    let Some(&d) = defs.get(cond) else { return };
    let Some(rhs) = body[d].text.split_once(" = ").map(|(_, r)| r.trim()) else { return };
    if depth > 0 {
        // `select i1 %a, i1 %b, i1 false` is `a && b`; `select i1 %a, i1 true, i1 %b` is `a || b`.
        if let Some(ops) = rhs.strip_prefix("select i1 ") {
            let parts: Vec<String> =
                split_top(ops).into_iter().map(|p| p.trim_start_matches("i1 ").to_string()).collect();
            if let [a, b, c] = parts.as_slice() {
                if (c == "false" && truth) || (b == "true" && !truth) {
                    let other = if c == "false" { b } else { c };
                    edge_facts(body, defs, a, truth, out, depth - 1);
                    edge_facts(body, defs, other, truth, out, depth - 1);
                }
            }
            return;
        }
        // `xor i1 %c, true` is `!c` (LLVM's `brmerge` of two exits).
        if let Some(c) = rhs.strip_prefix("xor i1 ").and_then(|ops| ops.strip_suffix(", true")) {
            edge_facts(body, defs, c.trim(), !truth, out, depth - 1);
            return;
        }
        for (op, when) in [("and i1 ", true), ("or i1 ", false)] {
            if let Some(ops) = rhs.strip_prefix(op) {
                if truth == when {
                    if let Some((a, b)) = ops.split_once(", ") {
                        edge_facts(body, defs, a.trim(), truth, out, depth - 1);
                        edge_facts(body, defs, &operand(b), truth, out, depth - 1);
                    }
                }
                return;
            }
        }
    }
    let Some((pred, a, b)) = icmp(body, defs, cond) else { return };
    // `a != 0` is `0 < a`: what makes `a - 1` a bound (`if x >= 1 { in[x - 1] }`, which
    // LLVM turns into `x != 0`). Other `a != b` narrow a bound that equals the other side
    // (`x != n - 1` with `x < n`: `x <= n - 2`, a 3-D stencil's interior).
    if matches!((pred, truth), ("ne", true) | ("eq", false)) {
        if b == "0" {
            out.push(Fact::order(b, a, true));
        } else {
            out.push(Fact { value: a.clone(), bound: b.clone(), strict: false, ne: true });
            out.push(Fact { value: b, bound: a, strict: false, ne: true });
        }
        return;
    }
    // Normalise to `x < y` (strict) or `x <= y`.
    let (x, y, strict) = match (pred, truth) {
        ("ult", true) | ("uge", false) => (a, b, true),
        ("ule", true) | ("ugt", false) => (a, b, false),
        ("ugt", true) | ("ule", false) => (b, a, true),
        ("uge", true) | ("ult", false) => (b, a, false),
        _ => return,
    };
    out.push(Fact::order(x, y, strict));
}

/// An upper bound as an expression of launch-wide values, built before it is emitted so that
/// the bounds of many checks merge into one (see [`merge`]).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Bound {
    /// A kernel parameter (widened to i64 where narrower) or a constant.
    Exact(String),
    /// `%ntid.x`-like extent of the launch, less one when `.1`.
    Extent(String, bool),
    /// A monotone operation (`uadd.sat`, `mul.sat`, `umin`, `umax`, or one with a constant:
    /// `sub C`, `usub.sat C`, `lshr C`, `udiv C`) of its operands.
    Op(String, Vec<Bound>),
}

fn op(kind: &str, args: Vec<Bound>) -> Bound {
    Bound::Op(kind.to_string(), args)
}

/// A bound of both `a` and `b`: the same operation of merged operands where both are that
/// operation (every operation here is non-decreasing in each operand), their maximum elsewhere.
/// Merged, the 27 reads of a box filter need one bound instead of 27.
fn merge(a: Bound, b: Bound) -> Bound {
    if a == b {
        return a;
    }
    if is_umax(&a) || is_umax(&b) {
        return umax_of(a, b);
    }
    match (a, b) {
        // `ifle` and `ne` are not monotone in their conditions: kept whole.
        (Bound::Op(ka, xa), Bound::Op(kb, mut xb))
            if ka == kb && xa.len() == xb.len() && !matches!(ka.as_str(), "ifle" | "ne") =>
        {
            // Commutative operations may list their operands in either order (`ny * z`, `zz * ny`).
            let commutative = matches!(ka.as_str(), "uadd.sat" | "mul.sat" | "umin" | "umax");
            if commutative && xa.len() == 2 {
                let straight = alike(&xa[0], &xb[0]) + alike(&xa[1], &xb[1]);
                let crossed = alike(&xa[0], &xb[1]) + alike(&xa[1], &xb[0]);
                if crossed > straight {
                    xb.swap(0, 1);
                }
            }
            Bound::Op(ka, xa.into_iter().zip(xb).map(|(x, y)| merge(x, y)).collect())
        }
        (a, b) => umax_of(a, b),
    }
}

fn is_umax(b: &Bound) -> bool {
    matches!(b, Bound::Op(k, _) if k == "umax")
}

/// The maximum of `a` and `b` as one `umax` of distinct operands.
fn umax_of(a: Bound, b: Bound) -> Bound {
    let mut all: Vec<Bound> = Vec::new();
    for x in [a, b] {
        let parts = match x {
            Bound::Op(k, args) if k == "umax" => args,
            x => vec![x],
        };
        for p in parts {
            if !all.contains(&p) {
                all.push(p);
            }
        }
    }
    if all.len() == 1 {
        all.remove(0)
    } else {
        op("umax", all)
    }
}

/// How much two bounds look alike: 2 equal, 1 the same kind of node, 0 otherwise.
fn alike(a: &Bound, b: &Bound) -> u32 {
    match (a, b) {
        _ if a == b => 2,
        (Bound::Op(ka, _), Bound::Op(kb, _)) if ka == kb => 1,
        (Bound::Exact(_), Bound::Exact(_)) | (Bound::Extent(..), Bound::Extent(..)) => 1,
        _ => 0,
    }
}

/// Finds the bounds of a function's values from its parameters.
struct Bounds<'a> {
    body: &'a [Line],
    defs: &'a HashMap<String, usize>,
    params: &'a HashMap<String, u32>,
    memo: HashMap<String, Option<Bound>>,
    floors: HashMap<String, Bound>,
    /// Set while the other side of an `a != b` is bounded (its own `!=` facts name `a`).
    in_ne: bool,
}

/// The largest 64-bit number: the bound that fails every test.
const MAX: &str = "18446744073709551615";

impl Bounds<'_> {
    /// Drops what was found at one check (its facts are not the next one's).
    fn forget(&mut self) {
        self.memo.clear();
        self.floors.clear();
    }

    /// A bound every thread of the launch has `v` at most (unsigned), or None.
    fn upper(&mut self, v: &str, facts: &[Fact], depth: usize) -> Option<Bound> {
        if let Some(known) = self.memo.get(v) {
            return known.clone();
        }
        let mut best = self.structural(v, facts, depth);
        let bounding: Vec<Fact> = facts.iter().filter(|f| f.value == v && !f.ne).cloned().collect();
        for fact in bounding {
            if depth == 0 {
                break;
            }
            let Some(u) = self.upper(&fact.bound, facts, depth - 1) else { continue };
            let u = if fact.strict { op("usub.sat 1", vec![u]) } else { u };
            best = Some(match best {
                Some(b) => op("umin", vec![b, u]),
                None => u,
            });
        }
        if let (Some(u), false) = (&best, self.in_ne || depth == 0) {
            best = Some(self.narrowed(u.clone(), v, facts, depth - 1));
        }
        if !self.in_ne {
            self.memo.insert(v.to_string(), best.clone());
        }
        best
    }

    /// `u` less one where the launch shows it equal to a value `v` differs from (`x != n - 1`
    /// with `x <= n - 1`): `ne(u, lo, hi)` with the other side's bounds, checked at launch.
    fn narrowed(&mut self, mut u: Bound, v: &str, facts: &[Fact], depth: usize) -> Bound {
        let others: Vec<String> = facts.iter().filter(|f| f.ne && f.value == v).map(|f| f.bound.clone()).collect();
        self.in_ne = true;
        for other in others {
            let lo = self.floor(&other, facts, depth);
            let Some(hi) = self.upper(&other, facts, depth) else { continue };
            if !is_zero(&lo) {
                u = op("ne", vec![u, lo, hi]);
            }
        }
        self.in_ne = false;
        u
    }

    /// The bound of `v` that the facts on it give, where they give one (a length less one: a
    /// short test), else [`Bounds::upper`]'s.
    fn brief(&mut self, v: &str, facts: &[Fact]) -> Option<Bound> {
        let direct: Vec<Fact> = facts.iter().filter(|f| f.value == v && !f.ne).cloned().collect();
        let from_facts = direct
            .iter()
            .filter_map(|f| {
                let u = self.upper(&f.bound, facts, MAX_DEPTH)?;
                Some(if f.strict { op("usub.sat 1", vec![u]) } else { u })
            })
            .reduce(|a, b| op("umin", vec![a, b]));
        from_facts.or_else(|| self.upper(v, facts, MAX_DEPTH))
    }

    fn structural(&mut self, v: &str, facts: &[Fact], depth: usize) -> Option<Bound> {
        if v.parse::<i64>().is_ok_and(|c| c >= 0) || self.params.get(v).is_some_and(|&bits| bits > 0) {
            return Some(Bound::Exact(v.to_string()));
        }
        if depth == 0 {
            return None;
        }
        let d = depth - 1;
        let rhs = self.body[*self.defs.get(v)?].text.split_once(" = ")?.1.trim().to_string();
        let rhs = rhs.split(", !").next().unwrap_or(&rhs).to_string();
        if let Some(call) = rhs.strip_prefix("tail call ").or_else(|| rhs.strip_prefix("call ")) {
            return self.call_bound(call, facts, d);
        }
        let (opcode, rest) = rhs.split_once(' ')?;
        let rest = strip_flags(rest);
        let two = |s: &mut Self, a: &str, b: &str, kind: &str| -> Option<Bound> {
            Some(op(kind, vec![s.upper(a, facts, d)?, s.upper(b, facts, d)?]))
        };
        match opcode {
            "extractvalue" => {
                // The value of `umul/uadd.with.overflow`: the operation's own bound.
                let (pair, idx) = rest.rsplit_once(", ")?;
                if idx.trim() != "0" {
                    return None;
                }
                let pair = pair.split_whitespace().last()?;
                let call = self.body[*self.defs.get(pair)?].text.split_once(" = ")?.1.trim().to_string();
                let call = call.strip_prefix("tail call ").or_else(|| call.strip_prefix("call "))?.to_string();
                let (a, b) = call_args(&call)?;
                let kind = if call.contains("@llvm.umul.with.overflow.") {
                    "mul.sat"
                } else if call.contains("@llvm.uadd.with.overflow.") {
                    "uadd.sat"
                } else {
                    return None;
                };
                two(self, &a, &b, kind)
            }
            "zext" => self.upper(rest.split_whitespace().nth(1)?, facts, d),
            "trunc" => {
                let words: Vec<&str> = rest.split_whitespace().collect();
                let [_, src, "to", to] = words.as_slice() else { return None };
                let max = ((1u128 << super::int_bits(to)?) - 1).to_string();
                Some(op("umin", vec![self.upper(src, facts, d)?, Bound::Exact(max)]))
            }
            "select" => {
                let parts = split_top(rest);
                let [_, a, b] = parts.as_slice() else { return None };
                let (a, b) = (a.split_whitespace().last()?.to_string(), b.split_whitespace().last()?.to_string());
                Some(umax_of(self.upper(&a, facts, d)?, self.upper(&b, facts, d)?))
            }
            _ => {
                let (ty, ops) = rest.split_once(' ')?;
                let bits = super::int_bits(ty)?;
                let (a, b) = ops.split_once(", ")?;
                let (a, b) = (a.trim().to_string(), b.trim().to_string());
                match opcode {
                    "add" => match negative(&b, bits) {
                        // `a - c`: where `a >= c` for certain, or where the launch shows it.
                        Some(c) if self.lower(&a, facts, d) >= c => {
                            Some(op(&format!("sub {c}"), vec![self.upper(&a, facts, d)?]))
                        }
                        Some(c) => {
                            let less = op(&format!("usub.sat {c}"), vec![self.upper(&a, facts, d)?]);
                            self.unwrapped(Bound::Exact(c.to_string()), &a, less, facts, d)
                        }
                        None => two(self, &a, &b, "uadd.sat"),
                    },
                    "or" => two(self, &a, &b, "uadd.sat"),
                    "mul" => two(self, &a, &b, "mul.sat"),
                    "shl" => {
                        let s: u32 = b.parse().ok().filter(|&s: &u32| s < bits.min(63))?;
                        Some(op("mul.sat", vec![self.upper(&a, facts, d)?, Bound::Exact((1u64 << s).to_string())]))
                    }
                    "lshr" | "udiv" => {
                        let c: u64 = b.parse().ok().filter(|&c| c > 0)?;
                        Some(op(&format!("{opcode} {c}"), vec![self.upper(&a, facts, d)?]))
                    }
                    "and" => self.either(&a, &b, facts, d),
                    "sub" if rhs.contains(" nuw ") => self.upper(&a, facts, d),
                    "sub" => {
                        let (ua, ub) = (self.upper(&a, facts, d)?, self.upper(&b, facts, d)?);
                        self.unwrapped(ub, &a, ua, facts, d)
                    }
                    _ => None,
                }
            }
        }
    }

    /// The bound `u` of `a - b`, `b` at most `ub`: `u` where the launch shows `b <= a` in every
    /// thread (`ub` at most `a`'s lower bound), else the largest number, which fails the test.
    /// None where nothing bounds `a` from below.
    fn unwrapped(&mut self, ub: Bound, a: &str, u: Bound, facts: &[Fact], d: usize) -> Option<Bound> {
        let lo = self.floor(a, facts, d);
        (!is_zero(&lo)).then(|| op("ifle", vec![ub, lo, u, Bound::Exact(MAX.to_string())]))
    }

    /// `umin(a, b)` is at most either operand's bound: both where both have one.
    fn either(&mut self, a: &str, b: &str, facts: &[Fact], d: usize) -> Option<Bound> {
        match (self.upper(a, facts, d), self.upper(b, facts, d)) {
            (Some(ua), Some(ub)) => Some(op("umin", vec![ua, ub])),
            (Some(u), None) | (None, Some(u)) => Some(u),
            (None, None) => None,
        }
    }

    /// Bounds of the pure intrinsics and of the special registers.
    fn call_bound(&mut self, call: &str, facts: &[Fact], d: usize) -> Option<Bound> {
        if let Some(at) = call.find("@llvm.nvvm.read.ptx.sreg.") {
            let reg = call[at + "@llvm.nvvm.read.ptx.sreg.".len()..].split('(').next()?;
            let (kind, axis) = reg.split_once('.')?;
            if !matches!(axis, "x" | "y" | "z") {
                return None;
            }
            return match kind {
                "tid" => Some(Bound::Extent(format!("ntid.{axis}"), true)),
                "ntid" => Some(Bound::Extent(format!("ntid.{axis}"), false)),
                "ctaid" => Some(Bound::Extent(format!("nctaid.{axis}"), true)),
                "nctaid" => Some(Bound::Extent(format!("nctaid.{axis}"), false)),
                _ => None,
            };
        }
        let (a, b) = call_args(call)?;
        if call.contains("@llvm.umin.") {
            return self.either(&a, &b, facts, d);
        }
        if call.contains("@llvm.umax.") {
            return Some(umax_of(self.upper(&a, facts, d)?, self.upper(&b, facts, d)?));
        }
        let kind = if call.contains("@llvm.uadd.sat.") {
            "uadd.sat"
        } else if call.contains("@llvm.usub.sat.") {
            // `h.saturating_sub(1)`: a constant comes off the bound too (a clamp to the last row).
            let ua = self.upper(&a, facts, d)?;
            return Some(match b.parse::<u64>() {
                Ok(c) if c > 0 => op(&format!("usub.sat {c}"), vec![ua]),
                _ => ua,
            });
        } else {
            return None;
        };
        Some(op(kind, vec![self.upper(&a, facts, d)?, self.upper(&b, facts, d)?]))
    }

    /// A constant every thread's `v` is at least (0 when nothing better is known): constants,
    /// `umax`, `zext`, `add nuw`, a mask equal to a `trunc` of the same value, and the facts
    /// `w < v` (then `v >= lower(w) + 1`).
    fn lower(&self, v: &str, facts: &[Fact], depth: usize) -> u64 {
        if let Ok(c) = v.parse::<u64>() {
            return c;
        }
        if depth == 0 {
            return 0;
        }
        let d = depth - 1;
        let from_facts = facts
            .iter()
            .filter(|f| f.bound == v && !f.ne)
            .map(|f| self.lower(&f.value, facts, d).saturating_add(u64::from(f.strict)))
            .max()
            .unwrap_or(0);
        let Some(rhs) = self.defs.get(v).and_then(|&i| self.body[i].text.split_once(" = ")).map(|(_, r)| r.trim())
        else {
            return from_facts;
        };
        let rhs = rhs.split(", !").next().unwrap_or(rhs);
        let own = if let Some(call) = rhs.strip_prefix("tail call ").or_else(|| rhs.strip_prefix("call ")) {
            match call_args(call) {
                Some((a, b)) if call.contains("@llvm.umax.") => self.lower(&a, facts, d).max(self.lower(&b, facts, d)),
                _ => 0,
            }
        } else if let Some(rest) = rhs.strip_prefix("zext ") {
            strip_flags(rest).split_whitespace().nth(1).map_or(0, |src| self.lower(src, facts, d))
        } else if let Some(rest) = rhs.strip_prefix("add nuw ") {
            let ops = strip_flags(rest).split_once(' ').map_or("", |(_, o)| o);
            ops.split_once(", ")
                .map_or(0, |(a, b)| self.lower(a.trim(), facts, d).saturating_add(self.lower(b.trim(), facts, d)))
        } else if let Some(rest) = rhs.strip_prefix("and i64 ") {
            // `x & (2^k - 1)` is `zext(trunc x to ik)`: whatever bounds that trunc below.
            rest.split_once(", ").map_or(0, |(x, m)| {
                let bits = m
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|m| (m + 1).is_power_of_two())
                    .map(|m| (m + 1).trailing_zeros());
                bits.and_then(|k| self.trunc_of(x.trim(), k)).map_or(0, |t| self.lower(&t, facts, d))
            })
        } else {
            0
        };
        own.max(from_facts)
    }

    /// A bound every thread of the launch has `v` at least, as an expression of launch-wide
    /// values (0 where nothing is known): what makes `i - n` a bound where `i`'s lowest value
    /// is a sum of launch values (a stencil's `i - nx` in its interior, `x, y, z >= 1`). The
    /// operations are the upper bounds' (saturating, each at most the true result where the
    /// kernel's own operation does not wrap); an operation that may wrap is taken only where
    /// the upper bounds of its operands show it does not (`ifle(.., limit, .., 0)`).
    fn floor(&mut self, v: &str, facts: &[Fact], depth: usize) -> Bound {
        if v.parse::<u64>().is_ok() || self.params.get(v).is_some_and(|&bits| bits > 0) {
            return Bound::Exact(v.to_string());
        }
        if depth == 0 {
            return zero();
        }
        if let Some(known) = self.floors.get(v) {
            return known.clone();
        }
        let d = depth - 1;
        let mut parts = vec![self.floor_of_def(v, facts, d)];
        let below: Vec<Fact> = facts.iter().filter(|f| f.bound == v && !f.ne).cloned().collect();
        for f in below {
            let w = self.floor(&f.value, facts, d);
            parts.push(if f.strict { add_floor(w, Bound::Exact("1".to_string())) } else { w });
        }
        let parts: Vec<Bound> = parts.into_iter().filter(|p| !is_zero(p)).collect();
        let out = parts.into_iter().reduce(umax_of).unwrap_or_else(zero);
        self.floors.insert(v.to_string(), out.clone());
        out
    }

    /// [`Bounds::floor`] from the instruction that defines `v`.
    fn floor_of_def(&mut self, v: &str, facts: &[Fact], d: usize) -> Bound {
        let Some(rhs) = self.defs.get(v).and_then(|&i| self.body[i].text.split_once(" = ")).map(|(_, r)| r.trim())
        else {
            return zero();
        };
        let rhs = rhs.split(", !").next().unwrap_or(rhs).to_string();
        if let Some(call) = rhs.strip_prefix("tail call ").or_else(|| rhs.strip_prefix("call ")) {
            if let Some(at) = call.find("@llvm.nvvm.read.ptx.sreg.n") {
                let reg = call[at + "@llvm.nvvm.read.ptx.sreg.".len()..].split('(').next().unwrap_or("");
                return match reg {
                    "ntid.x" | "ntid.y" | "ntid.z" | "nctaid.x" | "nctaid.y" | "nctaid.z" => {
                        Bound::Extent(reg.to_string(), false)
                    }
                    _ => zero(),
                };
            }
            let Some((a, b)) = call_args(call) else { return zero() };
            let (fa, fb) = (self.floor(&a, facts, d), self.floor(&b, facts, d));
            return if call.contains("@llvm.umax.") {
                umax_of(fa, fb)
            } else if call.contains("@llvm.umin.") {
                min_floor(fa, fb)
            } else {
                zero()
            };
        }
        let Some((opcode, rest)) = rhs.split_once(' ') else { return zero() };
        let nuw = rest.contains("nuw ");
        let disjoint = rest.contains("disjoint ");
        let rest = strip_flags(rest);
        match opcode {
            "zext" => rest.split_whitespace().nth(1).map_or_else(zero, |src| self.floor(src, facts, d)),
            "select" => {
                let parts = split_top(rest);
                let [_, a, b] = parts.as_slice() else { return zero() };
                let (a, b) = (a.split_whitespace().last().unwrap_or(""), b.split_whitespace().last().unwrap_or(""));
                let (fa, fb) = (self.floor(a, facts, d), self.floor(b, facts, d));
                min_floor(fa, fb)
            }
            "extractvalue" => {
                // The value of `umul/uadd.with.overflow`: the operation's, where it does not wrap.
                let Some((pair, "0")) = rest.rsplit_once(", ").map(|(p, i)| (p, i.trim())) else { return zero() };
                let Some(pair) = pair.split_whitespace().last() else { return zero() };
                let Some(call) = self.defs.get(pair).and_then(|&i| self.body[i].text.split_once(" = ")) else {
                    return zero();
                };
                let call = call.1.trim().to_string();
                let Some((a, b)) = call_args(&call) else { return zero() };
                let kind = if call.contains("@llvm.umul.with.overflow.i64") {
                    "mul.sat"
                } else if call.contains("@llvm.uadd.with.overflow.i64") {
                    "uadd.sat"
                } else {
                    return zero();
                };
                self.floor_op(kind, &a, &b, 64, false, facts, d)
            }
            _ => {
                let Some((ty, ops)) = rest.split_once(' ') else { return zero() };
                let Some(bits) = super::int_bits(ty) else { return zero() };
                let Some((a, b)) = ops.split_once(", ") else { return zero() };
                let (a, b) = (a.trim(), b.trim());
                match opcode {
                    "add" => match negative(b, bits) {
                        // `a - c` is at least `a`'s floor less c, wrapped or not (a wrapped
                        // result is larger still).
                        Some(c) => op(&format!("usub.sat {c}"), vec![self.floor(a, facts, d)]),
                        None => self.floor_op("uadd.sat", a, b, bits, nuw, facts, d),
                    },
                    "or" if disjoint => self.floor_op("uadd.sat", a, b, bits, true, facts, d),
                    "or" => umax_of(self.floor(a, facts, d), self.floor(b, facts, d)),
                    "mul" => self.floor_op("mul.sat", a, b, bits, nuw, facts, d),
                    "shl" => match b.parse::<u32>() {
                        Ok(s) if s < bits.min(63) => {
                            let times = (1u64 << s).to_string();
                            self.floor_op("mul.sat", a, &times, bits, nuw, facts, d)
                        }
                        _ => zero(),
                    },
                    "lshr" | "udiv" => match b.parse::<u64>() {
                        Ok(c) if c > 0 => op(&format!("{opcode} {c}"), vec![self.floor(a, facts, d)]),
                        _ => zero(),
                    },
                    "and" => {
                        // `x & (2^k - 1)` is `x` where `x < 2^k`.
                        let Some(m) =
                            b.parse::<u64>().ok().filter(|m| m.checked_add(1).is_some_and(u64::is_power_of_two))
                        else {
                            return zero();
                        };
                        let fx = self.floor(a, facts, d);
                        match self.upper(a, facts, d) {
                            Some(ux) if !is_zero(&fx) => op("ifle", vec![ux, Bound::Exact(m.to_string()), fx, zero()]),
                            _ => zero(),
                        }
                    }
                    _ => zero(),
                }
            }
        }
    }

    /// The floor of `a + b` or `a * b` (`kind` its saturating form) in `bits`-wide arithmetic:
    /// the operation of the floors, where the operation cannot wrap (`nuw`, or the operands'
    /// upper bounds say so at launch).
    #[allow(clippy::too_many_arguments)]
    fn floor_op(&mut self, kind: &str, a: &str, b: &str, bits: u32, nuw: bool, facts: &[Fact], d: usize) -> Bound {
        let (fa, fb) = (self.floor(a, facts, d), self.floor(b, facts, d));
        let exact = match kind {
            "mul.sat" if is_zero(&fa) || is_zero(&fb) => return zero(),
            "uadd.sat" if is_zero(&fa) => return fb,
            "uadd.sat" if is_zero(&fb) => return fa,
            _ => op(kind, vec![fa, fb]),
        };
        if nuw {
            return exact;
        }
        let (Some(ua), Some(ub)) = (self.upper(a, facts, d), self.upper(b, facts, d)) else { return zero() };
        // Saturated at 2^64 - 1, a 64-bit bound says nothing: the limit is one less there.
        let limit = if bits >= 64 { u64::MAX - 1 } else { (1u64 << bits) - 1 };
        op("ifle", vec![op(kind, vec![ua, ub]), Bound::Exact(limit.to_string()), exact, zero()])
    }

    /// The value `trunc i64 x to i{bits}` where the function computes it.
    fn trunc_of(&self, x: &str, bits: u32) -> Option<String> {
        let want = format!("trunc i64 {x} to i{bits}");
        self.defs.iter().find(|(_, &i)| self.body[i].text.contains(&want)).map(|(name, _)| name.clone())
    }
}

fn zero() -> Bound {
    Bound::Exact("0".to_string())
}

fn is_zero(b: &Bound) -> bool {
    matches!(b, Bound::Exact(v) if v == "0")
}

/// The floor of a sum: the sum of the floors, a zero left out.
fn add_floor(a: Bound, b: Bound) -> Bound {
    match (is_zero(&a), is_zero(&b)) {
        (true, _) => b,
        (_, true) => a,
        _ => op("uadd.sat", vec![a, b]),
    }
}

/// The floor of either value: the smaller floor.
fn min_floor(a: Bound, b: Bound) -> Bound {
    if is_zero(&a) || is_zero(&b) {
        zero()
    } else {
        op("umin", vec![a, b])
    }
}

/// `c` when `v` is the constant `-c` of a `bits`-wide operation.
fn negative(v: &str, bits: u32) -> Option<u64> {
    let c: i64 = v.parse().ok()?;
    (c < 0 && bits <= 64).then(|| c.unsigned_abs())
}

/// The two value operands of `T @f(T a, T b)`.
pub(super) fn call_args(call: &str) -> Option<(String, String)> {
    let open = call.find('(')?;
    let close = call.rfind(')')?;
    let args = split_top(&call[open + 1..close]);
    let [a, b] = args.as_slice() else { return None };
    Some((a.split_whitespace().last()?.to_string(), b.split_whitespace().last()?.to_string()))
}

fn strip_flags(mut s: &str) -> &str {
    loop {
        let t = s.trim_start();
        match ["nuw ", "nsw ", "nneg ", "exact ", "disjoint ", "samesign "].iter().find_map(|f| t.strip_prefix(f)) {
            Some(rest) => s = rest,
            None => return t,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{assert_valid_ir, transformed};
    use super::*;

    /// A 2-D read `input[y * cols + x]` behind `x < cols && y < rows`, and a read at a loaded
    /// index that no bound covers.
    const KERNEL: &str = "\
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
  %inside = select i1 %in_x, i1 %in_y, i1 false
  br i1 %inside, label %body, label %exit

body:                                             ; preds = %start
  %row = mul i64 %y, %cols
  %i = add i64 %row, %x
  %ok = icmp ult i64 %i, %__oxide_in_input_len
  br i1 %ok, label %read, label %panic

read:                                             ; preds = %body
  %p = getelementptr inbounds float, ptr %__oxide_in_input, i64 %i
  %v = load float, ptr %p, align 4
  %q = getelementptr inbounds i64, ptr %__oxide_in_ix, i64 %x
  %j = load i64, ptr %q, align 8
  %ok2 = icmp uge i64 %j, %__oxide_in_input_len
  br i1 %ok2, label %panic, label %read2

read2:                                            ; preds = %read
  %p2 = getelementptr inbounds float, ptr %__oxide_in_input, i64 %j
  %w = load float, ptr %p2, align 4
  %s = fadd float %v, %w
  store float %s, ptr %out, align 4
  br label %exit

exit:                                             ; preds = %read2, %start
  ret void

panic:                                            ; preds = %read, %body
  call void asm sideeffect \"trap; // k_param_1\", \"\"()
  unreachable
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
";

    fn copy_of(ir: &str) -> (String, Vec<String>) {
        let mut names = Vec::new();
        let (out, _) = transformed(ir, |lines| {
            names = add(lines);
            names.len()
        });
        (out, names)
    }

    #[test]
    fn a_check_bounded_over_the_launch_is_gone_from_the_copy() {
        let (out, names) = copy_of(KERNEL);
        assert_eq!(names, ["k__oxide_vc"], "{out}");
        assert_valid_ir("versioned_checks", &out);
        let copy = &out[out.find("@k__oxide_vc(").unwrap()..];
        // The bounded check always goes on in the copy; the loaded index keeps its check.
        assert!(copy.contains("br i1 true, label %read, label %panic"), "{out}");
        assert!(copy.contains("br i1 %ok2, label %panic, label %read2"), "{out}");
        // The kernel itself is unchanged; inline PTX naming its parameters follows the copy.
        let kernel = &out[..out.find("@k__oxide_vc(").unwrap()];
        assert!(kernel.contains("br i1 %ok, label %read, label %panic"), "{out}");
        assert!(copy.contains("trap; // k__oxide_vc_param_1"), "{out}");
    }

    #[test]
    fn the_test_bounds_the_largest_index_from_the_facts_on_the_way() {
        let (out, _) = copy_of(KERNEL);
        let test = out.lines().find(|l| l.contains(TEST_MARK)).unwrap();
        // x < cols and y < rows: (rows - 1) * cols + (cols - 1) < input.len(), the extents
        // bounding x and y too.
        let want = "lt(uadd.sat(mul.sat(umin(ntid.y-1,usub.sat:1(rows)),cols),\
                    umin(uadd.sat(mul.sat(nctaid.x-1,ntid.x),ntid.x-1),usub.sat:1(cols))),__oxide_in_input_len)";
        assert!(test.contains(want), "{test}");
        // It is the entry block's first instruction.
        let copy = &out[out.find("@k__oxide_vc(").unwrap()..];
        assert!(copy.lines().nth(2).is_some_and(|l| l.contains(TEST_MARK)), "{copy}");
    }

    #[test]
    fn a_kernel_flat_in_z_reads_the_z_extents_as_1_in_its_copy() {
        // A 2-D output's check that the launch is one deep: `nctaid.z == 1 && ntid.z == 1`.
        let flat = KERNEL
            .replace(
                "  %inside = select i1 %in_x, i1 %in_y, i1 false\n",
                "  %inside2 = select i1 %in_x, i1 %in_y, i1 false\n  \
                 %gz = tail call i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()\n  %bz = tail call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()\n  \
                 %g1 = icmp eq i32 %gz, 1\n  %b1 = icmp eq i32 %bz, 1\n  %one = and i1 %g1, %b1\n  \
                 %inside = and i1 %inside2, %one\n",
            )
            .replace("declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()\n", "declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()\ndeclare i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()\ndeclare i32 @llvm.nvvm.read.ptx.sreg.ntid.z()\n");
        let (out, _) = copy_of(&flat);
        assert_valid_ir("versioned_checks_flat_z", &out);
        let (kernel, copy) = out.split_at(out.find("@k__oxide_vc(").unwrap());
        assert!(copy.contains("  %gz = add i32 1, 0\n  %bz = add i32 1, 0\n"), "{copy}");
        assert!(kernel.contains("%gz = tail call i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()"), "{kernel}");
        let test = copy.lines().find(|l| l.contains(TEST_MARK)).unwrap();
        assert!(test.contains("&lt(nctaid.z-1,1)&lt(ntid.z-1,1)\""), "{test}");
        // A kernel that also reads a z position (a 3-D one) keeps its reads and its test.
        let deep = flat
            .replace(
                "%bz = tail call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()",
                "%bz = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.z()",
            )
            .replace("declare i32 @llvm.nvvm.read.ptx.sreg.ntid.z()", "declare i32 @llvm.nvvm.read.ptx.sreg.tid.z()");
        let (out, _) = copy_of(&deep);
        let copy = &out[out.find("@k__oxide_vc(").unwrap()..];
        assert!(
            copy.contains("%gz = tail call i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()") && !copy.contains("z-1,1)"),
            "{copy}"
        );
    }

    /// A row loop whose exit `distance_exits.rs` made counted (`%__oxide_de0_l`).
    const ROW_LOOP: &str = "define ptx_kernel void @k(ptr noalias readonly %__oxide_in_x, i64 %__oxide_in_x_len, i64 %cols, i32 %w, ptr %out) {
start:
  %__oxide_de0_l = call i64 @llvm.usub.sat.i64(i64 %cols, i64 4)
  br label %loop

loop:                                             ; preds = %loop, %start
  %o = phi i64 [ 0, %start ], [ %n, %loop ]
  %n = add nuw i64 %o, 4
  %more = icmp ult i64 %n, %__oxide_de0_l
  br i1 %more, label %loop, label %exit

exit:                                             ; preds = %loop
  ret void
}

declare i64 @llvm.usub.sat.i64(i64, i64)
";

    #[test]
    fn a_row_loop_kernel_gets_a_copy_assuming_its_64_bit_integers_small() {
        let (out, names) = copy_of(ROW_LOOP);
        assert_eq!(names, ["k__oxide_vc"], "{out}");
        assert_valid_ir("versioned_checks_row_loop", &out);
        let (kernel, copy) = out.split_at(out.find("@k__oxide_vc(").unwrap());
        let want = format!(
            "start:\n  call void asm sideeffect \"{TEST_MARK}lt(__oxide_in_x_len,536870912)&lt(cols,536870912)\", \"\"()\n  \
             %__oxide_nl0 = icmp ult i64 %__oxide_in_x_len, 536870912\n  call void @llvm.assume(i1 %__oxide_nl0)\n  \
             %__oxide_nl1 = icmp ult i64 %cols, 536870912\n  call void @llvm.assume(i1 %__oxide_nl1)\n  %__oxide_de0_l"
        );
        assert!(copy.contains(&want), "{copy}");
        assert!(!kernel.contains("assume"), "{kernel}");
        assert!(out.contains("declare void @llvm.assume(i1 noundef)"), "{out}");
        // Other loops (no counted distance exit) get no copy: measured slower.
        let other = ROW_LOOP.replace("%__oxide_de0_l", "%limit");
        assert!(copy_of(&other).1.is_empty());
    }

    #[test]
    fn unbounded_indices_and_returning_failures_get_no_copy() {
        let loaded = KERNEL.replace("%row = mul i64 %y, %cols", "%row = load i64, ptr %out, align 8");
        assert!(copy_of(&loaded).1.is_empty());
        // A failing side that returns is not a panic path: no check to drop.
        let returning =
            KERNEL.replace("  call void asm sideeffect \"trap; // k_param_1\", \"\"()\n  unreachable", "  ret void");
        assert!(copy_of(&returning).1.is_empty());
        // `x - 1` without a lower bound on x is no bound.
        let minus = KERNEL.replace("%i = add i64 %row, %x", "%x1 = add i64 %x, -1\n  %i = add i64 %row, %x1");
        assert!(copy_of(&minus).1.is_empty());
        // With `x >= 1` on the way it is.
        let guarded = minus.replace(
            "%inside = select i1 %in_x, i1 %in_y, i1 false",
            "%pos = icmp uge i64 %x, 1\n  %in_xy = select i1 %in_x, i1 %in_y, i1 false\n  %inside = and i1 %in_xy, %pos",
        );
        assert_eq!(copy_of(&guarded).1, ["k__oxide_vc"]);
        // So it is with `x != 0` (LLVM's form of `x >= 1`), and beside an unnamed array
        // parameter (`w: [f32; 9]`), which no test can name.
        let nonzero = minus
            .replace(
                "%inside = select i1 %in_x, i1 %in_y, i1 false",
                "%nz = icmp ne i64 %x, 0\n  %in_xy = select i1 %in_x, i1 %in_y, i1 false\n  %inside = and i1 %nz, %in_xy",
            )
            .replace("ptr %out) {", "ptr %out, [9 x i32] %0) {");
        assert_eq!(copy_of(&nonzero).1, ["k__oxide_vc"]);
        // And with `x == 0` negated by `xor ..., true` (LLVM's merged exits).
        let negated = minus.replace(
            "%inside = select i1 %in_x, i1 %in_y, i1 false",
            "%z = icmp eq i64 %x, 0\n  %nz = xor i1 %z, true\n  %in_xy = select i1 %in_x, i1 %in_y, i1 false\n  %inside = and i1 %nz, %in_xy",
        );
        assert_eq!(copy_of(&negated).1, ["k__oxide_vc"]);
        // `xor` with another value says nothing.
        let other = negated.replace("%nz = xor i1 %z, true", "%nz = xor i1 %z, %in_y");
        assert!(copy_of(&other).1.is_empty());
    }

    /// A 2-D 5-point stencil's interior, `i = y * cols + x` (wrapping arithmetic, as rustc
    /// leaves it) behind `x < cols`, `y < rows` and `x, y` neither 0 nor the last: reads at
    /// `i - cols`, `i - 1` and `i + cols`, whose indices only the interior bounds.
    const INTERIOR: &str = "\
define ptx_kernel void @k(ptr noalias readonly %__oxide_in_input, i64 %__oxide_in_input_len, i64 %cols, i64 %rows, ptr %out) {
start:
  %bx = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %nx = tail call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %tx = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = mul nuw nsw i32 %bx, %nx
  %x32 = add nuw nsw i32 %m, %tx
  %x = zext nneg i32 %x32 to i64
  %ty = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %y = zext nneg i32 %ty to i64
  %in_x = icmp ult i64 %x, %cols
  %in_y = icmp ult i64 %y, %rows
  %inside = select i1 %in_x, i1 %in_y, i1 false
  br i1 %inside, label %body, label %exit

body:                                             ; preds = %start
  %row = mul i64 %y, %cols
  %i = add i64 %row, %x
  %x0 = icmp eq i64 %x, 0
  %y0 = icmp eq i64 %y, 0
  %lastx = add i64 %cols, -1
  %xl = icmp eq i64 %x, %lastx
  %lasty = add i64 %rows, -1
  %yl = icmp eq i64 %lasty, %y
  %e1 = or i1 %x0, %y0
  %e2 = or i1 %e1, %xl
  %edge = or i1 %e2, %yl
  br i1 %edge, label %exit, label %up

up:                                               ; preds = %body
  %iu = sub i64 %i, %cols
  %ok1 = icmp ult i64 %iu, %__oxide_in_input_len
  br i1 %ok1, label %left, label %panic

left:                                             ; preds = %up
  %il = add i64 %i, -1
  %ok2 = icmp ult i64 %il, %__oxide_in_input_len
  br i1 %ok2, label %down, label %panic

down:                                             ; preds = %left
  %id = add i64 %i, %cols
  %ok3 = icmp ult i64 %id, %__oxide_in_input_len
  br i1 %ok3, label %read, label %panic

read:                                             ; preds = %down
  %p1 = getelementptr inbounds float, ptr %__oxide_in_input, i64 %iu
  %v1 = load float, ptr %p1, align 4
  %p2 = getelementptr inbounds float, ptr %__oxide_in_input, i64 %il
  %v2 = load float, ptr %p2, align 4
  %p3 = getelementptr inbounds float, ptr %__oxide_in_input, i64 %id
  %v3 = load float, ptr %p3, align 4
  %s1 = fadd float %v1, %v2
  %s2 = fadd float %s1, %v3
  store float %s2, ptr %out, align 4
  br label %exit

exit:                                             ; preds = %read, %body, %start
  ret void

panic:                                            ; preds = %down, %left, %up
  call void asm sideeffect \"trap;\", \"\"()
  unreachable
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
";

    #[test]
    fn interior_reads_are_bounded_by_the_lowest_index_and_the_edges_left_out() {
        let (out, names) = copy_of(INTERIOR);
        assert_eq!(names, ["k__oxide_vc"], "{out}");
        assert_valid_ir("versioned_checks_interior", &out);
        let copy = &out[out.find("@k__oxide_vc(").unwrap()..];
        for (from, to) in [("%left", "%panic"), ("%down", "%panic"), ("%read", "%panic")] {
            assert!(copy.contains(&format!("br i1 true, label {from}, label {to}")), "{from}: {copy}");
        }
        let test = out.lines().find(|l| l.contains(TEST_MARK)).unwrap();
        // `i - cols` holds where `cols` is at most `i`'s lowest value, `y * cols + x` with
        // `y, x >= 1` (the product checked not to wrap); otherwise its bound is the largest
        // number and the test fails.
        let lowest_row = "ifle(mul.sat(ne(umin(ntid.y-1,usub.sat:1(rows)),usub.sat:1(rows),sub:1(rows)),cols),\
                          18446744073709551614,mul.sat(1,cols),0)";
        assert!(test.contains("ifle(cols,ifle("), "{test}");
        assert!(test.contains(&format!(",18446744073709551614,uadd.sat({lowest_row},1),0)")), "{test}");
        assert!(test.contains("ifle(1,ifle("), "{test}");
        // `y != rows - 1` takes one off `y`'s bound where that bound is `rows - 1`, so that
        // `i + cols` is below `rows * cols`.
        assert!(test.contains("ne(umin(ntid.y-1,usub.sat:1(rows)),usub.sat:1(rows),sub:1(rows))"), "{test}");
    }

    #[test]
    fn a_saturating_subtraction_of_a_constant_comes_off_the_bound() {
        // `y.min(rows.saturating_sub(1))`: the last row, not one past it.
        let clamped = KERNEL.replace(
            "%row = mul i64 %y, %cols",
            "%last = tail call i64 @llvm.usub.sat.i64(i64 %rows64, i64 1)\n  %yc = tail call i64 @llvm.umin.i64(i64 %y, i64 %last)\n  %row = mul i64 %yc, %cols",
        );
        let (out, names) = copy_of(&clamped);
        assert_eq!(names, ["k__oxide_vc"], "{out}");
        let test = out.lines().find(|l| l.contains(TEST_MARK)).unwrap();
        assert!(test.contains("usub.sat:1(rows)"), "{test}");
    }

    #[test]
    fn merged_bounds_cover_every_check() {
        let a = op("mul.sat", vec![Bound::Exact("%n".into()), Bound::Extent("ntid.x".into(), true)]);
        let b = op("mul.sat", vec![Bound::Extent("ntid.x".into(), true), Bound::Exact("%m".into())]);
        // Operands in the other order pair up by kind; different leaves take their maximum.
        assert_eq!(text(&merge(a.clone(), b)), "mul.sat(umax(n,m),ntid.x-1)");
        assert_eq!(merge(a.clone(), a.clone()), a);
        let c = op("lshr 2", vec![Bound::Exact("%n".into())]);
        assert_eq!(text(&merge(a, c)), "umax(mul.sat(n,ntid.x-1),lshr:2(n))");
    }
}
