//! Unrolled loop remainders as a row of guarded steps instead of a chain of early exits
//! (after `opt`, before `llc`).
//!
//! A block-stride loop over a row (`row.iter().skip(t).step_by(B)`, 8 elements per thread in
//! the frozen suite's xent_rows) reaches llc with its first iteration peeled and the rest
//! unrolled 8 times; the 7 iterations left after the peel all fall to the remainder. Unrolled
//! (`-unroll-remainder`, set in codegen.rs), LLVM writes that remainder as a chain:
//!
//! ```text
//! E1: %v1 = load float, ptr %p1 ; %m1 = max(%m0, %v1) ; br i1 (n == 1), label %X, label %E2
//! E2: %v2 = load float, ptr %p2 ; %m2 = max(%m1, %v2) ; br i1 (n == 2), label %X, label %E3
//! ...
//! X:  %m = phi float [ %m1, %E1 ], [ %m2, %E2 ], ...
//! ```
//!
//! Each load sits behind the exit test of the step before it, which ptxas does not cross, so
//! the loads go out one at a time (nvcc's loop of the same row issues them four at once: 2.0x
//! its time). Here every step after the first becomes a guarded one that the row continues past,
//!
//! ```text
//! E1: ... ; %g2 = xor i1 (n == 1), true ; br i1 %g2, label %E2, label %J2
//! E2: ... ; br label %J2
//! J2: %g3 = phi i1 [ !(n == 2), %E2 ], [ false, %E1 ]      ; E3 runs only if E2 did and went on
//!     %m.2 = phi float [ %m2, %E2 ], [ %m1, %E1 ]           ; what X would see so far
//!     %v2.j = phi ... [ %v2, %E2 ], [ poison, %E1 ]         ; E2's values, for later steps
//!     br i1 %g3, label %E3, label %J3
//! ...
//! Jn: ... ; br label %X                                     ; X's phi takes %m.n from Jn
//! ```
//!
//! which runs exactly the steps the chain ran (a step runs iff no exit test before it was
//! true) and hands X the value of the step the chain left from. Each step is now an if-then
//! that ptxas turns into predicated instructions, so all the loads can be in flight together.

use super::guarded_loads::{blocks, each_kernel, incoming, Block, REMOVED};
use super::speculated_blocks::PURE_OPS;
use super::{split_type, uses_value, Line};

/// Shortest chain worth rewriting: three loads that would otherwise go out one by one.
const MIN_STEPS: usize = 3;

/// Rewrites every qualifying chain of every kernel; returns how many chains changed.
pub(super) fn rewrite(lines: &mut Vec<Line>) -> usize {
    each_kernel(lines, |body, _, first| rewrite_function(body, first))
}

/// One chain: its blocks in order and the exit block they all leave to.
struct Chain {
    steps: Vec<usize>,
    exit: String,
}

/// `br i1 %c, label %A, label %B` as (condition, true target, false target).
pub(super) fn cond_branch(line: &str) -> Option<(String, String, String)> {
    let rest = line.trim().strip_prefix("br i1 ")?;
    let mut parts = rest.split(", ");
    let c = parts.next()?.trim().to_string();
    let t = parts.next()?.trim().strip_prefix("label ")?.to_string();
    let f = parts.next()?.trim().strip_prefix("label ")?.trim_end().to_string();
    Some((c, t, f))
}

fn rewrite_function(mut body: Vec<Line>, first_id: usize) -> (Vec<Line>, usize) {
    let blocks = blocks(&body);
    let find = |label: &str| blocks.iter().position(|b| b.label == label);
    let mut chains: Vec<Chain> = Vec::new();
    let mut taken = vec![false; blocks.len()];
    for i in 0..blocks.len() {
        if taken[i] {
            continue;
        }
        let Some(chain) = chain_from(&body, &blocks, i, &find) else { continue };
        for &s in &chain.steps {
            taken[s] = true;
        }
        chains.push(chain);
    }
    if chains.is_empty() {
        return (body, 0);
    }
    let mut additions: Vec<(usize, Vec<String>)> = Vec::new();
    let mut count = 0;
    for (n, chain) in chains.iter().enumerate() {
        if let Some(adds) = rewrite_chain(&mut body, &blocks, chain, first_id + n) {
            additions.extend(adds);
            count += 1;
        }
    }
    // New lines go after the given line indices, back to front so the indices hold.
    additions.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
    for (at, new) in additions {
        let no = body[at].no;
        body.splice(at + 1..at + 1, new.into_iter().map(|text| Line { no, text }));
    }
    body.retain(|l| l.text != REMOVED);
    (body, count)
}

