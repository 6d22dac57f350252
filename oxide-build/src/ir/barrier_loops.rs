//! Branches inside loops that hold a block barrier or a warp collective are frozen (before
//! `opt`), so that the range check elimination `opt` runs first (`irce`, see codegen.rs) never
//! splits such a loop.
//!
//! `irce` cuts a loop's iterations into ranges where a bounds check is known to pass and runs
//! the middle range without it. The cut depends on the checked index; when that index depends
//! on the thread (`bodies.get(start + t)` in a tiled n-body), each thread leaves the middle
//! copy of the loop at a different iteration, so the threads of a warp run different copies of
//! the same barrier and of the loop between (H200, frozen suite: nbody_tile 1.15 -> 1.47 of
//! nvcc's time); for a `.sync.aligned` instruction (`mma.sync`, `wgmma`), which every lane of
//! the warp must execute as the same instruction, it would be undefined. `irce` does not read a frozen condition as a range check, and a `freeze` of a
//! value that is never poison is a plain copy for llc. Latch branches (those that go back to
//! the loop's header) keep their conditions, so trip counts stay visible to the unroller.

use super::guarded_epilogs::replace_value;
use super::guarded_loads::{blocks, is_barrier, Block, REMOVED};
use super::{uses_value, Line};
use std::collections::{HashMap, HashSet};

/// Freezes the conditions in every function; returns how many branches changed.
pub(super) fn freeze_branches(lines: &mut Vec<Line>) -> usize {
    super::each_function(lines, |body| {
        let inserts = rewrite_function(body);
        let n = inserts.len();
        // Back to front, so the indices of the inserts before each one hold.
        for (at, text) in inserts.into_iter().rev() {
            let no = body[at].no;
            body.insert(at, Line { no, text });
        }
        n
    })
}

/// Removes the `freeze`s [`freeze_branches`] added; their uses (the branches, and whatever
/// `opt` made of them, e.g. a negation for a branch it turned around) take the conditions
/// themselves again.
pub(super) fn thaw(lines: &mut Vec<Line>) {
    let mut start = 0;
    while let Some(at) = lines[start..].iter().position(|l| l.text.starts_with("define ")) {
        let body = start + at + 1;
        let end = lines[body..].iter().position(|l| l.text.starts_with('}')).map_or(lines.len(), |n| body + n);
        // Names are numbered per function; a use may come before its definition in the text.
        let thawed: Vec<(String, String)> = lines[body..end].iter().filter_map(|l| frozen_def(&l.text)).collect();
        for line in &mut lines[body..end] {
            if frozen_def(&line.text).is_some() {
                line.text = REMOVED.to_string();
                continue;
            }
            for (name, cond) in &thawed {
                if uses_value(&line.text, name) {
                    line.text = replace_value(&line.text, name, cond);
                }
            }
        }
        start = end;
    }
    lines.retain(|l| l.text != REMOVED);
}

/// `(%name, %cond)` of `%name = freeze i1 %cond` when the name is one of [`freeze_branches`]'.
fn frozen_def(line: &str) -> Option<(String, String)> {
    let (name, rest) = line.trim().split_once(" = freeze i1 ")?;
    name.starts_with("%__oxide_fr").then(|| (name.to_string(), rest.trim().to_string()))
}

