//! The bounds checks of a branching region tested once, at its start (after `opt`, before
//! `llc`).
//!
//! A 3x3 convolution with zero padding reads each tap under the user's own test and its
//! bounds check under that:
//!
//! ```text
//! E:  br i1 %inside1, label %T1, label %J1
//! T1: %ok1 = icmp ult i64 %i1, %__oxide_in_x_len
//!     br i1 %ok1, label %L1, label %panic
//! L1: %v1 = load float ...; %acc1 = fma ...
//!     br label %J1
//! J1: %a1 = phi float ...                  ; and so on for the next 8 taps
//! ```
//!
//! ptxas turns small conditional blocks into predicated instructions, so nvcc's twin issues
//! all nine loads at once and adds up after. A block that may branch to the panic path is not
//! one it converts: each tap stays a branch, and its load waits for the tap before it to have
//! added its own (H200, conv2d_3x3: 36 branch instructions in SASS, 1.70 of nvcc's time;
//! 1.52 with this). Here every check of the region is tested in `E`, where the region starts:
//! whether its block is reached (from the branch conditions on the way) and whether it fails.
//! A thread with a failing check goes to the panic path of the first one on its way; every
//! other thread runs the region with the branches of the checks that sit alone under a
//! condition of their own gone (the others keep theirs: moving them only kept their indices
//! live longer, see `plan`):
//!
//! ```text
//! E:  ... copies of the tests, %reach1 = %inside1, %bad1 = select %reach1, !%ok1', false, ...
//!     br i1 %any_bad, label %first_bad, label %go
//! go: br i1 %inside1, label %T1, label %J1
//! T1: br label %L1
//! ```
//!
//! Sound because the region has no side effect another thread or the host could tell apart
//! (blocks entered only from `E` and each other, no loop, no atomic, barrier or call but pure
//! intrinsics, no store but plain stores into the thread's own outputs, which nobody reads
//! during the launch and which a panicking launch leaves incomplete anyway), so testing its
//! checks first changes nothing but when a failing thread panics (before its stores in the
//! region rather than after), and it still panics at the check that failed first on its path
//! (the region's blocks are in path order). The copied tests
//! are pure, without the flags that make a value poison (`nuw`, `samesign`, …), and a test
//! only counts where its block is reached (`select`, which a poison operand on the other side
//! cannot taint).

use super::guarded_epilogs::cond_branch;
use super::guarded_loads::{apply, blocks, each_kernel, Block};
use super::speculated_blocks::PURE_OPS;
use super::Line;
use std::collections::{HashMap, HashSet};

/// The most tests copied into one region's start.
const MAX_COPIES: usize = 400;

/// The most checks one region tests at its start: each keeps its index live from there to its
/// read, so a region of many ends at its `MAX_CHECKS`th check and the next one starts after it.
const MAX_CHECKS: usize = 8;

/// Intrinsics a region may call: no memory, no synchronisation.
const PURE_CALLS: [&str; 17] = [
    "@llvm.fptoui.sat.",
    "@llvm.fptosi.sat.",
    "@llvm.sqrt.",
    "@llvm.floor.",
    "@llvm.copysign.",
    "@llvm.nvvm.read.ptx.sreg.",
    "@llvm.assume(",
    "@llvm.umin.",
    "@llvm.umax.",
    "@llvm.smin.",
    "@llvm.smax.",
    "@llvm.fma.",
    "@llvm.fmuladd.",
    "@llvm.minnum.",
    "@llvm.maxnum.",
    "@llvm.fabs.",
    "@llvm.abs.",
];

/// Flags and keywords that make an instruction's result poison where it wraps or is inexact.
const POISON_FLAGS: [&str; 12] =
    ["nuw", "nsw", "exact", "samesign", "disjoint", "nneg", "inbounds", "nnan", "ninf", "fast", "reassoc", "afn"];

/// Rewrites every qualifying region of every kernel; returns how many regions changed.
pub(super) fn hoist(lines: &mut Vec<Line>) -> usize {
    each_kernel(lines, |body, _define, first| rewrite_function(body, first))
}

/// A block that starts the inlined panic path (`ir/panic_paths.rs`): after its phis, it reads
/// the panic buffer.
fn is_panic(body: &[Line], b: &Block) -> bool {
    let mut insts = b.insts.iter().map(|&i| &body[i].text).skip_while(|t| t.contains(" = phi "));
    insts.next().is_some_and(|t| t.contains("@__oxide_panic_buffer"))
}

/// Where a block's terminator goes.
enum Exit {
    Jump(String),
    Branch {
        cond: String,
        on_true: String,
        on_false: String,
    },
    /// `ret`, `unreachable`, `switch`, …: the region ends there.
    Other,
}

fn exit_of(body: &[Line], b: &Block) -> Exit {
    let Some(&last) = b.insts.last() else { return Exit::Other };
    let text = body[last].text.trim();
    if let Some((cond, on_true, on_false)) = cond_branch(text) {
        return Exit::Branch { cond, on_true, on_false };
    }
    match text.strip_prefix("br label ") {
        Some(to) => Exit::Jump(to.trim().to_string()),
        None => Exit::Other,
    }
}

/// Whether a region may contain the instruction: pure, a plain load, a phi, a pure call, or a
/// plain store into one of the kernel's outputs (`outputs`).
fn side_effect_free(text: &str, outputs: &HashSet<String>) -> bool {
    let text = text.trim();
    if let Some(ptr) = output_store(text) {
        return outputs.contains(ptr);
    }
    let rhs = text.split_once(" = ").map_or(text, |(_, r)| r);
    let op = rhs.split_whitespace().next().unwrap_or("");
    let call = rhs.strip_prefix("tail ").unwrap_or(rhs).strip_prefix("call ");
    match call {
        Some(c) => PURE_CALLS.iter().any(|p| c.contains(p)) || pure_asm(c),
        None => {
            // Division of floats cannot trap (no speculation here: the region runs as written).
            PURE_OPS.contains(&op)
                || op == "fdiv"
                || op == "phi"
                || op == "br"
                || (op == "load" && !rhs.starts_with("load atomic") && !rhs.starts_with("load volatile"))
        }
    }
}

