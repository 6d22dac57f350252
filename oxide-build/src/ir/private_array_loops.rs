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
//!
//! Only an index that follows an induction variable of the loop (a header `phi` stepped by a
//! constant, through arithmetic) becomes constant when the loop is unrolled. An index the data
//! decides (an interpreter's stack pointer) does not: unrolling such a loop up to its bound
//! (a `steps > 1000` exit) multiplied the code a thousandfold and left the array in local
//! memory, so those loops are not marked.

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
    let defs = definitions(body);
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
    // Each varying access with the blocks of the induction variables its index follows.
    let accesses: Vec<(usize, HashSet<usize>)> = varying_at
        .iter()
        .filter_map(|&l| {
            let ivs = induction_variables_of(body, &defs, l).into_iter().filter_map(block_of).collect();
            Some((block_of(l)?, ivs))
        })
        .collect();
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
        // An access in the loop whose index follows an induction variable of the loop (or of
        // a loop nested in it, which is marked too).
        let follows =
            accesses.iter().any(|(b, ivs)| body_blocks.contains(b) && ivs.iter().any(|h| body_blocks.contains(h)));
        if size <= MAX_LOOP_LINES && follows && !body[branch].text.contains("!llvm.loop") {
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

/// Each value's defining line (within one function): `%name` -> (line, right-hand side).
fn definitions(body: &[Line]) -> HashMap<&str, (usize, &str)> {
    body.iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let (def, rhs) = l.text.trim_start().split_once(" = ")?;
            def.starts_with('%').then_some((def, (i, rhs)))
        })
        .collect()
}

/// Operations an index may go through and still follow an induction variable.
const ARITHMETIC: [&str; 12] =
    ["add ", "sub ", "mul ", "shl ", "lshr ", "ashr ", "or ", "and ", "xor ", "zext ", "sext ", "trunc "];

/// The lines of the induction variables (header `phi`s stepped by a constant) that the pointer
/// computed at line `at` follows: through its varying operands and arithmetic, never through a
/// load, a call or another `phi` (values the data decides).
fn induction_variables_of(body: &[Line], defs: &HashMap<&str, (usize, &str)>, at: usize) -> Vec<usize> {
    let Some((def, rhs)) = body[at].text.trim_start().split_once(" = ") else { return Vec::new() };
    let mut ivs = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    // A pointer `phi` is its own candidate; a `getelementptr` starts from its indices.
    let mut work: Vec<&str> = if rhs.starts_with("phi ") { vec![def] } else { operands(rhs).collect() };
    while let Some(v) = work.pop() {
        if !seen.insert(v) {
            continue;
        }
        let Some(&(line, rhs)) = defs.get(v) else { continue };
        if rhs.starts_with("phi ") {
            if stepped_by_constant(v, rhs, defs) {
                ivs.push(line);
            }
        } else if ARITHMETIC.iter().any(|op| rhs.starts_with(op)) {
            work.extend(operands(rhs));
        }
    }
    ivs
}

/// Whether `phi` (named `name`) takes, on some incoming edge, itself plus a constant: an
/// `add`/`sub`/`or` of it and a constant, or a `getelementptr` of it by constants.
fn stepped_by_constant(name: &str, phi: &str, defs: &HashMap<&str, (usize, &str)>) -> bool {
    let incoming = phi.split('[').skip(1).filter_map(|edge| edge.split(',').next()).map(str::trim);
    incoming.filter_map(|v| defs.get(v)).any(|&(_, rhs)| {
        let ops: Vec<&str> = operands(rhs).collect();
        let step = ["add ", "sub ", "or "].iter().any(|op| rhs.starts_with(op)) || rhs.starts_with("getelementptr ");
        step && ops == [name]
    })
}

/// The `%` values a right-hand side uses (its operands that are values, not constants).
fn operands(rhs: &str) -> impl Iterator<Item = &str> {
    rhs.split([' ', ',', '[', ']', '(', ')'])
        .filter(|t| t.starts_with('%') && t.len() > 1)
        .map(|t| t.trim_end_matches([',', ']']))
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
    fn an_index_the_data_decides_does_not_mark_its_loop() {
        // A stack pointer that goes up or down with each opcode read: unrolling the loop up to
        // its step limit would never make it constant. The pointer walk over the same array in
        // the second loop (a pointer `phi` stepped by 4 bytes) is marked.
        let ir = "define ptx_kernel void @k(ptr %prog) {\n\
            start:\n  %stack = alloca [32 x i8], align 4\n  br label %head\n\
            head:\n  %sp = phi i64 [ 0, %start ], [ %sp.next, %latch ]\n  %steps = phi i32 [ 0, %start ], [ %s1, %latch ]\n  \
            %op = load i8, ptr %prog, align 1\n  %push = icmp eq i8 %op, 0\n  %up = add i64 %sp, 1\n  %down = add i64 %sp, -1\n  \
            %sp.next = select i1 %push, i64 %up, i64 %down\n  %slot = shl i64 %sp, 2\n  \
            %p = getelementptr inbounds i8, ptr %stack, i64 %slot\n  store i32 1, ptr %p, align 4\n  br label %latch\n\
            latch:\n  %s1 = add i32 %steps, 1\n  %c = icmp ult i32 %s1, 1000\n  br i1 %c, label %head, label %walk\n\
            walk:\n  %q = phi ptr [ %stack, %latch ], [ %q.next, %walk ]\n  store i32 0, ptr %q, align 4\n  \
            %q.next = getelementptr inbounds i8, ptr %q, i64 4\n  %d = icmp ne ptr %q.next, %prog\n  br i1 %d, label %walk, label %done\n\
            done:\n  ret void\n}\n";
        let p = run(ir);
        assert!(
            p.ir.contains("br i1 %c, label %head, label %walk\n"),
            "the interpreter loop stays as it is:\n{}",
            p.ir
        );
        assert!(p.ir.contains("br i1 %d, label %walk, label %done, !llvm.loop !0\n"), "{}", p.ir);
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
