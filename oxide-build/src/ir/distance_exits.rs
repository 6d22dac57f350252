//! Loop exits on a remaining distance, rewritten as a bound on the moving address.
//!
//! core's `step_by` over a slice iterator (`row.iter().skip(t).step_by(B)`, the block-stride
//! loop of a row kernel) stops when the bytes left drop to `K` or below:
//! `icmp ugt (sub nuw end, p), K`. LLVM's scalar evolution finds no trip count for that
//! decreasing difference, so the loop is never unrolled and its loads run one at a time (H200,
//! frozen suite: xent_rows 2.0 and layernorm_rows 1.7 of nvcc's time). The same test written
//! `p < usub.sat(end, K)` has a counted exit (`end - K` is loop-invariant, `p` an induction
//! variable) and is exactly equal: `nuw` makes `p <= end`, so `end - p > K` is `p + K < end`,
//! is `p < end - K`, and both sides are false when `end <= K`.
//!
//! When `p` is `gep p_i, C` of a single-block loop's pointer phi stepping by a constant `S`, the
//! test is made on the byte offset from the phi's start `p0` instead: a new phi `o` (0, `o + S`)
//! and `o + C < usub.sat(end - p0, K)`, with `end - p0` computed once before the loop. The trip
//! count LLVM derives is then arithmetic on offsets, `end - p0` folding to the row's length
//! minus the thread's start; on addresses it adds the base to both sides and compares them
//! through a 64-bit `umax` of addresses (xent_rows: ~30 SASS instructions per loop, run twice).
//! Equal to the address test: `p = p0 + o + C` without wrapping (`inbounds nuw`), and
//! `p <= end` (the original `sub nuw`) gives `p0 <= end`.
//!
//! Such a loop (a thread's share of a row, a few steps) is marked to unroll 8 times
//! (`llvm.loop.unroll.count`): up to 8 steps then run as the unrolled remainder, whose guarded
//! loads all go out together (`guarded_epilogs.rs`). LLVM's own count follows the body's size:
//! xent_rows' `exp` pass got 2, so its 7 steps after the peeled first waited for memory four
//! times (H200: xent_rows 1.27 -> 1.19 of nvcc's time, layernorm_rows and kmeans_assign
//! unchanged; a count of 4 was worse, 1.34, its one unrolled step and remainder waiting twice).

use super::{guarded_loads, uses_value, Line};

/// Rewrites each `%d = sub nuw i64 %end, %p` whose only use is `%c = icmp ugt i64 %d, K` (an
/// integer literal) into `%d = usub.sat(%end, K)` and `%c = icmp ult i64 %p, %d`. Returns
/// whether any was rewritten (the optimiser should then unroll at run time).
pub(super) fn counted_exits(lines: &mut Vec<Line>) -> bool {
    let mut rewrote = false;
    let mut loops: Vec<String> = Vec::new();
    let mut start = 0;
    while let Some(offset) = lines[start..].iter().position(|l| l.text.starts_with("define ")) {
        let begin = start + offset;
        let end = lines[begin..].iter().position(|l| l.text == "}").map_or(lines.len(), |e| begin + e);
        let mut body: Vec<Line> = lines.splice(begin..end, []).collect();
        rewrote |= rewrite_function(&mut body, &mut loops);
        let len = body.len();
        lines.splice(begin..begin, body);
        start = begin + len;
    }
    unroll_count(lines, &loops);
    if rewrote && !lines.iter().any(|l| l.text.starts_with("declare ") && l.text.contains("@llvm.usub.sat.i64(")) {
        let no = lines.last().map_or(0, |l| l.no);
        lines.push(Line { no, text: "declare i64 @llvm.usub.sat.i64(i64, i64)".to_string() });
    }
    rewrote
}

/// Steps of a block-stride loop run per unrolled iteration (the module doc's last paragraph).
const UNROLL: u32 = 8;