/// Inline PTX that LLVM may treat as a pure function of its operands (`sqrt.rn.f32`, a
/// special register): not `sideeffect`, no memory clobber, not convergent.
fn pure_asm(call: &str) -> bool {
    call.split_once(" asm ").is_some_and(|(_, rest)| {
        !rest.starts_with("sideeffect") && !rest.contains("~{memory}") && !call.contains("convergent")
    })
}

/// The address of a plain (not atomic, not volatile) store.
fn output_store(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("store ")?;
    if rest.starts_with("atomic") || rest.starts_with("volatile") {
        return None;
    }
    let (_, after) = rest.split_once(", ptr ")?;
    after.split([',', ' ']).next()
}

/// The pointers into the kernel's outputs (`%__oxide_out_*` parameters, and addresses computed
/// from them by `getelementptr` or merged by a `phi` of such addresses). A thread owns what
/// it writes there (`DisjointSlice` and its family): no other thread reads it during the
/// launch, and a launch that panics leaves its outputs incomplete, so a check may go before
/// such a store without anyone seeing the difference but in which elements a panicking thread
/// wrote.
fn output_pointers(body: &[Line]) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut changed = true;
    while changed {
        changed = false;
        for l in body {
            let Some((name, rhs)) = l.text.trim().split_once(" = ") else { continue };
            if out.contains(name) {
                continue;
            }
            let words: Vec<&str> = rhs.split_whitespace().take_while(|w| !w.starts_with('!')).collect();
            let based = |w: &&str| {
                let w = w.trim_end_matches(',');
                w.starts_with("%__oxide_out_") && !w.ends_with("_len") || out.contains(w)
            };
            let derived = match words.first() {
                // The base is the first pointer operand.
                Some(&"getelementptr") => words.iter().skip_while(|w| **w != "ptr").nth(1).is_some_and(based),
                Some(&"phi") if words.get(1) == Some(&"ptr") => {
                    let list = rhs.split(", !").next().unwrap_or(rhs).trim_start_matches("phi ptr ");
                    list.split("], ").all(|pair| {
                        let pair = pair.trim().trim_start_matches('[').trim_end_matches(']');
                        pair.split_once(", ").is_some_and(|(v, _)| based(&v.trim()))
                    })
                }
                _ => false,
            };
            if derived {
                out.insert(name.to_string());
                changed = true;
            }
        }
    }
    out
}

/// One check of a region: its block, the test, which side panics, and the panic block.
struct Check {
    block: usize,
    test: String,
    panics_on_true: bool,
    go_on: String,
    panic: usize,
}

fn rewrite_function(mut body: Vec<Line>, first_id: usize) -> (Vec<Line>, usize) {
    let blocks = blocks(&body);
    let find: HashMap<&str, usize> = blocks.iter().enumerate().map(|(k, b)| (b.label.as_str(), k)).collect();
    let panics: Vec<bool> = blocks.iter().map(|b| is_panic(&body, b)).collect();
    if !panics.contains(&true) {
        return (body, 0);
    }
    let exits: Vec<Exit> = blocks.iter().map(|b| exit_of(&body, b)).collect();
    let defs: HashMap<String, (usize, usize)> = blocks
        .iter()
        .enumerate()
        .flat_map(|(k, b)| b.insts.iter().map(move |&i| (k, i)))
        .filter_map(|(k, i)| body[i].text.trim().split_once(" = ").map(|(n, _)| (n.to_string(), (k, i))))
        .collect();
    let outputs = output_pointers(&body);
    let mut in_region = vec![false; blocks.len()];
    let mut inserts: Vec<(usize, Vec<String>)> = Vec::new();
    let mut edits: HashMap<usize, String> = HashMap::new();
    let mut tail: Vec<String> = Vec::new();
    let mut count = 0;
    for e in 0..blocks.len() {
        let label = &blocks[e].label;
        if in_region[e] || panics[e] || label.is_empty() || label[1..].bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let mut region = grow(&body, &blocks, &find, &panics, &exits, &outputs, &in_region, e);
        let mut checks = checks_of(&find, &panics, &exits, &region);
        if checks.len() > MAX_CHECKS {
            checks.truncate(MAX_CHECKS);
            let last = checks[MAX_CHECKS - 1].block;
            let end = region.iter().position(|&k| k == last).map_or(region.len(), |p| p + 1);
            region.truncate(end);
        }
        if checks.len() < 2 {
            continue;
        }
        let id = first_id + count;
        let Some(plan) = plan(&body, &blocks, &find, &exits, &panics, &defs, &region, &checks, id) else { continue };
        for &k in &region {
            in_region[k] = true;
        }
        emit(&body, &blocks, &exits, e, &checks, plan, id, &mut inserts, &mut edits, &mut tail);
        count += 1;
    }
    if count == 0 {
        return (body, 0);
    }
    for (i, text) in edits {
        body[i].text = text;
    }
    apply(&mut body, inserts);
    let no = body.last().map_or(0, |l| l.no);
    body.extend(tail.into_iter().map(|text| Line { no, text }));
    (body, count)
}

/// The region that starts at `e`: `e`, then (in text order, to a fixed point) every block
/// whose predecessors are all in it, that is not a panic block or `taken` by a region before,
/// and whose instructions are free of side effects but stores into outputs. Entered only from
/// `e`, so `e` dominates it and it has no loop.
#[allow(clippy::too_many_arguments)]
fn grow(
    body: &[Line],
    blocks: &[Block],
    find: &HashMap<&str, usize>,
    panics: &[bool],
    exits: &[Exit],
    outputs: &HashSet<String>,
    taken: &[bool],
    e: usize,
) -> Vec<usize> {
    let mut region = vec![e];
    let mut member = vec![false; blocks.len()];
    member[e] = true;
    let successors = |k: usize| -> Vec<usize> {
        match &exits[k] {
            Exit::Jump(t) => find.get(t.as_str()).copied().into_iter().collect(),
            Exit::Branch { on_true, on_false, .. } => {
                [on_true, on_false].into_iter().filter_map(|t| find.get(t.as_str()).copied()).collect()
            }
            Exit::Other => Vec::new(),
        }
    };
    let mut changed = true;
    while changed {
        changed = false;
        for k in 0..blocks.len() {
            if member[k] || panics[k] || taken[k] || !region.iter().any(|&r| successors(r).contains(&k)) {
                continue;
            }
            let b = &blocks[k];
            let entered_inside = !b.preds.is_empty()
                && b.preds
                    .iter()
                    .all(|p| find.get(p.as_str()).is_some_and(|&q| member[q] && successors(q).contains(&k)));
            if entered_inside && b.insts.iter().all(|&i| side_effect_free(&body[i].text, outputs)) {
                member[k] = true;
                region.push(k);
                changed = true;
            }
        }
    }
    region
}

