//! A read at `i - C` behind `i >= C` and `i - C < n` tested by one unsigned compare (after
//! `opt`, before `llc`).
//!
//! The safe way to read a neighbour to the left, `i.checked_sub(C).and_then(|j| x.get(j))`
//! (a convolution's taps, a stencil's west cell), reaches llc as two tests on two branches:
//!
//! ```text
//! G:  %lo = icmp ult i64 %i, 7
//!     br i1 %lo, label %S, label %T
//! T:  %j = add nsw i64 %i, -7                                  ; preds = %G
//!     %in = icmp samesign ult i64 %j, %__oxide_in_x_len
//!     br i1 %in, label %L, label %S
//! S:  %acc = phi float [ %a, %G ], [ %a, %T ], [ %b, %L ]
//! ```
//!
//! ptxas predicates both, but each is a 64-bit compare (two SASS instructions) and each pair of
//! predicates is combined, so a 15-tap convolution spends 39 of its 189 instructions on the
//! left half's first tests (nvcc tests `j >= 0 && j < n` on `int`, 103 in all). When `n` is at
//! most `2^(w-1)` (a slice length: the launchers' `assume`s bound it) and `C` below that, the
//! wrapped `i - C` of an `i < C` is at least `2^w - C >= n`, so the second test alone fails
//! exactly when either did. `G` branches to `T` unconditionally, `T`'s subtraction loses `nuw`
//! and its compare `samesign` (both may now see the wrapped value), and `S` forgets `G` —
//! only when `S` took the same values from `G` and `T`, so nothing that reaches `S` changes.

use super::guarded_loads::{blocks, each_kernel, incoming, Block};
use super::{definitions, int_bits, split_top, Line};
use std::collections::HashMap;

/// Merges every qualifying pair of tests in every kernel; returns how many.
pub(super) fn merge(lines: &mut Vec<Line>) -> usize {
    each_kernel(lines, |body, _, _| rewrite_function(body))
}

fn rewrite_function(mut body: Vec<Line>) -> (Vec<Line>, usize) {
    let mut count = 0;
    // Each merge changes one branch and its phis; the blocks are read again after each.
    while let Some(site) = find(&body) {
        apply(&mut body, &site);
        count += 1;
    }
    (body, count)
}

/// One pair of tests to merge.
struct Site {
    /// `G`'s terminator, its label and `T`'s label.
    guard_term: usize,
    guard: String,
    test: String,
    /// `T`'s subtraction and compare (rewritten in place).
    sub: usize,
    cmp: usize,
    /// `S`'s label line and its phis.
    skip_label: usize,
    skip_phis: Vec<usize>,
}

fn find(body: &[Line]) -> Option<Site> {
    let blocks = blocks(body);
    let defs = definitions(body);
    let bounds = assumed_bounds(body, &defs);
    let by_label: HashMap<&str, &Block> = blocks.iter().map(|b| (b.label.as_str(), b)).collect();
    for g in &blocks {
        let Some(&term) = g.insts.last() else { continue };
        let Some((cond, on_true, on_false)) = cond_branch(&body[term].text) else { continue };
        let Some((x, c, low_on_true)) = lower_test(&defs, body, &cond) else { continue };
        let (skip, test) = if low_on_true { (on_true, on_false) } else { (on_false, on_true) };
        let (Some(t), Some(s)) = (by_label.get(test.as_str()), by_label.get(skip.as_str())) else { continue };
        if t.preds != [g.label.clone()] || skip == test || g.label.is_empty() {
            continue;
        }
        let Some((sub, cmp)) = upper_test(body, t, &x, c, &skip, &bounds) else { continue };
        let Some(skip_phis) = same_values(body, s, &g.label, &t.label) else { continue };
        let skip_label = s.insts.first().map(|&i| label_line(body, i))?;
        return Some(Site {
            guard_term: term,
            guard: g.label.clone(),
            test: t.label.clone(),
            sub,
            cmp,
            skip_label,
            skip_phis,
        });
    }
    None
}

fn apply(body: &mut [Line], site: &Site) {
    let indent = "  ";
    body[site.guard_term].text = format!("{indent}br label {}", site.test);
    body[site.sub].text =
        body[site.sub].text.replacen(" add nuw nsw ", " add nsw ", 1).replacen(" add nuw ", " add ", 1);
    body[site.cmp].text = body[site.cmp].text.replacen(" icmp samesign ", " icmp ", 1);
    for &p in &site.skip_phis {
        body[p].text = without_incoming(&body[p].text, &site.guard);
    }
    let label = &mut body[site.skip_label].text;
    if let Some((head, preds)) = label.split_once("; preds = ") {
        let kept: Vec<&str> = preds.split(", ").map(str::trim).filter(|p| *p != site.guard).collect();
        *label = format!("{head}; preds = {}", kept.join(", "));
    }
}

/// The right-hand side of `%name`'s definition, without trailing metadata.
fn rhs<'a>(body: &'a [Line], defs: &HashMap<String, usize>, name: &str) -> Option<&'a str> {
    let text = &body[*defs.get(name)?].text;
    Some(text.split_once(" = ")?.1.split(", !").next()?.trim())
}