/// The `freeze` lines to insert (before body index, text); rewrites the branches themselves.
fn rewrite_function(body: &mut [Line]) -> Vec<(usize, String)> {
    let blocks = blocks(body);
    let index: HashMap<&str, usize> = blocks.iter().enumerate().map(|(k, b)| (b.label.as_str(), k)).collect();
    let mut frozen: HashSet<usize> = HashSet::new();
    let mut inserts = Vec::new();
    for (k, b) in blocks.iter().enumerate() {
        let Some(&term) = b.insts.last() else { continue };
        // A branch to a block listed at or before this one closes a loop (LLVM lists a loop's
        // header before its body).
        for header in targets(&body[term].text).into_iter().filter_map(|t| index.get(t.as_str()).copied()) {
            if header > k {
                continue;
            }
            let Some(members) = natural_loop(&blocks, &index, header, k) else { continue };
            if !members.iter().any(|&m| blocks[m].insts.iter().any(|&i| is_collective(&body[i].text))) {
                continue;
            }
            let head = &blocks[header].label;
            for &m in &members {
                let Some(&t) = blocks[m].insts.last() else { continue };
                if frozen.contains(&t) || targets(&body[t].text).iter().any(|l| l == head) {
                    continue;
                }
                let Some(cond) = condition(&body[t].text) else { continue };
                let name = format!("%__oxide_fr{}", inserts.len());
                body[t].text = body[t].text.replacen(&format!("br i1 {cond},"), &format!("br i1 {name},"), 1);
                inserts.push((t, format!("  {name} = freeze i1 {cond}")));
                frozen.insert(t);
            }
        }
    }
    inserts.sort_by_key(|(at, _)| *at);
    inserts
}

/// An operation threads must reach together: a block barrier, or an inline-asm `.sync` /
/// `.aligned` instruction (warp shuffles and votes, `mma.sync`, `ldmatrix`, `wgmma`, `elect`),
/// which a warp's lanes must execute as one instruction.
fn is_collective(line: &str) -> bool {
    is_barrier(line) || (line.contains(" asm ") && (line.contains(".sync") || line.contains(".aligned")))
}

/// The blocks of the loop closed by the branch from `latch` to `header`: the header and every
/// block that reaches the latch without passing through the header. `None` when the walk
/// reaches the function's entry: the header does not dominate the latch, so the branch is not
/// a loop's back edge (a block listed early may still come later in the control flow).
fn natural_loop(blocks: &[Block], index: &HashMap<&str, usize>, header: usize, latch: usize) -> Option<Vec<usize>> {
    let mut members = vec![header];
    let mut seen: HashSet<usize> = HashSet::from([header]);
    let mut queue = vec![latch];
    while let Some(b) = queue.pop() {
        if !seen.insert(b) {
            continue;
        }
        if b == 0 {
            return None;
        }
        members.push(b);
        queue.extend(blocks[b].preds.iter().filter_map(|p| index.get(p.as_str()).copied()));
    }
    Some(members)
}

/// The labels a terminator line branches to (`br`, `switch`).
fn targets(line: &str) -> Vec<String> {
    let t = line.trim();
    if !(t.starts_with("br ") || t.starts_with("switch ")) {
        return Vec::new();
    }
    t.split("label ").skip(1).map(|s| s.split([',', ' ', ']']).next().unwrap_or("").to_string()).collect()
}

/// The condition of `br i1 %c, label %A, label %B`, when it is a value (not a constant).
fn condition(line: &str) -> Option<String> {
    let rest = line.trim().strip_prefix("br i1 ")?;
    let c = rest.split(',').next()?.trim();
    c.starts_with('%').then(|| c.to_string())
}

#[cfg(test)]
mod tests {
    use crate::ir::process;
    use crate::ir::tests::{assert_valid_ir, TestResult};

    /// A tiled loop: a thread-dependent bounds test picks a load or zero, a barrier, the latch.
    const TILED: &str = "\
declare void @use(float)

define ptx_kernel void @k(ptr noundef %__oxide_in_x, i64 noundef %__oxide_in_x_len, i64 %t) unnamed_addr #0 {
start:
  br label %head

head:                                             ; preds = %latch, %start
  %s = phi i64 [ 0, %start ], [ %s.next, %latch ]
  %i = add i64 %s, %t
  %in = icmp ult i64 %i, %__oxide_in_x_len
  br i1 %in, label %load, label %join

load:                                             ; preds = %head
  %p = getelementptr inbounds float, ptr %__oxide_in_x, i64 %i
  %v = load float, ptr %p, align 4
  br label %join

join:                                             ; preds = %load, %head
  %w = phi float [ %v, %load ], [ 0.000000e+00, %head ]
  call void @use(float %w)
  call void asm sideeffect \"barrier.sync 0;\", \"~{memory}\"()
  br label %latch

latch:                                            ; preds = %join
  %s.next = add i64 %s, 256
  %more = icmp ult i64 %s.next, %__oxide_in_x_len
  br i1 %more, label %head, label %exit

exit:                                             ; preds = %latch
  ret void
}