/// The region's checks (past `e`): blocks that branch to a panic block on one side.
fn checks_of(find: &HashMap<&str, usize>, panics: &[bool], exits: &[Exit], region: &[usize]) -> Vec<Check> {
    let mut out = Vec::new();
    for &k in &region[1..] {
        let Exit::Branch { cond, on_true, on_false } = &exits[k] else { continue };
        let (Some(&t), Some(&f)) = (find.get(on_true.as_str()), find.get(on_false.as_str())) else { continue };
        let (panic, go_on, panics_on_true) = match (panics[t], panics[f]) {
            (true, false) => (t, on_false, true),
            (false, true) => (f, on_true, false),
            _ => continue,
        };
        out.push(Check { block: k, test: cond.clone(), panics_on_true, go_on: go_on.clone(), panic });
    }
    out
}

/// What `emit` writes into `e`: copied instructions, then the tests.
struct Plan {
    lines: Vec<String>,
    /// Per check: the value "this check is reached and fails".
    bad: Vec<String>,
    /// Per check: its panic block's phi values, copied (phi line index -> value).
    phi_values: Vec<Vec<(usize, String)>>,
    /// Per check: whether its branch goes (tested in `e` instead).
    hoisted: Vec<bool>,
    any: String,
}

/// Copies (without poison flags) of pure values the region defines, made in `e`.
struct Copier<'a> {
    body: &'a [Line],
    defs: &'a HashMap<String, (usize, usize)>,
    region: &'a HashSet<usize>,
    e: usize,
    id: usize,
    copied: HashMap<String, String>,
    lines: Vec<String>,
}

impl Copier<'_> {
    /// `v` as available at the end of `e`: itself, or a copy; `None` when it depends on a phi,
    /// a load or a call inside the region.
    fn value(&mut self, v: &str) -> Option<String> {
        if !v.starts_with('%') {
            return Some(v.to_string());
        }
        let Some(&(block, line)) = self.defs.get(v) else { return Some(v.to_string()) };
        if block == self.e || !self.region.contains(&block) {
            return Some(v.to_string());
        }
        if let Some(c) = self.copied.get(v) {
            return Some(c.clone());
        }
        if self.lines.len() >= MAX_COPIES {
            return None;
        }
        let rhs = self.body[line].text.trim().split_once(" = ")?.1.to_string();
        let op = rhs.split_whitespace().next().unwrap_or("");
        if !PURE_OPS.contains(&op) {
            return None;
        }
        let rhs = rhs.split(", !").next().unwrap_or(&rhs);
        let mut out = String::new();
        let mut rest = rhs;
        while let Some(at) = rest.find('%') {
            out.push_str(&rest[..at]);
            let len = rest[at + 1..].bytes().take_while(|&b| super::is_ident_byte(b)).count();
            let name = &rest[at..at + 1 + len];
            out.push_str(&self.value(name)?);
            rest = &rest[at + 1 + len..];
        }
        out.push_str(rest);
        let words: Vec<&str> = out.split(' ').filter(|w| !POISON_FLAGS.contains(w)).collect();
        let copy = format!("%__oxide_ec{}_v{}", self.id, self.copied.len());
        self.lines.push(format!("  {copy} = {}", words.join(" ")));
        self.copied.insert(v.to_string(), copy.clone());
        Some(copy)
    }

    fn push(&mut self, name: &str, rhs: String) -> String {
        let v = format!("%__oxide_ec{}_{name}", self.id);
        self.lines.push(format!("  {v} = {rhs}"));
        v
    }
}