/// The longest chain starting at block `start`: each step ends in an exit test to the same
/// block X, goes on to a block whose only predecessor it is and which has no phi, and the last
/// step ends in `br label %X`.
fn chain_from(body: &[Line], blocks: &[Block], start: usize, find: &impl Fn(&str) -> Option<usize>) -> Option<Chain> {
    let first = &blocks[start];
    let (_, a, b) = cond_branch(body[*first.insts.last()?].text.trim())?;
    // Which side goes on: the block whose single predecessor is `first`.
    let goes_on = |l: &str| find(l).is_some_and(|k| blocks[k].preds.len() == 1 && blocks[k].preds[0] == first.label);
    let (exit, mut next) = match (goes_on(&a), goes_on(&b)) {
        (true, false) => (b, a),
        (false, true) => (a, b),
        _ => return None,
    };
    let mut steps = vec![start];
    loop {
        let k = find(&next)?;
        let blk = &blocks[k];
        if blk.preds.len() != 1 || body[blk.insts[0]].text.contains(" = phi ") || k == start {
            return None;
        }
        steps.push(k);
        let term = body[*blk.insts.last()?].text.trim().to_string();
        if term == format!("br label {exit}") {
            break;
        }
        let (_, a, b) = cond_branch(&term)?;
        next = if a == exit {
            b
        } else if b == exit {
            a
        } else {
            return None;
        };
        if steps.len() > 64 {
            return None;
        }
    }
    // Only remainders of loads and arithmetic: nothing that writes, synchronises or calls out
    // (the rewrite keeps every instruction's order and condition, but there is no gain to have
    // elsewhere, and this keeps the blocks it touches to what unrolling makes).
    // Every step reads memory (the unrolled copies of a loop body that loads): a chain of
    // plain tests, such as `a && b` guarding one read, is left as it is.
    for &k in &steps[1..] {
        let mut loads = 0;
        for &i in &blocks[k].insts {
            let line = body[i].text.trim();
            if line.starts_with("br ") {
                continue;
            }
            let rhs = line.split_once(" = ").map_or(line, |(_, r)| r);
            let op = rhs.split_whitespace().next().unwrap_or("");
            if op == "load" && !rhs.starts_with("load atomic") && !rhs.starts_with("load volatile") {
                loads += 1;
            } else if op == "call" || op == "tail" {
                if !PURE_CALLS.iter().any(|c| rhs.contains(c)) || rhs.contains(" asm ") {
                    return None;
                }
            } else if !PURE_OPS.contains(&op) && !matches!(op, "fdiv" | "frem") {
                return None;
            }
        }
        if loads == 0 {
            return None;
        }
    }
    (steps.len() >= MIN_STEPS).then_some(Chain { steps, exit })
}

/// Intrinsics a remainder step may call: arithmetic only.
const PURE_CALLS: [&str; 22] = [
    "@llvm.fma.",
    "@llvm.fmuladd.",
    "@llvm.maxnum.",
    "@llvm.minnum.",
    "@llvm.maximum.",
    "@llvm.minimum.",
    "@llvm.fabs.",
    "@llvm.sqrt.",
    "@llvm.copysign.",
    "@llvm.floor.",
    "@llvm.ceil.",
    "@llvm.umin.",
    "@llvm.umax.",
    "@llvm.smin.",
    "@llvm.smax.",
    "@llvm.abs.",
    "@llvm.ctpop.",
    "@llvm.nvvm.ex2.approx.",
    "@llvm.nvvm.lg2.approx.",
    "@llvm.nvvm.saturate.",
    "@llvm.nvvm.fma.",
    "@llvm.nvvm.rcp.",
];