/// Adds `llvm.loop.unroll.count` [`UNROLL`] to the loop metadata nodes `ids` (`!N` names of
/// `distinct !{!N, ...}`), through one new node numbered past every other.
fn unroll_count(lines: &mut Vec<Line>, ids: &[String]) {
    if ids.is_empty() {
        return;
    }
    let max = lines
        .iter()
        .filter_map(|l| l.text.strip_prefix('!')?.split_once(" = ")?.0.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    let count = format!("!{}", max + 1);
    for l in lines.iter_mut() {
        let Some((id, rest)) = l.text.split_once(" = distinct !{") else { continue };
        if ids.iter().any(|i| i == id) {
            if let Some(head) = rest.strip_suffix('}') {
                l.text = format!("{id} = distinct !{{{head}, {count}}}");
            }
        }
    }
    let no = lines.last().map_or(0, |l| l.no);
    lines.push(Line { no, text: format!("{count} = !{{!\"llvm.loop.unroll.count\", i32 {UNROLL}}}") });
}

/// Rewrites one function's exits; pushes the loop metadata of those tested on offsets onto
/// `loops`.
fn rewrite_function(body: &mut Vec<Line>, loops: &mut Vec<String>) -> bool {
    let mut rewrote = false;
    let mut i = 0;
    while i < body.len() {
        let Some((indent, d, end, p)) = parse_sub(&body[i].text) else {
            i += 1;
            continue;
        };
        let (indent, d, end, p) = (indent.to_string(), d.to_string(), end.to_string(), p.to_string());
        // `%d` must have exactly one use, that compare.
        let uses: Vec<usize> = (0..body.len()).filter(|&j| j != i && uses_value(&body[j].text, &d)).collect();
        let [j] = uses[..] else {
            i += 1;
            continue;
        };
        let Some((c, k)) = parse_cmp(&body[j].text, &d) else {
            i += 1;
            continue;
        };
        let (c, k) = (c.to_string(), k.to_string());
        rewrote = true;
        match offset_walk(body, i, j, &end, &p) {
            // Lines go in above `i`; those after it no longer match `parse_sub`'s use test.
            Some(walk) => {
                let branch = format!("br i1 {c}, ");
                let latch = body[j..].iter().find(|l| l.text.contains(&branch));
                if let Some((_, id)) = latch.and_then(|l| l.text.split_once("!llvm.loop ")) {
                    loops.push(id.trim().to_string());
                }
                offset_test(body, walk, i, j, Test { indent: &indent, d: &d, c: &c, k: &k })
            }
            None => {
                body[i].text = format!("{indent}{d} = call i64 @llvm.usub.sat.i64(i64 {end}, i64 {k})");
                body[j].text = format!("{indent}{c} = icmp ult i64 {p}, {d}");
            }
        }
        i += 1;
    }
    rewrote
}

/// The exit test's names: `%d = sub nuw i64 %end, %p`, `%c = icmp ugt i64 %d, K`.
struct Test<'a> {
    indent: &'a str,
    d: &'a str,
    c: &'a str,
    k: &'a str,
}

/// A single-block loop's pointer walk that the tested address is a constant step into.
struct Walk {
    /// The loop's block (without `%`) and the block that enters it.
    block: String,
    entry: String,
    /// The walk's first pointer, its step and the tested address's distance `C` past it.
    start: String,
    step: u64,
    past: u64,
    end: String,
    /// Index of the walk's phi line.
    phi: usize,
}

/// The walk behind `%p = ptrtoint ptr %q` when `%q = gep inbounds nuw i8, ptr %w, i64 C`, `%w`
/// a two-way phi of the block holding the sub and the compare, its value around the loop
/// `gep inbounds nuw i8, ptr %w, i64 S` (`S > 0`), and `%end` not computed in that block.
fn offset_walk(body: &[Line], sub: usize, cmp: usize, end: &str, p: &str) -> Option<Walk> {
    let defs = crate::ir::definitions(body);
    let rhs = |name: &str| body[*defs.get(name)?].text.split_once(" = ").map(|(_, r)| r.to_string());
    let q = rhs(p)?.strip_prefix("ptrtoint ptr ")?.strip_suffix(" to i64")?.to_string();
    let (w, past) = constant_step(&rhs(&q)?)?;
    let phi = *defs.get(&w)?;
    let blocks = guarded_loads::blocks(body);
    let holding = |line: usize| blocks.iter().find(|b| b.insts.contains(&line));
    let home = holding(phi)?;
    if holding(sub)?.label != home.label || holding(cmp)?.label != home.label {
        return None;
    }
    if defs.get(end).is_some_and(|&e| holding(e).is_some_and(|b| b.label == home.label)) {
        return None;
    }
    let block = home.label.strip_prefix('%')?.to_string();
    let incoming = rhs(&w)?.strip_prefix("phi ptr ")?.to_string();
    let arms: Vec<(&str, &str)> =
        incoming.split("], [").map(|arm| arm.trim_matches(['[', ']', ' ']).split_once(", ")).collect::<Option<_>>()?;
    let [(a, la), (b, lb)] = arms[..] else { return None };
    let ((next, _), (start, entry)) = if la == home.label { ((a, la), (b, lb)) } else { ((b, lb), (a, la)) };
    if entry == home.label || !entry.starts_with('%') || (la != home.label && lb != home.label) {
        return None;
    }
    let (base, step) = constant_step(&rhs(next)?)?;
    if base != w || step == 0 {
        return None;
    }
    Some(Walk { block, entry: entry[1..].to_string(), start: start.to_string(), step, past, end: end.to_string(), phi })
}

