//! Loops that index a thread-private array get fully unrolled, as nvcc does.
//!
//! A private array (a `[f32; 15]` kernel argument, a `[[f32; 8]; 8]` accumulator) lives in
//! registers only while every access has a constant index. A loop that walks it with a varying
//! index forces it into local memory (an `alloca` LLVM cannot promote), a stack frame in every
//! thread: 11.8x nvcc's time for a 15-tap convolution whose taps are a kernel argument. nvcc
//! unrolls such loops completely; LLVM's cost model for NVPTX stops at a fixed size. So every
//! loop containing a varying-index access to an `alloca` gets `llvm.loop.unroll.full`, the
//! metadata of `#pragma unroll`: LLVM unrolls it when its trip count is a known constant (and
//! within the pragma's size limit) and then promotes the array to registers; any other loop is
//! left as it was.

use super::{uses_value, Line};
use std::collections::{HashMap, HashSet};

/// Loops up to this many IR lines are unrolled (a 15-tap loop with its bounds checks: 63;
/// sgemm's 8 x 8 store epilogue: 156). Unrolled, sgemm's epilogue keeps the accumulators in
/// registers; llc's machine sinking then spills 1208 bytes, which `llc_choice.rs` avoids
/// (H200: 1.267 -> 1.107 of nvcc's time with both).
const MAX_LOOP_LINES: usize = 400;

/// Marks the loops; returns whether any was marked (the codegen stage then runs the unroller).
pub(super) fn mark(lines: &mut Vec<Line>) -> bool {
    let mut next_md = next_metadata_id(lines);
    let mut marked = 0;
    let mut at = 0;
    while at < lines.len() {
        if !lines[at].text.starts_with("define ") {
            at += 1;
            continue;
        }
        let end = lines[at..].iter().position(|l| l.text == "}").map_or(lines.len(), |p| at + p);
        for latch in latches_to_mark(&lines[at..end]) {
            let line = &mut lines[at + latch].text;
            line.push_str(&format!(", !llvm.loop !{next_md}"));
            next_md += 2;
            marked += 1;
        }
        at = end;
    }
    let first = next_md - 2 * marked;
    for i in 0..marked {
        let id = first + 2 * i;
        lines.push(Line { no: 0, text: format!("!{id} = distinct !{{!{id}, !{}}}", id + 1) });
        lines.push(Line { no: 0, text: format!("!{} = !{{!\"llvm.loop.unroll.full\"}}", id + 1) });
    }
    marked > 0
}

/// The first metadata number not used in the module.
fn next_metadata_id(lines: &[Line]) -> usize {
    lines
        .iter()
        .filter_map(|l| l.text.strip_prefix('!'))
        .filter_map(|rest| rest.split(|c: char| !c.is_ascii_digit()).next()?.parse::<usize>().ok())
        .max()
        .map_or(0, |m| m + 1)
}

/// Indices (within `body`, one function) of the back-edge branches whose loop contains a
/// varying-index access to an `alloca`.
fn latches_to_mark(body: &[Line]) -> Vec<usize> {
    let varying_at = varying_private_accesses(body);
    if varying_at.is_empty() {
        return Vec::new();
    }
    let blocks = blocks(body);
    let index: HashMap<&str, usize> = blocks.iter().enumerate().map(|(i, b)| (b.label.as_str(), i)).collect();
    let succs: Vec<Vec<usize>> =
        blocks.iter().map(|b| b.succs.iter().filter_map(|s| index.get(s.as_str()).copied()).collect()).collect();
    let preds = {
        let mut preds = vec![Vec::new(); blocks.len()];
        for (b, ss) in succs.iter().enumerate() {
            for &s in ss {
                preds[s].push(b);
            }
        }
        preds
    };
    let block_of = |line: usize| blocks.iter().position(|b| b.first <= line && line <= b.last);
    let varying_blocks: HashSet<usize> = varying_at.iter().filter_map(|&l| block_of(l)).collect();
    let mut latches = Vec::new();
    for (latch, header) in back_edges(&succs) {
        // The natural loop: the header plus every block reaching the latch without passing it.
        let mut body_blocks = HashSet::from([header, latch]);
        let mut work = vec![latch];
        while let Some(b) = work.pop() {
            if b == header {
                continue;
            }
            for &p in &preds[b] {
                if body_blocks.insert(p) {
                    work.push(p);
                }
            }
        }
        let branch = blocks[latch].last;
        let size: usize = body_blocks.iter().map(|&b| blocks[b].last - blocks[b].first).sum();
        if size <= MAX_LOOP_LINES
            && body_blocks.iter().any(|b| varying_blocks.contains(b))
            && !body[branch].text.contains("!llvm.loop")
        {
            latches.push(branch);
        }
    }
    latches.sort_unstable();
    latches.dedup();
    latches
}