/// The type of the value an instruction's right-hand side makes, where it can be read off.
fn result_type(rhs: &str) -> Option<String> {
    let rhs = rhs.trim();
    let word = rhs.split_whitespace().next()?;
    let after = |s: &str| -> Option<String> {
        // Skip flags (`nuw`, `fast`, …) up to the type.
        let mut rest = s;
        loop {
            let (w, r) = rest.trim_start().split_once(' ')?;
            if matches!(
                w,
                "nuw"
                    | "nsw"
                    | "exact"
                    | "disjoint"
                    | "nneg"
                    | "samesign"
                    | "fast"
                    | "nnan"
                    | "ninf"
                    | "nsz"
                    | "arcp"
                    | "contract"
                    | "afn"
                    | "reassoc"
                    | "volatile"
                    | "tail"
                    | "noundef"
                    | "inbounds"
            ) {
                rest = r;
                continue;
            }
            return Some(split_type(rest).0.to_string());
        }
    };
    match word {
        "icmp" | "fcmp" => Some("i1".into()),
        "getelementptr" => Some("ptr".into()),
        "load" | "phi" | "freeze" | "fneg" => after(&rhs[word.len()..]),
        "add" | "sub" | "mul" | "shl" | "lshr" | "ashr" | "and" | "or" | "xor" | "fadd" | "fsub" | "fmul" | "fdiv"
        | "udiv" | "sdiv" | "urem" | "srem" | "frem" => after(&rhs[word.len()..]),
        "zext" | "sext" | "trunc" | "bitcast" | "fpext" | "fptrunc" | "sitofp" | "uitofp" | "fptosi" | "fptoui"
        | "ptrtoint" | "inttoptr" | "addrspacecast" => Some(rhs.rsplit_once(" to ")?.1.trim().to_string()),
        "select" => {
            let parts = super::split_top(&rhs["select".len()..]);
            Some(split_type(parts.get(1)?).0.to_string())
        }
        "call" | "tail" => {
            let call = rhs.split_once("call ")?.1;
            let mut rest = call;
            // Return attributes come before the type.
            loop {
                let (w, r) = rest.trim_start().split_once(' ')?;
                if matches!(
                    w,
                    "noundef" | "nonnull" | "fast" | "nnan" | "ninf" | "nsz" | "contract" | "afn" | "reassoc"
                ) || w.starts_with("range(")
                    || w.starts_with("zeroext")
                    || w.starts_with("signext")
                {
                    rest = r;
                    continue;
                }
                let ty = split_type(rest).0;
                return (ty != "void").then(|| ty.to_string());
            }
        }
        _ => None,
    }
}