/// The tests in `e`: whether each region block is reached, whether each check is reached and
/// fails, and whether any does. `None` when a check's test or a condition on the way to it
/// cannot be computed in `e` (fewer than two checks left then: no change).
#[allow(clippy::too_many_arguments)]
fn plan(
    body: &[Line],
    blocks: &[Block],
    find: &HashMap<&str, usize>,
    exits: &[Exit],
    panics: &[bool],
    defs: &HashMap<String, (usize, usize)>,
    region: &[usize],
    checks: &[Check],
    id: usize,
) -> Option<Plan> {
    let set: HashSet<usize> = region.iter().copied().collect();
    let mut cp = Copier { body, defs, region: &set, e: region[0], id, copied: HashMap::new(), lines: Vec::new() };
    // Whether each block is reached, in region order (a block's predecessors come first).
    let mut reach: HashMap<usize, String> = HashMap::new();
    reach.insert(region[0], "true".to_string());
    for &k in &region[1..] {
        let mut any: Option<String> = None;
        for p in &blocks[k].preds {
            let q = *find.get(p.as_str())?;
            let from = reach.get(&q).cloned()?;
            let edge = match &exits[q] {
                Exit::Jump(_) => from,
                // Past a check (moved or not, `e`'s own too) only threads that passed it go on.
                Exit::Branch { on_true, on_false, .. }
                    if [on_true, on_false].iter().any(|t| find.get(t.as_str()).is_some_and(|&b| panics[b])) =>
                {
                    from
                }
                Exit::Branch { cond, on_true, on_false } => {
                    let (to_true, to_false) =
                        (find.get(on_true.as_str()) == Some(&k), find.get(on_false.as_str()) == Some(&k));
                    if to_true && to_false {
                        from
                    } else {
                        let c = cp.value(cond)?;
                        let c = if to_true {
                            c
                        } else {
                            cp.push(&format!("n{}", cp.lines.len()), format!("xor i1 {c}, true"))
                        };
                        and(&mut cp, &from, &c)
                    }
                }
                Exit::Other => return None,
            };
            any = Some(match any {
                None => edge,
                Some(a) => {
                    let n = cp.lines.len();
                    cp.push(&format!("o{n}"), format!("select i1 {a}, i1 true, i1 {edge}"))
                }
            });
        }
        reach.insert(k, any?);
    }
    let mut bad = Vec::new();
    let mut phi_values = Vec::new();
    for c in checks {
        let test = cp.value(&c.test)?;
        let fails = if c.panics_on_true {
            test
        } else {
            let n = cp.lines.len();
            cp.push(&format!("f{n}"), format!("xor i1 {test}, true"))
        };
        let b = and(&mut cp, reach.get(&c.block)?, &fails);
        bad.push(b);
        // The panic block's phis: the value each took from this check's block.
        let mut values = Vec::new();
        for &i in &blocks[c.panic].insts {
            let text = body[i].text.trim();
            if !text.contains(" = phi ") {
                break;
            }
            let v = phi_incoming(text, &blocks[c.block].label)?;
            values.push((i, cp.value(&v)?));
        }
        phi_values.push(values);
    }
    // Only a check alone under a condition of its own gains: ptxas can then predicate its
    // block. A check that every thread reaches, or one of several reads under one condition,
    // keeps its branch: testing it early only keeps its index live longer (H200: box27_3d
    // 1.88 -> 2.01, stencil7_3d 1.35 -> 1.64 when moved). Except a run of checks on one slice
    // at constant distances from one index (`rgb[p]`, `rgb[p + 1]`, `rgb[p + 2]`) reached
    // under one condition: its nearest and farthest checks imply the rest (`runs`), so two
    // tests stand for all of them. The first failing check still wins: the picker tests every
    // check in order.
    let reaches: Vec<&String> = checks.iter().map(|c| reach.get(&c.block)).collect::<Option<_>>()?;
    let (in_run, ends) = runs(body, defs, checks, &reaches);
    let hoisted: Vec<bool> = reaches
        .iter()
        .enumerate()
        .map(|(n, r)| in_run[n] || (r.as_str() != "true" && reaches.iter().filter(|o| o == &r).count() == 1))
        .collect();
    let tested = (0..checks.len()).filter(|&n| hoisted[n] && (!in_run[n] || ends.contains(&n)));
    let mut moved = tested.map(|n| bad[n].clone());
    let mut any = moved.next()?;
    for b in moved {
        let n = cp.lines.len();
        any = cp.push(&format!("o{n}"), format!("select i1 {any}, i1 true, i1 {b}"));
    }
    (hoisted.iter().filter(|h| **h).count() >= 2).then_some(Plan { lines: cp.lines, bad, phi_values, hoisted, any })
}

/// What the checks of one run share: the index's base, the length, the condition they are
/// reached under.
type RunKey<'a> = (String, String, &'a str);

/// Runs of checks `base + c < len` with one `base`, one `len` (a slice's length, or a constant
/// below 2^62) and constant `c`, reached under one condition, two or more to a run. Returns
/// which checks are in a run and, per run, its checks of least and greatest `c`. Those two
/// passing imply every check of the run passes (the tests are copied without `nuw`, so they
/// wrap): `base + c_min < len <= 2^63` leaves no room to wrap over the run's span, and every
/// other index lies between the two. When one fails, a check of the run fails, and the picker
/// finds the first on the thread's way.
fn runs(
    body: &[Line],
    defs: &HashMap<String, (usize, usize)>,
    checks: &[Check],
    reaches: &[&String],
) -> (Vec<bool>, HashSet<usize>) {
    let mut groups: HashMap<RunKey<'_>, Vec<(i64, usize)>> = HashMap::new();
    for (n, c) in checks.iter().enumerate() {
        let Some((index, len)) = bound_test(body, defs, c) else { continue };
        let (base, offset) = affine(body, defs, &index, 8);
        groups.entry((base, len, reaches[n].as_str())).or_default().push((offset, n));
    }
    let mut in_run = vec![false; checks.len()];
    let mut ends = HashSet::new();
    // A run counts only when it is every check under its condition: moving part of a chain
    // whose other checks keep their branches only adds tests (H200, stencil7_3d's interior,
    // `i - 1, i, i + 1` beside `i ± nx`, `i ± plane`: 1.35 -> 1.44).
    let under = |r: &str| reaches.iter().filter(|o| o.as_str() == r).count();
    for members in groups.iter().filter(|((_, _, r), m)| m.len() >= 2 && m.len() == under(r)).map(|(_, m)| m) {
        for &(_, n) in members {
            in_run[n] = true;
        }
        ends.extend(members.iter().min_by_key(|(c, _)| *c).map(|(_, n)| *n));
        ends.extend(members.iter().max_by_key(|(c, _)| *c).map(|(_, n)| *n));
    }
    (in_run, ends)
}

/// `(index, len)` of a check that fails unless `index < len` (unsigned, 64-bit), with `len` a
/// slice length parameter or a constant below 2^62.
fn bound_test(body: &[Line], defs: &HashMap<String, (usize, usize)>, c: &Check) -> Option<(String, String)> {
    let &(_, line) = defs.get(&c.test)?;
    let rhs = body[line].text.trim().split_once(" = ")?.1;
    let rhs = rhs.strip_prefix("icmp ")?;
    let rhs = rhs.strip_prefix("samesign ").unwrap_or(rhs);
    let (pred, operands) = rhs.split_once(" i64 ")?;
    let (a, b) = operands.split_once(", ")?;
    let (a, b) = (a.trim().to_string(), b.split(',').next()?.trim().to_string());
    // Which operand is the index, given the side the check panics on.
    let (index, len) = match (pred, c.panics_on_true) {
        ("ult", false) | ("uge", true) => (a, b),
        ("ugt", false) | ("ule", true) => (b, a),
        _ => return None,
    };
    let slice_len = (len.starts_with("%__oxide_in_") || len.starts_with("%__oxide_out_")) && len.ends_with("_len");
    let small = len.parse::<u64>().is_ok_and(|v| v < 1 << 62);
    (slice_len || small).then_some((index, len))
}