/// `(%w, C)` of `getelementptr inbounds nuw i8, ptr %w, i64 C` with `C` an integer literal.
fn constant_step(rhs: &str) -> Option<(String, u64)> {
    let rest = rhs.strip_prefix("getelementptr inbounds nuw i8, ptr ")?;
    let (w, c) = rest.split_once(", i64 ")?;
    let c: u64 = c.trim().parse().ok()?;
    (w.starts_with('%') && !w.contains([' ', ','])).then(|| (w.to_string(), c))
}

/// Rewrites the test on offsets (the module doc's second form).
fn offset_test(body: &mut Vec<Line>, walk: Walk, sub: usize, cmp: usize, t: Test<'_>) {
    let Test { indent, d, c, k } = t;
    let n = body.iter().filter(|l| l.text.contains("__oxide_de") && l.text.contains(" = phi i64 [ 0, %")).count();
    let v = |what: &str| format!("%__oxide_de{n}_{what}");
    let (no, o, next, left, start, dist) = (body[sub].no, v("o"), v("n"), v("l"), v("s"), v("d"));
    body[sub].text = format!("{indent}{d} = add nuw i64 {o}, {}", walk.past);
    body[cmp].text = format!("{indent}{c} = icmp ult i64 {d}, {left}");
    body.insert(sub + 1, Line { no, text: format!("{indent}{next} = add nuw i64 {o}, {}", walk.step) });
    let phi = format!("{indent}{o} = phi i64 [ 0, %{} ], [ {next}, %{} ]", walk.entry, walk.block);
    body.insert(walk.phi + 1, Line { no, text: phi });
    // `end - p0` and its saturated bound, before the entering block's terminator.
    let head = format!("{}:", walk.entry);
    let Some(label) = body.iter().position(|l| l.text.starts_with(&head)) else { return };
    let Some(term) = body[label + 1..].iter().position(|l| {
        let t = l.text.trim_start();
        t.starts_with("br ") || t.starts_with("switch ")
    }) else {
        return;
    };
    let before = [
        format!("{indent}{start} = ptrtoint ptr {} to i64", walk.start),
        format!("{indent}{dist} = sub nuw i64 {}, {start}", walk.end),
        format!("{indent}{left} = call i64 @llvm.usub.sat.i64(i64 {dist}, i64 {k})"),
    ];
    let at = label + 1 + term;
    body.splice(at..at, before.into_iter().map(|text| Line { no, text }));
}

/// `(indentation, %d, %end, %p)` of `%d = sub nuw [nsw] i64 %end, %p`.
fn parse_sub(text: &str) -> Option<(&str, &str, &str, &str)> {
    let body = text.trim_start();
    let indent = &text[..text.len() - body.len()];
    let (d, rhs) = body.split_once(" = ")?;
    let ops = rhs.strip_prefix("sub nuw nsw i64 ").or_else(|| rhs.strip_prefix("sub nuw i64 "))?;
    let (end, p) = ops.split_once(", ")?;
    let local = |v: &str| v.starts_with('%') && !v.contains([' ', ',', ')']);
    (d.starts_with('%') && local(end) && local(p)).then_some((indent, d, end, p))
}

/// `(%c, K)` of `%c = icmp ugt i64 %d, K` with `K` an integer literal.
fn parse_cmp<'a>(text: &'a str, d: &str) -> Option<(&'a str, &'a str)> {
    let (c, rhs) = text.trim_start().split_once(" = ")?;
    let k = rhs.strip_prefix("icmp ugt i64 ")?.strip_prefix(d)?.strip_prefix(", ")?;
    (!k.is_empty() && k.bytes().all(|b| b.is_ascii_digit())).then_some((c, k))
}

#[cfg(test)]
mod tests {
    use crate::ir::tests::run;