/// Rewrites one chain in place (terminators, label comments and the exit's phis) and returns
/// the lines to add after given line indices: the go-on tests and the join blocks.
fn rewrite_chain(body: &mut [Line], blocks: &[Block], chain: &Chain, id: usize) -> Option<Vec<(usize, Vec<String>)>> {
    let steps: Vec<&Block> = chain.steps.iter().map(|&i| &blocks[i]).collect();
    let n = steps.len();
    let exit = blocks.iter().find(|b| b.label == chain.exit)?;
    let labels: Vec<&str> = steps.iter().map(|b| b.label.as_str()).collect();
    let join = |k: usize| format!("%__oxide_ge{id}_j{k}");
    // The block a step (or join) after step 0 is entered from when step k is skipped.
    let skipped_from = |k: usize| if k == 1 { labels[0].to_string() } else { join(k - 1) };
    // The exit's phis: (line index, type, value from each step).
    let mut phis = Vec::new();
    for &i in &exit.insts {
        let text = body[i].text.trim();
        let Some((_, rest)) = text.split_once(" = phi ") else { break };
        let ty = split_type(rest).0.to_string();
        let from: Option<Vec<String>> = labels.iter().map(|l| incoming(text, l)).collect();
        phis.push((i, ty, from?));
    }
    let exit_phi_lines: Vec<usize> = phis.iter().map(|(i, _, _)| *i).collect();
    // Values step k (k >= 1) defines that later steps or the exit (from a later step) read:
    // carried through join k by a phi, and read under the joined name after it.
    let mut carried: Vec<(usize, String, String)> = Vec::new();
    for (k, s) in steps.iter().enumerate().skip(1) {
        let later: Vec<usize> = steps[k + 1..].iter().flat_map(|b| b.insts.iter().copied()).collect();
        for &i in &s.insts {
            let Some((name, rhs)) = body[i].text.trim().split_once(" = ") else { continue };
            let name = name.to_string();
            let by_exit = phis.iter().any(|(_, _, from)| from[k + 1..].contains(&name));
            let by_steps = later.iter().any(|&j| uses_value(&body[j].text, &name));
            // Any other use outside the step and the rewrite stops.
            let elsewhere = body.iter().enumerate().any(|(j, l)| {
                !s.insts.contains(&j)
                    && !later.contains(&j)
                    && !exit_phi_lines.contains(&j)
                    && l.text.starts_with(char::is_whitespace)
                    && uses_value(&l.text, &name)
            });
            if elsewhere {
                return None;
            }
            if by_exit || by_steps {
                carried.push((k, name, result_type(rhs)?));
            }
        }
    }
    // What a value is called at step (or join) `m`: its joined name if a step before m made it.
    // (Numbered values cannot take a suffix: the joined names are `%__oxide_ge<id>_v<n>`.)
    let joined = |v: usize| format!("%__oxide_ge{id}_v{v}");
    let renamed = |text: &str, m: usize| -> String {
        let mut t = text.to_string();
        for (v, (k, name, _)) in carried.iter().enumerate() {
            if *k < m {
                t = replace_value(&t, name, &joined(v));
            }
        }
        t
    };
    let mut adds: Vec<(usize, Vec<String>)> = Vec::new();
    let first_term = *steps[0].insts.last()?;
    // Exit tests of values from before the chain move to step 0 ("early"), where the guards of
    // all steps are then known before the first load.
    let early = early_tests(body, &steps);
    let mut in_first: Vec<String> = Vec::new();
    if let Some(tests) = &early {
        for &i in tests {
            in_first.push(std::mem::replace(&mut body[i].text, REMOVED.to_string()));
        }
    }
    // Go-on tests: true when step k's branch went to step k + 1.
    let mut go_on: Vec<String> = Vec::new();
    for (k, s) in steps.iter().enumerate().take(n - 1) {
        let term = *s.insts.last()?;
        let (c, a, _) = cond_branch(body[term].text.trim())?;
        let name = format!("%__oxide_ge{id}_go{k}");
        let c = renamed(&c, k);
        let line = if a == labels[k + 1] {
            format!("  {name} = or i1 {c}, false")
        } else {
            format!("  {name} = xor i1 {c}, true")
        };
        if early.is_some() {
            in_first.push(line);
        } else {
            adds.push((term - 1, vec![line]));
        }
        go_on.push(name);
    }
    // Early: step k + 1 runs iff step k did and went on, `run{k}`, made in step 0 as well.
    if early.is_some() {
        for k in 1..n - 1 {
            let before = if k == 1 { go_on[0].clone() } else { format!("%__oxide_ge{id}_run{}", k - 1) };
            in_first.push(format!("  %__oxide_ge{id}_run{k} = and i1 {before}, {}", go_on[k]));
        }
    }
    if !in_first.is_empty() {
        adds.push((first_term - 1, in_first));
    }
    // Later steps read the joined names.
    for (m, s) in steps.iter().enumerate().skip(2) {
        for &i in &s.insts {
            body[i].text = renamed(&body[i].text, m);
        }
    }
    body[first_term].text = format!("  br i1 {}, label {}, label {}", go_on[0], labels[1], join(1));
    for (k, s) in steps.iter().enumerate().skip(1) {
        let term = *s.insts.last()?;
        body[term].text = format!("  br label {}", join(k));
        let prev = skipped_from(k);
        let mut j = vec![String::new(), format!("{}: ; preds = {}, {prev}", &join(k)[1..], labels[k])];
        if k + 1 < n && early.is_none() {
            j.push(format!("  %__oxide_ge{id}_run{k} = phi i1 [ {}, {} ], [ false, {prev} ]", go_on[k], labels[k]));
        }
        for (v, (_, name, ty)) in carried.iter().enumerate().filter(|(_, (c, _, _))| *c == k) {
            j.push(format!("  {} = phi {ty} [ {name}, {} ], [ poison, {prev} ]", joined(v), labels[k]));
        }
        for (p, (_, ty, from)) in phis.iter().enumerate() {
            let before = if k == 1 { from[0].clone() } else { format!("%__oxide_ge{id}_x{p}_{}", k - 1) };
            let value = renamed(&from[k], k);
            j.push(format!("  %__oxide_ge{id}_x{p}_{k} = phi {ty} [ {value}, {} ], [ {before}, {prev} ]", labels[k]));
        }
        j.push(if k + 1 < n {
            format!("  br i1 %__oxide_ge{id}_run{k}, label {}, label {}", labels[k + 1], join(k + 1))
        } else {
            format!("  br label {}", chain.exit)
        });
        adds.push((term, j));
    }
    // Steps after the second are now entered from a join.
    for (k, step) in labels.iter().enumerate().skip(2) {
        let label = &step[1..];
        if let Some(line) = body.iter_mut().find(|l| l.text.split_once(':').is_some_and(|(h, _)| h == label)) {
            line.text = format!("{label}: ; preds = {}", join(k - 1));
        }
    }
    // The exit's phis take one value, from the last join, instead of one per step.
    let last = join(n - 1);
    for (p, (i, _, _)) in phis.iter().enumerate() {
        let value = format!("%__oxide_ge{id}_x{p}_{}", n - 1);
        body[*i].text = replace_incoming_set(&body[*i].text, &labels, &value, &last);
    }
    if let Some(line) = body.iter_mut().find(|l| l.text.split_once(':').is_some_and(|(h, _)| h == &chain.exit[1..])) {
        if let Some((head, preds)) = line.text.clone().split_once("; preds = ") {
            let kept: Vec<&str> = preds.split(", ").filter(|p| !labels.contains(&p.trim())).collect();
            let mut all: Vec<String> = kept.iter().map(|p| p.trim().to_string()).collect();
            all.push(last.clone());
            line.text = format!("{head}; preds = {}", all.join(", "));
        }
    }
    Some(adds)
}