/// `(type, a, b, predicate)` of `icmp [samesign] PRED TY A, B`.
fn icmp(rhs: &str) -> Option<(&str, &str, &str, &str)> {
    let rest = rhs.strip_prefix("icmp ")?;
    let rest = rest.strip_prefix("samesign ").unwrap_or(rest);
    let (pred, rest) = rest.split_once(' ')?;
    let (ty, rest) = rest.split_once(' ')?;
    let (a, b) = rest.split_once(", ")?;
    Some((ty, a.trim(), b.trim(), pred))
}

/// `(%cond, true target, false target)` of `br i1 %cond, label %A, label %B`.
fn cond_branch(line: &str) -> Option<(String, String, String)> {
    let rest = line.trim().strip_prefix("br i1 ")?;
    let parts: Vec<&str> = rest.split(", ").collect();
    let [cond, a, b] = parts.as_slice() else { return None };
    Some((cond.to_string(), a.strip_prefix("label ")?.to_string(), b.strip_prefix("label ")?.to_string()))
}

/// `%cond` as "`x < C`" (true when the test is low, i.e. `x` would wrap) or its negation:
/// `(x, C, cond means x < C)`.
fn lower_test(defs: &HashMap<String, usize>, body: &[Line], cond: &str) -> Option<(String, u64, bool)> {
    let (ty, a, b, pred) = icmp(rhs(body, defs, cond)?)?;
    int_bits(ty)?;
    let k: u64 = b.parse().ok()?;
    let (c, low) = match pred {
        "ult" => (k, true),
        "eq" if k == 0 => (1, true),
        "ugt" => (k.checked_add(1)?, false),
        "ne" if k == 0 => (1, false),
        _ => return None,
    };
    (a.starts_with('%') && c > 0).then(|| (a.to_string(), c, low))
}

/// In `T`: `%j = add [nuw] [nsw] TY %x, -C`, `%in = icmp [samesign] ult TY %j, %n` and a branch
/// to `skip` when it fails, with `n` at most `2^(w-1)` and `C` below that; `(sub, cmp)` lines.
fn upper_test(
    body: &[Line],
    t: &Block,
    x: &str,
    c: u64,
    skip: &str,
    bounds: &HashMap<String, u128>,
) -> Option<(usize, usize)> {
    let [sub, cmp, term] = t.insts.as_slice() else { return None };
    let (j, add) = body[*sub].text.split_once(" = ")?;
    let add = add.trim();
    let ops = add.strip_prefix("add ")?;
    let ops = ops.trim_start_matches("nuw ").trim_start_matches("nsw ");
    let (ty, ops) = ops.split_once(' ')?;
    let bits = int_bits(ty)?;
    let parts = split_top(ops);
    let [a, k] = parts.as_slice() else { return None };
    let k: i128 = k.trim().parse().ok()?;
    if a.trim() != x || k != -i128::from(c) {
        return None;
    }
    let (in_name, cmp_rhs) = body[*cmp].text.split_once(" = ")?;
    let (cty, ca, n, pred) = icmp(cmp_rhs.split(", !").next()?.trim())?;
    if cty != ty || ca != j.trim() || pred != "ult" {
        return None;
    }
    let (cond, on_true, on_false) = cond_branch(&body[*term].text)?;
    if cond != in_name.trim() || on_false != skip || on_true == skip {
        return None;
    }
    let half = 1u128 << (bits - 1);
    let n_max = match n.parse::<u128>() {
        Ok(v) => v,
        Err(_) => *bounds.get(n)?,
    };
    (n_max <= half && u128::from(c) < half).then_some((*sub, *cmp))
}

/// Upper bounds (inclusive) the function states with `llvm.assume(icmp ult %v, K)`.
pub(super) fn assumed_bounds(body: &[Line], defs: &HashMap<String, usize>) -> HashMap<String, u128> {
    let mut out = HashMap::new();
    for line in body {
        let Some(rest) = line
            .text
            .trim()
            .strip_prefix("tail call void @llvm.assume(i1 ")
            .or_else(|| line.text.trim().strip_prefix("call void @llvm.assume(i1 "))
        else {
            continue;
        };
        let Some(cond) = rest.split(')').next() else { continue };
        let Some((_, v, k, pred)) = rhs(body, defs, cond.trim()).and_then(icmp) else { continue };
        if let (Ok(k), "ult") = (k.parse::<u128>(), pred) {
            if k > 0 {
                out.insert(v.to_string(), k - 1);
            }
        }
    }
    out
}

/// The phis of `S` when each takes the same value from `g` and from `t`.
fn same_values(body: &[Line], s: &Block, g: &str, t: &str) -> Option<Vec<usize>> {
    let mut phis = Vec::new();
    for &i in &s.insts {
        let text = &body[i].text;
        if !text.contains(" = phi ") {
            break;
        }
        if incoming(text, g)? != incoming(text, t)? {
            return None;
        }
        phis.push(i);
    }
    Some(phis)
}