/// `v` as `(base, c)` with `v = base + c`: through `add`/`sub` of a constant and `or disjoint`
/// (an add without carries), at most `depth` steps.
fn affine(body: &[Line], defs: &HashMap<String, (usize, usize)>, v: &str, depth: usize) -> (String, i64) {
    let step = || -> Option<(String, i64)> {
        let &(_, line) = defs.get(v)?;
        let rhs = body[line].text.trim().split_once(" = ")?.1;
        let words: Vec<&str> = rhs.split_whitespace().take_while(|w| !w.starts_with('!')).collect();
        let op = *words.first()?;
        let flags_ok = words[1..].iter().take_while(|w| **w != "i64").all(|w| ["nuw", "nsw", "disjoint"].contains(w));
        let at = words.iter().position(|w| *w == "i64")?;
        let (x, k) = (words.get(at + 1)?.trim_end_matches(','), words.get(at + 2)?);
        let k: i64 = k.parse().ok().filter(|k: &i64| k.unsigned_abs() < 1 << 31)?;
        match (op, flags_ok, x.starts_with('%')) {
            ("add", true, true) => Some((x.to_string(), k)),
            ("sub", true, true) => Some((x.to_string(), -k)),
            ("or", true, true) if words.contains(&"disjoint") && k >= 0 => Some((x.to_string(), k)),
            _ => None,
        }
    };
    match (depth, step()) {
        (1.., Some((x, k))) => {
            let (base, c) = affine(body, defs, &x, depth - 1);
            (base, c + k)
        }
        _ => (v.to_string(), 0),
    }
}

/// `a && b`, as a select (a poison `b` where `a` is false stays out).
fn and(cp: &mut Copier<'_>, a: &str, b: &str) -> String {
    if a == "true" {
        return b.to_string();
    }
    let n = cp.lines.len();
    cp.push(&format!("a{n}"), format!("select i1 {a}, i1 {b}, i1 false"))
}

/// The value a phi line takes from block `from`.
fn phi_incoming(phi: &str, from: &str) -> Option<String> {
    let (_, list) = phi.split_once(" = phi ")?;
    let list = list.split_once(' ')?.1;
    list.split("], ").find_map(|pair| {
        let pair = pair.trim().trim_start_matches('[').trim_end_matches(']');
        let (v, b) = pair.rsplit_once(", ")?;
        (b.trim() == from).then(|| v.trim().to_string())
    })
}