/// Lines (within one function) computing a pointer into an `alloca` with a varying offset: a
/// `getelementptr` with a non-constant index, or a pointer `phi`.
fn varying_private_accesses(body: &[Line]) -> Vec<usize> {
    let mut derived: HashSet<String> = HashSet::new();
    let mut varying_at = Vec::new();
    for (i, line) in body.iter().enumerate() {
        let Some((def, rhs)) = line.text.trim_start().split_once(" = ") else { continue };
        if !def.starts_with('%') {
            continue;
        }
        if rhs.starts_with("alloca ") {
            derived.insert(def.to_string());
        } else if let Some(args) = rhs.strip_prefix("getelementptr ") {
            let operands: Vec<&str> = args.split(", ").collect();
            let Some(at) = operands.iter().position(|o| o.starts_with("ptr ")) else { continue };
            let base = operands[at].rsplit(' ').next().unwrap_or_default();
            if derived.contains(base) {
                derived.insert(def.to_string());
                if operands[at + 1..].iter().any(|o| o.rsplit(' ').next().is_some_and(|v| v.starts_with('%'))) {
                    varying_at.push(i);
                }
            }
        } else if rhs.starts_with("phi ptr ") && derived.iter().any(|d| uses_value(rhs, d)) {
            derived.insert(def.to_string());
            varying_at.push(i);
        }
    }
    varying_at
}

/// A basic block: its label (`""` for an unlabelled entry), line range and successor labels.
struct Block {
    label: String,
    first: usize,
    last: usize,
    succs: Vec<String>,
}

/// The blocks of one function (`body[0]` is its `define` line).
fn blocks(body: &[Line]) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut in_switch = false; // a `switch`'s cases follow on lines of their own until `]`
    for (i, line) in body.iter().enumerate().skip(1) {
        let text = line.text.trim_start();
        if let Some(label) = label_of(&line.text) {
            blocks.push(Block { label, first: i, last: i, succs: Vec::new() });
            continue;
        }
        if text.is_empty() || text.starts_with(';') {
            continue;
        }
        if blocks.is_empty() {
            blocks.push(Block { label: String::new(), first: i, last: i, succs: Vec::new() });
        }
        let Some(block) = blocks.last_mut() else { continue };
        block.last = i;
        let terminator = text.starts_with("br ") || text.starts_with("switch ") || in_switch;
        if text.starts_with("switch ") {
            in_switch = !text.contains(']');
        } else if in_switch && text.contains(']') {
            in_switch = false;
        }
        if terminator {
            let targets = text.split("label %").skip(1).map(|t| t.split([',', ' ', ']']).next().unwrap_or(t));
            block.succs.extend(targets.map(|t| t.trim_matches('"').to_string()));
        }
    }
    blocks
}