/// The line indices of the exit tests of steps 1..n-1 when each is an `icmp` in its own step
/// that reads no value a step after the first makes, so it can be made in step 0 instead.
fn early_tests(body: &[Line], steps: &[&Block]) -> Option<Vec<usize>> {
    let made: Vec<&str> = steps[1..]
        .iter()
        .flat_map(|s| s.insts.iter())
        .filter_map(|&i| body[i].text.trim().split_once(" = ").map(|(name, _)| name))
        .collect();
    let mut tests = Vec::new();
    for s in &steps[1..steps.len() - 1] {
        let (c, _, _) = cond_branch(body[*s.insts.last()?].text.trim())?;
        let &i = s.insts.iter().find(|&&i| body[i].text.trim().starts_with(&format!("{c} = icmp ")))?;
        let rhs = body[i].text.trim().split_once(" = ")?.1;
        if made.iter().any(|v| uses_value(rhs, v)) {
            return None;
        }
        // The test's only use is the branch (it moves; nothing else may read it in its step).
        let uses = s.insts.iter().filter(|&&j| j != i && uses_value(&body[j].text, &c)).count();
        if uses != 1 {
            return None;
        }
        tests.push(i);
    }
    Some(tests)
}

/// `line` with every use of value `old` renamed `new`.
pub(super) fn replace_value(line: &str, old: &str, new: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(old) {
        let end = at + old.len();
        let whole = !rest[end..].bytes().next().is_some_and(super::is_ident_byte)
            && (at == 0 || !super::is_ident_byte(rest.as_bytes()[at - 1]));
        out.push_str(&rest[..at]);
        out.push_str(if whole { new } else { old });
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// `phi` without its `[ value, label ]` entries for `labels`, with `[ value, label ]` added.
fn replace_incoming_set(phi: &str, labels: &[&str], value: &str, label: &str) -> String {
    let Some(open) = phi.find('[') else { return phi.to_string() };
    let head = phi[..open].trim_end().trim_end_matches(',');
    let mut entries: Vec<String> = phi[open..]
        .split(']')
        .filter_map(|e| {
            let inner = e.trim().trim_start_matches(',').trim().strip_prefix('[')?.trim();
            (!labels.contains(&inner.rsplit_once(',')?.1.trim())).then(|| format!("[ {inner} ]"))
        })
        .collect();
    entries.push(format!("[ {value}, {label} ]"));
    format!("{head} {}", entries.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ir: &str) -> (String, usize) {
        crate::ir::tests::transformed(ir, rewrite)
    }

    /// An unrolled remainder of three max-reduction steps, as LLVM writes it.
    const CHAIN: &str = "define ptx_kernel void @k(ptr noalias %__oxide_in_x, i64 %n, float %m0) #0 {
start:
  br label %e1

e1:                                               ; preds = %start
  %v1 = load float, ptr %__oxide_in_x, align 4
  %m1 = tail call float @llvm.maxnum.f32(float %m0, float %v1)
  %c1 = icmp eq i64 %n, 1
  br i1 %c1, label %x, label %e2

e2:                                               ; preds = %e1
  %p2 = getelementptr inbounds nuw i8, ptr %__oxide_in_x, i64 4
  %v2 = load float, ptr %p2, align 4
  %m2 = tail call float @llvm.maxnum.f32(float %m1, float %v2)
  %c2 = icmp eq i64 %n, 2
  br i1 %c2, label %x, label %e3

e3:                                               ; preds = %e2
  %p3 = getelementptr inbounds nuw i8, ptr %__oxide_in_x, i64 8
  %v3 = load float, ptr %p3, align 4
  %m3 = tail call float @llvm.maxnum.f32(float %m2, float %v3)
  br label %x

x:                                                ; preds = %e3, %e2, %e1
  %m = phi float [ %m1, %e1 ], [ %m2, %e2 ], [ %m3, %e3 ]
  ret void
}
";

    #[test]
    fn a_chain_of_exits_becomes_guarded_steps() {
        let (out, n) = run(CHAIN);
        assert_eq!(n, 1, "{out}");
        for want in [
            // e2's exit test reads only `%n`: it moves to e1, where every step's guard is made.
            "  %c1 = icmp eq i64 %n, 1\n  %c2 = icmp eq i64 %n, 2\n  %__oxide_ge0_go0 = xor i1 %c1, true\n",
            "  %__oxide_ge0_go1 = xor i1 %c2, true\n  %__oxide_ge0_run1 = and i1 %__oxide_ge0_go0, %__oxide_ge0_go1\n",
            "  br i1 %__oxide_ge0_go0, label %e2, label %__oxide_ge0_j1\n",
            "  %m2 = tail call float @llvm.maxnum.f32(float %m1, float %v2)\n  br label %__oxide_ge0_j1\n",
            "__oxide_ge0_j1: ; preds = %e2, %e1\n  %__oxide_ge0_v0 = phi float [ %m2, %e2 ], [ poison, %e1 ]\n",
            "  br i1 %__oxide_ge0_run1, label %e3, label %__oxide_ge0_j2\n",
            // e3 reads e2's max through the join (it runs only when e2 did).
            "  %__oxide_ge0_v0 = phi float [ %m2, %e2 ], [ poison, %e1 ]\n",
            "  %m3 = tail call float @llvm.maxnum.f32(float %__oxide_ge0_v0, float %v3)\n  br label %__oxide_ge0_j2\n",
            // What the exit sees: e1's, e2's or e3's max, whichever step the chain left from.
            "  %__oxide_ge0_x0_1 = phi float [ %m2, %e2 ], [ %m1, %e1 ]\n",
            "  %__oxide_ge0_x0_2 = phi float [ %m3, %e3 ], [ %__oxide_ge0_x0_1, %__oxide_ge0_j1 ]\n  br label %x\n",
            "  %m = phi float [ %__oxide_ge0_x0_2, %__oxide_ge0_j2 ]\n",
            "e3: ; preds = %__oxide_ge0_j1\n",
        ] {
            assert!(out.contains(want), "missing\n{want}\nin\n{out}");
        }
    }

    #[test]
    fn exit_tests_of_values_a_step_makes_stay_in_their_step() {
        // e2 leaves when its own load is negative: its guard is known only after that load.
        let ir = CHAIN.replace("%c2 = icmp eq i64 %n, 2", "%c2 = fcmp olt float %v2, 0.000000e+00");
        let (out, n) = run(&ir);
        assert_eq!(n, 1, "{out}");
        for want in [
            "  %c1 = icmp eq i64 %n, 1\n  %__oxide_ge0_go0 = xor i1 %c1, true\n  br i1 %__oxide_ge0_go0",
            "  %__oxide_ge0_go1 = xor i1 %c2, true\n  br label %__oxide_ge0_j1\n",
            "__oxide_ge0_j1: ; preds = %e2, %e1\n  %__oxide_ge0_run1 = phi i1 [ %__oxide_ge0_go1, %e2 ], [ false, %e1 ]\n",
        ] {
            assert!(out.contains(want), "missing\n{want}\nin\n{out}");
        }
    }

    /// LLVM's own verifier accepts the rewritten function (phis, joins, dominance).
    #[test]
    fn the_rewrite_is_valid_ir() {
        for chain in [CHAIN.to_string(), CHAIN.replace("%c2 = icmp eq i64 %n, 2", "%c2 = fcmp olt float %v2, 0.0")] {
            let (out, n) = run(&chain);
            assert_eq!(n, 1);
            let ir = format!("{out}declare float @llvm.maxnum.f32(float, float)\nattributes #0 = {{ nounwind }}\n");
            crate::ir::tests::assert_valid_ir("guarded-epilogs", &ir);
        }
    }

    #[test]
    fn chains_without_reads_or_with_writes_and_short_chains_stay() {
        // `a && b` guarding one read: the middle step reads nothing.
        let plain_tests = CHAIN.replace("  %v2 = load float, ptr %p2, align 4\n", "").replace("%v2)", "%v1)");
        let with_store = CHAIN.replace("  %c2 = icmp", "  store float %m2, ptr %p2, align 4\n  %c2 = icmp");
        let short = CHAIN
            .replace("  br i1 %c2, label %x, label %e3", "  br label %x")
            .replace("[ %m3, %e3 ]", "")
            .replace(", [ %m2, %e2 ], ]", ", [ %m2, %e2 ] ]");
        for (what, ir) in [("plain tests", plain_tests), ("a store", with_store), ("two steps", short)] {
            let (out, n) = run(&ir);
            assert_eq!(n, 0, "{what}: {out}");
        }
    }

    #[test]
    fn result_types_are_read_off_the_instruction() {
        assert_eq!(result_type("load float, ptr %p, align 4").as_deref(), Some("float"));
        assert_eq!(
            result_type("tail call noundef float @llvm.maxnum.f32(float %a, float %b)").as_deref(),
            Some("float")
        );
        assert_eq!(result_type("fadd contract float %a, %b").as_deref(), Some("float"));
        assert_eq!(result_type("getelementptr inbounds nuw i8, ptr %p, i64 4").as_deref(), Some("ptr"));
        assert_eq!(result_type("zext nneg i32 %a to i64").as_deref(), Some("i64"));
        assert_eq!(result_type("icmp eq i64 %n, 1").as_deref(), Some("i1"));
        assert_eq!(result_type("add nuw nsw i64 %a, 1").as_deref(), Some("i64"));
        assert_eq!(result_type("select i1 %c, <2 x float> %a, <2 x float> %b").as_deref(), Some("<2 x float>"));
    }
}