attributes #0 = { nounwind }
";

    #[test]
    fn branches_in_a_loop_with_a_barrier_are_frozen_but_not_its_latch() -> TestResult {
        let out = process(TILED)?.ir;
        assert!(
            out.contains("  %__oxide_fr0 = freeze i1 %in\n  br i1 %__oxide_fr0, label %load, label %join"),
            "{out}"
        );
        assert!(out.contains("br i1 %more, label %head, label %exit"), "the latch keeps its condition: {out}");
        assert_valid_ir("frozen loop", &out);
        Ok(())
    }

    #[test]
    fn a_branch_to_a_block_listed_earlier_is_no_loop_unless_that_block_dominates() -> TestResult {
        // `tail` is listed first but reached only after `start`: the branch from `start` to it
        // is a forward edge, so nothing here is a loop.
        let ir = "\
define ptx_kernel void @k(i1 %c, i1 %d) unnamed_addr #0 {
start:
  br i1 %c, label %mid, label %other

tail:                                             ; preds = %mid
  call void asm sideeffect \"barrier.sync 0;\", \"~{memory}\"()
  ret void

mid:                                              ; preds = %start
  br i1 %d, label %tail, label %other

other:                                            ; preds = %mid, %start
  ret void
}

attributes #0 = { nounwind }
";
        let out = process(ir)?.ir;
        assert!(!out.contains("freeze"), "{out}");
        Ok(())
    }

    #[test]
    fn thawing_gives_the_branches_their_conditions_back() -> TestResult {
        // As `opt` may leave it: the branch turned around on a negation of the frozen value.
        let out = process(TILED)?.ir.replace(
            "  br i1 %__oxide_fr0, label %load, label %join",
            "  %__oxide_fr0.not = xor i1 %__oxide_fr0, true\n  br i1 %__oxide_fr0.not, label %join, label %load",
        );
        let thawed = crate::ir::thaw(&out);
        assert!(!thawed.contains("freeze"), "{thawed}");
        assert!(
            thawed
                .contains("  %__oxide_fr0.not = xor i1 %in, true\n  br i1 %__oxide_fr0.not, label %join, label %load"),
            "{thawed}"
        );
        assert_valid_ir("thawed loop", &thawed);
        Ok(())
    }

    #[test]
    fn warp_collectives_count_as_barriers() -> TestResult {
        // A warp shuffle instead of the block barrier: the lanes must run it as one instruction.
        let ir = TILED.replace(
            "  call void asm sideeffect \"barrier.sync 0;\", \"~{memory}\"()\n",
            "  %sh = call i32 asm sideeffect \"shfl.sync.bfly.b32 $0, $1, 1, 31, -1;\", \"=r,r\"(i32 7)\n",
        );
        let out = process(&ir)?.ir;
        assert!(out.contains("  %__oxide_fr0 = freeze i1 %in\n"), "{out}");
        Ok(())
    }

    #[test]
    fn loops_without_barriers_are_left_alone() -> TestResult {
        let ir = TILED.replace("  call void asm sideeffect \"barrier.sync 0;\", \"~{memory}\"()\n", "");
        let out = process(&ir)?.ir;
        assert!(!out.contains("freeze"), "{out}");
        assert!(out.contains("br i1 %in, label %load, label %join"), "{out}");
        Ok(())
    }
}