/// Writes the plan: the tests and the branch to the failing check in `e`, `e`'s old branch in
/// a block of its own, each check's block going straight on, and the blocks that pick the
/// first failing check (appended at the function's end).
#[allow(clippy::too_many_arguments)]
fn emit(
    body: &[Line],
    blocks: &[Block],
    exits: &[Exit],
    e: usize,
    checks: &[Check],
    plan: Plan,
    id: usize,
    inserts: &mut Vec<(usize, Vec<String>)>,
    edits: &mut HashMap<usize, String>,
    tail: &mut Vec<String>,
) {
    // A line may change twice (a panic block's phi that also follows `e`): edit the edited text.
    let current =
        |edits: &HashMap<usize, String>, i: usize| edits.get(&i).cloned().unwrap_or_else(|| body[i].text.clone());
    let e_label = &blocks[e].label;
    let go = format!("%__oxide_ec{id}_go");
    let Some(&term) = blocks[e].insts.last() else { return };
    let mut lines = plan.lines;
    lines.push(format!("  br i1 {}, label %__oxide_ec{id}_d0, label {go}", plan.any));
    lines.push(String::new());
    lines.push(format!("{}: ; preds = {e_label}", &go[1..]));
    inserts.push((term, lines));
    // `e`'s successors now come from the new block: their phis name it.
    let succs: Vec<&str> = match &exits[e] {
        Exit::Jump(t) => vec![t],
        Exit::Branch { on_true, on_false, .. } => vec![on_true, on_false],
        Exit::Other => vec![],
    };
    for b in blocks.iter().filter(|b| succs.contains(&b.label.as_str())) {
        for &i in &b.insts {
            let text = current(edits, i);
            if !text.contains(" = phi ") {
                break;
            }
            let from = format!(", {e_label} ]");
            edits.insert(i, text.replace(&from, &format!(", {go} ]")));
        }
    }
    // Checks go straight on; their panic blocks' phis take the copied values from the picker.
    for (n, c) in checks.iter().enumerate() {
        let Some(&t) = blocks[c.block].insts.last() else { continue };
        // A check that keeps its branch keeps its edge to the panic block too.
        let from = if plan.hoisted[n] {
            edits.insert(t, format!("  br label {}", c.go_on));
            blocks[c.block].label.as_str()
        } else {
            ""
        };
        for (i, v) in &plan.phi_values[n] {
            let text = current(edits, *i);
            let (head, list) = text.split_once(" = phi ").unwrap_or((&text, ""));
            let (ty, pairs) = list.split_once(' ').unwrap_or((list, ""));
            let kept: Vec<String> = pairs
                .split("], ")
                .map(|p| p.trim().trim_start_matches('[').trim_end_matches(']').trim())
                .filter(|p| p.rsplit_once(", ").is_none_or(|(_, b)| b != from))
                .map(|p| format!("[ {p} ]"))
                .chain(std::iter::once(format!("[ {v}, %__oxide_ec{id}_d{n} ]")))
                .collect();
            edits.insert(*i, format!("{head} = phi {ty} {}", kept.join(", ")));
        }
    }
    for (n, c) in checks.iter().enumerate() {
        let panic = &blocks[c.panic].label;
        tail.push(String::new());
        tail.push(format!("__oxide_ec{id}_d{n}:"));
        if n + 1 < checks.len() {
            tail.push(format!("  br i1 {}, label {panic}, label %__oxide_ec{id}_d{}", plan.bad[n], n + 1));
        } else {
            tail.push(format!("  br label {panic}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ir: &str) -> (String, usize) {
        crate::ir::tests::transformed(ir, hoist)
    }

    /// Two taps, each read under the user's test and its bounds check (a convolution's).
    const TAPS: &str = "define ptx_kernel void @k(ptr noalias noundef readonly %__oxide_in_x, i64 noundef %__oxide_in_x_len, ptr %out, i64 %i, i1 %in0, i1 %in1) #0 {
start:
  br i1 %in0, label %t0, label %j0

t0:                                               ; preds = %start
  %ok0 = icmp ult i64 %i, %__oxide_in_x_len
  br i1 %ok0, label %l0, label %panic

l0:                                               ; preds = %t0
  %p0 = getelementptr inbounds nuw float, ptr %__oxide_in_x, i64 %i
  %v0 = load float, ptr %p0, align 4
  br label %j0

j0:                                               ; preds = %l0, %start
  %a0 = phi float [ %v0, %l0 ], [ 0.000000e+00, %start ]
  br i1 %in1, label %t1, label %j1

t1:                                               ; preds = %j0
  %i1 = add nuw i64 %i, 1
  %ok1 = icmp samesign ult i64 %i1, %__oxide_in_x_len
  br i1 %ok1, label %l1, label %panic

l1:                                               ; preds = %t1
  %p1 = getelementptr inbounds nuw float, ptr %__oxide_in_x, i64 %i1
  %v1 = load float, ptr %p1, align 4
  %s1 = fadd float %a0, %v1
  br label %j1

j1:                                               ; preds = %l1, %j0
  %a1 = phi float [ %s1, %l1 ], [ %a0, %j0 ]
  store float %a1, ptr %out, align 4
  ret void

panic:                                            ; preds = %t1, %t0
  %at = phi i32 [ 7, %t0 ], [ 9, %t1 ]
  %b = load volatile ptr, ptr @__oxide_panic_buffer, align 8
  unreachable
}
";

    #[test]
    fn the_checks_of_a_branching_region_are_tested_at_its_start() {
        let (out, n) = run(TAPS);
        assert_eq!(n, 1, "{out}");
        for want in [
            // Tap 1's test, copied without its flags; each check counts where its block is reached.
            "  %__oxide_ec0_v1 = add i64 %i, 1\n  %__oxide_ec0_v2 = icmp ult i64 %__oxide_ec0_v1, %__oxide_in_x_len\n",
            "  br i1 %__oxide_ec0_o",
            ", label %__oxide_ec0_d0, label %__oxide_ec0_go\n\n__oxide_ec0_go: ; preds = %start\n  br i1 %in0, label %t0, label %j0\n",
            // The checks' blocks go straight on.
            "  %ok0 = icmp ult i64 %i, %__oxide_in_x_len\n  br label %l0\n",
            "  %ok1 = icmp samesign ult i64 %i1, %__oxide_in_x_len\n  br label %l1\n",
            // `e`'s successors name the new block.
            "  %a0 = phi float [ %v0, %l0 ], [ 0.000000e+00, %__oxide_ec0_go ]\n",
            // The first failing check panics, with its own phi values.
            "  %at = phi i32 [ 7, %__oxide_ec0_d0 ], [ 9, %__oxide_ec0_d1 ]\n",
            "__oxide_ec0_d1:\n  br label %panic\n",
        ] {
            assert!(out.contains(want), "missing\n{want}\nin\n{out}");
        }
        // Reached: tap 0 where %in0, tap 1 where %in1 (j0 is always reached).
        assert!(out.contains("%__oxide_ec0_a5 = select i1 %in0, i1 %__oxide_ec0_f4, i1 false\n"), "{out}");
        assert!(out.contains("%__oxide_ec0_a2 = select i1 %__oxide_ec0_o1, i1 %in1, i1 false\n"), "{out}");
        assert!(out.contains("%__oxide_ec0_a9 = select i1 %__oxide_ec0_a2, i1 %__oxide_ec0_f8, i1 false\n"), "{out}");
    }

    #[test]
    fn regions_with_side_effects_loops_or_one_check_stay() {
        for ir in [
            // A store between the checks: panicking earlier would skip it.
            TAPS.replace(
                "  br i1 %in1, label %t1, label %j1",
                "  store float %a0, ptr %out, align 4\n  br i1 %in1, label %t1, label %j1",
            ),
            // A barrier.
            TAPS.replace(
                "  br i1 %in1, label %t1, label %j1",
                "  call void @llvm.nvvm.barrier0()\n  br i1 %in1, label %t1, label %j1",
            ),
            // The second check's test depends on a read.
            TAPS.replace("%i1 = add nuw i64 %i, 1", "%i1 = fptoui float %a0 to i64"),
            // Only one check.
            TAPS.replace("br i1 %ok1, label %l1, label %panic", "br label %l1")
                .replace("preds = %t1, %t0", "preds = %t0"),
        ]
        .iter()
        .enumerate()
        {
            let (out, n) = run(ir.1);
            assert_eq!(n, 0, "case {}: {out}", ir.0);
        }
        // A loop back to the first tap: the loop's head has a predecessor outside any region
        // that starts before it, and the region from the head ends before the back edge.
        let looped = TAPS
            .replace("start:\n  br i1 %in0", "start:\n  br label %head\n\nhead:                                             ; preds = %start, %j1\n  br i1 %in0")
            .replace("; preds = %start\n  %ok0", "; preds = %head\n  %ok0")
            .replace("[ 0.000000e+00, %start ]", "[ 0.000000e+00, %head ]")
            .replace("; preds = %l0, %start", "; preds = %l0, %head")
            .replace("  store float %a1, ptr %out, align 4\n  ret void", "  br label %head");
        let (out, n) = run(&looped);
        assert_eq!(n, 1, "{out}");
        assert!(out.contains("__oxide_ec0_go: ; preds = %head\n"), "{out}");
        crate::ir::tests::assert_valid_ir("early-checks-loop", &with_decls(&out));
    }

    #[test]
    fn pure_calls_and_inline_ptx_without_side_effects_stay_in_a_region() {
        let none = HashSet::new();
        for pure in [
            "  %r = tail call float asm \"sqrt.rn.f32 ${0}, ${1};\", \"=&r,r\"(float %t) #18, !srcloc !32",
            "  %q = tail call i16 @llvm.fptoui.sat.i16.f32(float %x)",
        ] {
            assert!(side_effect_free(pure, &none), "{pure}");
        }
        for effect in [
            "  %r = tail call i32 asm sideeffect \"shfl.sync.bfly.b32 ${0}, ${1}, ${2}, ${3}, ${4};\", \"=&r,r,r,r,r,~{memory}\"(i32 %a, i32 16, i32 31, i32 -1) convergent #15",
            "  %l = tail call i32 asm \"mov.u32 ${0}, %laneid;\", \"=&r\"() convergent #16",
            "  %m = tail call i32 asm \"ld.global.b32 ${0}, [${1}];\", \"=r,l,~{memory}\"(ptr %p)",
            "  store i32 %v, ptr %p, align 4",
        ] {
            assert!(!side_effect_free(effect, &none), "{effect}");
        }
    }

    /// A plain store into the thread's output between the checks stays where it is, and the
    /// checks still move; a store anywhere else, or an atomic or volatile one, keeps them.
    #[test]
    fn stores_into_outputs_do_not_end_a_region() {
        let with_output = |store: &str| {
            TAPS.replace("ptr %out, i64 %i,", "ptr noalias %__oxide_out_y, i64 %__oxide_out_y_len, ptr %out, i64 %i,")
                .replace("  br i1 %in1, label %t1, label %j1", &format!("{store}\n  br i1 %in1, label %t1, label %j1"))
        };
        let gep = "  %y0 = getelementptr inbounds nuw float, ptr %__oxide_out_y, i64 %i\n  %y1 = getelementptr inbounds nuw i8, ptr %y0, i64 4\n";
        let plain = with_output(&format!("{gep}  store float %a0, ptr %y1, align 4"));
        let (out, n) = run(&plain);
        assert_eq!(n, 1, "{out}");
        assert!(out.contains("  store float %a0, ptr %y1, align 4\n  br i1 %in1, label %t1, label %j1\n"), "{out}");
        assert!(out.contains("  %ok1 = icmp samesign ult i64 %i1, %__oxide_in_x_len\n  br label %l1\n"), "{out}");
        crate::ir::tests::assert_valid_ir("early-checks-output-store", &with_decls(&out));
        for kept in [
            format!("{gep}  store atomic float %a0, ptr %y1 monotonic, align 4"),
            format!("{gep}  store volatile float %a0, ptr %y1, align 4"),
            "  %y1 = getelementptr inbounds nuw float, ptr %out, i64 %i\n  store float %a0, ptr %y1, align 4"
                .to_string(),
            // The length is no pointer.
            "  %y1 = inttoptr i64 %__oxide_out_y_len to ptr\n  store float %a0, ptr %y1, align 4".to_string(),
        ] {
            let (out, n) = run(&with_output(&kept));
            assert_eq!(n, 0, "{kept}: {out}");
        }
    }

    /// `n` checked taps; guarded: tap `k` read only where `i > k` (a convolution's edge taps),
    /// else every tap read by every thread (a run of reads).
    fn taps(n: usize, guarded: bool) -> String {
        let mut ir = String::from("define ptx_kernel void @k(ptr noalias noundef readonly %__oxide_in_x, i64 noundef %__oxide_in_x_len, ptr %out, i64 %i) #0 {\nstart:\n  br label %c0\n");
        for k in 0..n {
            let preds = match (k, guarded) {
                (0, _) => "%start".to_string(),
                (_, true) => format!("%c{}, %l{}", k - 1, k - 1),
                (_, false) => format!("%l{}", k - 1),
            };
            let next = if k + 1 == n { "done".to_string() } else { format!("c{}", k + 1) };
            let test = if guarded {
                format!("  %g{k} = icmp ugt i64 %i, {k}\n  br i1 %g{k}, label %t{k}, label %{next}")
            } else {
                format!("  br label %t{k}")
            };
            ir.push_str(&format!(
                "\nc{k}:                                               ; preds = {preds}\n{test}\n\
                 \nt{k}:                                               ; preds = %c{k}\n  %i{k} = add i64 %i, {k}\n  %ok{k} = icmp ult i64 %i{k}, %__oxide_in_x_len\n  br i1 %ok{k}, label %l{k}, label %panic\n\
                 \nl{k}:                                               ; preds = %t{k}\n  %p{k} = getelementptr inbounds float, ptr %__oxide_in_x, i64 %i{k}\n  %v{k} = load float, ptr %p{k}, align 4\n  br label %{next}\n"
            ));
        }
        let last = n - 1;
        let preds = if guarded { format!("%c{last}, %l{last}") } else { format!("%l{last}") };
        ir.push_str(&format!("\ndone:                                             ; preds = {preds}\n  ret void\n\npanic:                                            ; preds = %t0\n  %b = load volatile ptr, ptr @__oxide_panic_buffer, align 8\n  unreachable\n}}\n"));
        ir
    }

    #[test]
    fn a_region_tests_at_most_max_checks() {
        // Ten guarded taps: two regions, of MAX_CHECKS and of 2.
        let (out, n) = run(&taps(10, true));
        assert_eq!(n, 2, "{out}");
        assert!(out.contains("__oxide_ec0_d7:\n  br label %panic\n"), "{out}");
        assert!(out.contains("__oxide_ec1_d1:\n  br label %panic\n"), "{out}");
        crate::ir::tests::assert_valid_ir("early-checks-ten", &with_decls(&out));
    }

    #[test]
    fn checks_every_thread_reaches_keep_their_branches() {
        // Four reads at unrelated indices (`i * (k + 1)`).
        let mut straight = taps(4, false);
        for k in 0..4 {
            straight = straight.replace(&format!("%i{k} = add i64 %i, {k}"), &format!("%i{k} = mul i64 %i, {}", k + 1));
        }
        crate::ir::tests::assert_valid_ir("early-checks-straight", &with_decls(&straight));
        let (out, n) = run(&straight);
        assert_eq!(n, 0, "{out}");
    }

    #[test]
    fn a_run_of_checks_at_constant_distances_is_tested_by_its_ends() {
        // `x[i]`, `x[i + 1]`, `x[i + 2]`, `x[i + 3]`, read by every thread.
        let (out, n) = run(&taps(4, false));
        assert_eq!(n, 1, "{out}");
        for k in 0..4 {
            let want = format!("  %ok{k} = icmp ult i64 %i{k}, %__oxide_in_x_len\n  br label %l{k}\n");
            assert!(out.contains(&want), "check {k} goes straight on:\n{out}");
        }
        // Only the first and the last are tested up front (`i` and `i + 3`); the picker still
        // tests all four in order.
        let ors = out.lines().filter(|l| l.contains(" = select i1 ") && l.contains(", i1 true, i1 ")).count();
        assert_eq!(ors, 1, "one `or` of the two ends' tests:\n{out}");
        assert!(out.contains("__oxide_ec0_d3:\n  br label %panic\n"), "{out}");
        crate::ir::tests::assert_valid_ir("early-checks-run", &with_decls(&out));
    }

    #[test]
    fn runs_need_one_base_one_length_and_constant_distances() {
        // Tap 2 reads another slice: taps 0, 1 and 3 would form a run, but tap 2 beside them
        // keeps its branch, so moving the run would only add tests.
        let other = taps(4, false)
            .replace("%ok2 = icmp ult i64 %i2, %__oxide_in_x_len", "%ok2 = icmp ult i64 %i2, %__oxide_in_y_len")
            .replace("i64 %i) #0", "i64 %i, i64 %__oxide_in_y_len) #0");
        let (out, n) = run(&other);
        assert_eq!(n, 0, "{out}");
        // Every tap on one slice, but tap 2 at an index of its own: no run either.
        let apart = taps(4, false).replace("%i2 = add i64 %i, 2", "%i2 = mul i64 %i, 3");
        let (out, n) = run(&apart);
        assert_eq!(n, 0, "{out}");
        // A length that is neither a slice's nor a small constant: no run.
        let mut unknown = taps(4, false).replace("i64 %i) #0", "i64 %i, i64 %n) #0");
        for k in 0..4 {
            unknown = unknown.replace(
                &format!("%ok{k} = icmp ult i64 %i{k}, %__oxide_in_x_len"),
                &format!("%ok{k} = icmp ult i64 %i{k}, %n"),
            );
        }
        let (out, n) = run(&unknown);
        assert_eq!(n, 0, "{out}");
    }

    fn with_decls(out: &str) -> String {
        format!("@__oxide_panic_buffer = external global ptr\n{out}attributes #0 = {{ nounwind }}\n")
    }

    /// Tap 0 and tap 2 alone under their conditions; tap 1 two reads under one condition.
    const MIXED: &str = "define ptx_kernel void @k(ptr noalias noundef readonly %__oxide_in_x, i64 noundef %__oxide_in_x_len, ptr %out, i64 %i, i1 %in0, i1 %in1, i1 %in2) #0 {
start:
  br i1 %in0, label %t0, label %j0

t0:                                               ; preds = %start
  %ok0 = icmp ult i64 %i, %__oxide_in_x_len
  br i1 %ok0, label %j0, label %panic

j0:                                               ; preds = %t0, %start
  br i1 %in1, label %t1, label %j1

t1:                                               ; preds = %j0
  %i1 = add i64 %i, 1
  %ok1 = icmp ult i64 %i1, %__oxide_in_x_len
  br i1 %ok1, label %u1, label %panic

u1:                                               ; preds = %t1
  %i1b = mul i64 %i, 2
  %ok1b = icmp ult i64 %i1b, %__oxide_in_x_len
  br i1 %ok1b, label %j1, label %panic

j1:                                               ; preds = %u1, %j0
  br i1 %in2, label %t2, label %done

t2:                                               ; preds = %j1
  %i2 = add i64 %i, 3
  %ok2 = icmp ult i64 %i2, %__oxide_in_x_len
  br i1 %ok2, label %done, label %panic

done:                                             ; preds = %t2, %j1
  ret void

panic:                                            ; preds = %t2, %u1, %t1, %t0
  %at = phi i32 [ 1, %t0 ], [ 2, %t1 ], [ 3, %u1 ], [ 4, %t2 ]
  %b = load volatile ptr, ptr @__oxide_panic_buffer, align 8
  unreachable
}
";

    #[test]
    fn checks_sharing_a_condition_keep_their_branches_and_still_panic_first() {
        let (out, n) = run(MIXED);
        assert_eq!(n, 1, "{out}");
        for want in [
            // Taps 0 and 2 go straight on; tap 1's two checks keep their branches.
            "  %ok0 = icmp ult i64 %i, %__oxide_in_x_len\n  br label %j0\n",
            "  br i1 %ok1, label %u1, label %panic\n",
            "  br i1 %ok1b, label %j1, label %panic\n",
            "  %ok2 = icmp ult i64 %i2, %__oxide_in_x_len\n  br label %done\n",
            // The picker tests all four in order, so tap 1 still panics before tap 2.
            "  %at = phi i32 [ 2, %t1 ], [ 3, %u1 ], [ 1, %__oxide_ec0_d0 ], [ 2, %__oxide_ec0_d1 ], [ 3, %__oxide_ec0_d2 ], [ 4, %__oxide_ec0_d3 ]\n",
            "__oxide_ec0_d3:\n  br label %panic\n",
        ] {
            assert!(out.contains(want), "missing\n{want}\nin\n{out}");
        }
        crate::ir::tests::assert_valid_ir("early-checks-mixed", &with_decls(&out));
    }

    /// LLVM's verifier accepts the result.
    #[test]
    fn the_rewrite_is_valid_ir() {
        let (out, n) = run(TAPS);
        assert_eq!(n, 1);
        crate::ir::tests::assert_valid_ir("early-checks", &with_decls(&out));
    }
}