/// The line of the label of the block whose first instruction is line `first`.
fn label_line(body: &[Line], first: usize) -> usize {
    (0..first)
        .rev()
        .find(|&i| !body[i].text.starts_with(char::is_whitespace) && body[i].text.contains(':'))
        .unwrap_or(first)
}

/// `phi` without its `[ v, %label ]` entry.
fn without_incoming(phi: &str, label: &str) -> String {
    let (Some(open), Some(close)) = (phi.find('['), phi.rfind(']')) else { return phi.to_string() };
    let kept: Vec<String> = phi[open + 1..close]
        .split("], [")
        .map(str::trim)
        .filter(|e| e.rsplit_once(',').is_none_or(|(_, from)| from.trim() != label))
        .map(|e| format!("[ {e} ]"))
        .collect();
    format!("{}{}{}", &phi[..open], kept.join(", "), &phi[close + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two taps of a convolution: `x[i - 2]` (lower test `i < 2`) and `x[i - 1]` (`i == 0`).
    const TAPS: &str =
        "define ptx_kernel void @k(ptr noalias readonly %__oxide_in_x, i64 %__oxide_in_x_len, i64 %i, ptr %out) #0 {
start:
  %b = icmp ult i64 %__oxide_in_x_len, 2305843009213693952
  tail call void @llvm.assume(i1 %b)
  %lo = icmp samesign ult i64 %i, 2
  br i1 %lo, label %s1, label %t1

t1:                                               ; preds = %start
  %j = add nuw nsw i64 %i, -2
  %in = icmp samesign ult i64 %j, %__oxide_in_x_len
  br i1 %in, label %l1, label %s1

l1:                                               ; preds = %t1
  %p = getelementptr inbounds nuw float, ptr %__oxide_in_x, i64 %j
  %v = load float, ptr %p, align 4
  br label %s1

s1:                                               ; preds = %l1, %t1, %start
  %a = phi float [ %v, %l1 ], [ 0.000000e+00, %t1 ], [ 0.000000e+00, %start ]
  %z = icmp eq i64 %i, 0
  br i1 %z, label %s2, label %t2

t2:                                               ; preds = %s1
  %j2 = add nsw i64 %i, -1
  %in2 = icmp ult i64 %j2, %__oxide_in_x_len
  br i1 %in2, label %l2, label %s2

l2:                                               ; preds = %t2
  %p2 = getelementptr inbounds nuw float, ptr %__oxide_in_x, i64 %j2
  %v2 = load float, ptr %p2, align 4
  %w = fadd float %a, %v2
  br label %s2

s2:                                               ; preds = %l2, %t2, %s1
  %r = phi float [ %w, %l2 ], [ %a, %t2 ], [ %a, %s1 ]
  store float %r, ptr %out, align 4
  ret void
}

declare void @llvm.assume(i1)
";

    #[test]
    fn a_lower_and_an_upper_test_become_one_unsigned_compare() {
        let (out, n) = crate::ir::tests::transformed(TAPS, merge);
        assert_eq!(n, 2, "{out}");
        for want in [
            "  %lo = icmp samesign ult i64 %i, 2\n  br label %t1\n",
            // The subtraction may wrap now: no `nuw`; the compare sees a wrapped value: no `samesign`.
            "  %j = add nsw i64 %i, -2\n  %in = icmp ult i64 %j, %__oxide_in_x_len\n",
            "s1:                                               ; preds = %l1, %t1\n  %a = phi float [ %v, %l1 ], [ 0.000000e+00, %t1 ]\n",
            "  br label %t2\n",
            "s2:                                               ; preds = %l2, %t2\n  %r = phi float [ %w, %l2 ], [ %a, %t2 ]\n",
        ] {
            assert!(out.contains(want), "missing\n{want}\nin\n{out}");
        }
        crate::ir::tests::assert_valid_ir("offset-checks", &out);
    }

    #[test]
    fn tests_stay_when_the_merge_could_change_a_result() {
        let cases = [
            // No bound on `n` (a plain `u64` argument may exceed `2^63`).
            TAPS.replace("  tail call void @llvm.assume(i1 %b)\n", ""),
            // A bound above `2^63`: a wrapped `i - C` could still be below it.
            TAPS.replace("2305843009213693952", "9223372036854775810"),
            // The skipped path's value differs from the failed upper test's.
            TAPS.replace(
                "[ 0.000000e+00, %t1 ], [ 0.000000e+00, %start ]",
                "[ 0.000000e+00, %t1 ], [ 1.000000e+00, %start ]",
            )
            .replace("[ %a, %t2 ], [ %a, %s1 ]", "[ %a, %t2 ], [ %v, %s1 ]"),
            // The upper test is not of `i - C` for the lower test's `C`.
            TAPS.replace("%j = add nuw nsw i64 %i, -2", "%j = add nuw nsw i64 %i, -3")
                .replace("%j2 = add nsw i64 %i, -1", "%j2 = add nsw i64 %i, 1"),
        ];
        for ir in cases {
            let (out, n) = crate::ir::tests::transformed(&ir, merge);
            assert_eq!((n, out.as_str()), (0, ir.as_str()));
        }
    }
}