    const STEP_BY: &str = "define ptx_kernel void @k(ptr %row, i64 %n) {\n\
        start:\n  %end = getelementptr inbounds nuw float, ptr %row, i64 %n\n  %e = ptrtoint ptr %end to i64\n  br label %loop\n\
        loop:\n  %p = phi ptr [ %row, %start ], [ %next, %loop ]\n  %v = load float, ptr %p, align 4\n\
        \x20 %next = getelementptr inbounds nuw i8, ptr %p, i64 1024\n  %a = ptrtoint ptr %next to i64\n\
        \x20 %left = sub nuw i64 %e, %a\n  %more = icmp ugt i64 %left, 1020\n  br i1 %more, label %loop, label %done\n\
        done:\n  ret void\n}\n";

    #[test]
    fn a_walks_remaining_distance_is_tested_on_its_offset() {
        let out = run(STEP_BY).ir;
        let entry =
            "  %__oxide_de0_s = ptrtoint ptr %row to i64\n  %__oxide_de0_d = sub nuw i64 %e, %__oxide_de0_s\n  \
            %__oxide_de0_l = call i64 @llvm.usub.sat.i64(i64 %__oxide_de0_d, i64 1020)\n  br label %loop\n";
        assert!(out.contains(entry), "{out}");
        let phi = "  %p = phi ptr [ %row, %start ], [ %next, %loop ]\n  \
            %__oxide_de0_o = phi i64 [ 0, %start ], [ %__oxide_de0_n, %loop ]\n";
        assert!(out.contains(phi), "{out}");
        let test =
            "  %left = add nuw i64 %__oxide_de0_o, 1024\n  %__oxide_de0_n = add nuw i64 %__oxide_de0_o, 1024\n  \
            %more = icmp ult i64 %left, %__oxide_de0_l\n";
        assert!(out.contains(test), "{out}");
        assert!(out.contains("declare i64 @llvm.usub.sat.i64(i64, i64)"), "{out}");
    }

    #[test]
    fn a_walk_tested_on_its_offset_is_marked_to_unroll_8_times() {
        let ir = STEP_BY.replace("label %done\n", "label %done, !llvm.loop !3\n")
            + "!1 = !{}\n!2 = !{!\"llvm.loop.peeled.count\", i32 1}\n!3 = distinct !{!3, !2}\n";
        let out = run(&ir).ir;
        assert!(out.contains("!3 = distinct !{!3, !2, !4}\n"), "{out}");
        assert!(out.contains("!4 = !{!\"llvm.loop.unroll.count\", i32 8}"), "{out}");
        // An address test (a run-time step) keeps its metadata as it was.
        let out = run(&ir.replace("ptr %p, i64 1024", "ptr %p, i64 %n")).ir;
        assert!(out.contains("!3 = distinct !{!3, !2}\n") && !out.contains("unroll.count"), "{out}");
    }

    #[test]
    fn an_address_that_is_no_constant_step_gets_a_bound_on_the_address() {
        // A run-time step: no offset phi, the test stays on the address.
        let ir = STEP_BY.replace("ptr %p, i64 1024", "ptr %p, i64 %n");
        let out = run(&ir).ir;
        assert!(out.contains("  %left = call i64 @llvm.usub.sat.i64(i64 %e, i64 1020)\n"), "{out}");
        assert!(out.contains("  %more = icmp ult i64 %a, %left\n"), "{out}");
        assert!(!out.contains("__oxide_de"), "{out}");
    }

    #[test]
    fn a_walk_with_a_loop_computed_end_gets_a_bound_on_the_address() {
        // `%e` computed inside the loop cannot be read before it.
        let ir = STEP_BY
            .replace("  %e = ptrtoint ptr %end to i64\n", "")
            .replace("  %a = ptrtoint", "  %e = ptrtoint ptr %end to i64\n  %a = ptrtoint");
        let out = run(&ir).ir;
        assert!(out.contains("  %more = icmp ult i64 %a, %left\n") && !out.contains("__oxide_de"), "{out}");
    }

    #[test]
    fn a_difference_with_another_use_is_left_alone() {
        let ir = STEP_BY.replace("  br i1 %more", "  store i64 %left, ptr %row, align 8\n  br i1 %more");
        let out = run(&ir).ir;
        assert!(out.contains("%left = sub nuw i64 %e, %a") && out.contains("icmp ugt i64 %left, 1020"), "{out}");
        assert!(!out.contains("usub.sat"), "{out}");
    }

    #[test]
    fn a_compare_with_a_variable_or_a_wrapping_sub_is_left_alone() {
        for ir in [STEP_BY.replace("%left, 1020", "%left, %n"), STEP_BY.replace("sub nuw i64", "sub i64")] {
            let out = run(&ir).ir;
            assert!(!out.contains("usub.sat"), "{out}");
        }
    }
}