/// Back edges `(latch, header)` of a depth-first walk from the entry block: an edge to a block
/// still on the walk's stack (for the reducible control flow rustc emits, exactly the loops).
fn back_edges(succs: &[Vec<usize>]) -> Vec<(usize, usize)> {
    let mut edges = Vec::new();
    if succs.is_empty() {
        return edges;
    }
    let mut state = vec![0u8; succs.len()]; // 0 new, 1 on stack, 2 done
    let mut stack = vec![(0usize, 0usize)];
    state[0] = 1;
    while let Some(&mut (b, ref mut next)) = stack.last_mut() {
        if let Some(&s) = succs[b].get(*next) {
            *next += 1;
            match state[s] {
                0 => {
                    state[s] = 1;
                    stack.push((s, 0));
                }
                1 => edges.push((b, s)),
                _ => {}
            }
        } else {
            state[b] = 2;
            stack.pop();
        }
    }
    edges
}

fn label_of(line: &str) -> Option<String> {
    let label = line.split_once(':')?.0;
    (!label.is_empty() && !label.starts_with(' ') && !label.contains(' ') && !line.starts_with(';'))
        .then(|| label.trim_matches('"').to_string())
}

#[cfg(test)]
mod tests {
    use crate::ir::tests::run;

    const LOOP_OVER_ARG_ARRAY: &str = "define ptx_kernel void @k(ptr %x) {\n\
        start:\n  %taps = alloca [60 x i8], align 4\n  br label %bb5\n\
        bb5:\n  %i = phi i64 [ 0, %start ], [ %n, %bb5 ]\n  \
        %p = getelementptr inbounds nuw i8, ptr %taps, i64 %i\n  %v = load float, ptr %p, align 4\n  \
        %n = add i64 %i, 4\n  %c = icmp ne i64 %n, 60\n  br i1 %c, label %bb5, label %done\n\
        done:\n  ret void\n}\n\
        !0 = !{}\n";

    #[test]
    fn a_loop_indexing_an_alloca_is_marked_for_full_unrolling() {
        let p = run(LOOP_OVER_ARG_ARRAY);
        assert!(p.unroll_private_loops);
        assert!(p.ir.contains("  br i1 %c, label %bb5, label %done, !llvm.loop !1\n"), "{}", p.ir);
        assert!(p.ir.contains("!1 = distinct !{!1, !2}\n!2 = !{!\"llvm.loop.unroll.full\"}\n"), "{}", p.ir);
    }

    #[test]
    fn the_back_edge_is_found_by_control_flow_not_layout() {
        // The latch block is laid out before the header; a switch case enters the loop.
        let ir = "define ptx_kernel void @k(i32 %s) {\n\
            start:\n  %acc = alloca [32 x i8], align 4\n  switch i32 %s, label %done [\n    i32 0, label %head\n  ]\n\
            latch:\n  %n = add i64 %i, 1\n  %c = icmp ne i64 %n, 8\n  br i1 %c, label %head, label %done\n\
            head:\n  %i = phi i64 [ 0, %start ], [ %n, %latch ]\n  \
            %p = getelementptr inbounds nuw float, ptr %acc, i64 %i\n  br label %latch\n\
            done:\n  ret void\n}\n";
        let p = run(ir);
        assert!(p.ir.contains("br i1 %c, label %head, label %done, !llvm.loop !0\n"), "{}", p.ir);
        assert!(!p.ir.contains("br label %latch, !llvm.loop"), "{}", p.ir);
    }

    #[test]
    fn loops_over_global_memory_and_constant_indices_are_left_alone() {
        let ir = "define ptx_kernel void @k(ptr %x) {\n\
            start:\n  %a = alloca [8 x i8], align 4\n  %q = getelementptr inbounds nuw i8, ptr %a, i64 4\n  br label %l\n\
            l:\n  %i = phi i64 [ 0, %start ], [ %n, %l ]\n  %p = getelementptr inbounds nuw float, ptr %x, i64 %i\n  \
            %n = add i64 %i, 1\n  %c = icmp ne i64 %n, 60\n  br i1 %c, label %l, label %done\n\
            done:\n  ret void\n}\n";
        let p = run(ir);
        assert!(!p.unroll_private_loops);
        assert!(!p.ir.contains("llvm.loop"), "{}", p.ir);
    }
}
