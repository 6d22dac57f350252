//! Reads of one kernel buffer placed before the writes to other buffers that precede them in
//! their block (after `opt`, before `llc`).
//!
//! A kernel that updates several outputs in place, written the safe way,
//!
//! ```text
//! *u *= p.drag;       // u, w, v, x, y, z: DisjointSlice<f32> elements of six buffers
//! *w *= p.drag;
//! *x += *u * p.dt;
//! ```
//!
//! reaches llc as `load u, store u, load w, store w, load x, …`, and llc keeps that order
//! although the six parameters are `noalias`. PTX has no way to say that two pointers do not
//! alias, so ptxas must keep each load after the store before it, and the loads run one after
//! another, each waiting for memory (H200, the frozen suite's particles_step: 1.27 of the time
//! of nvcc, whose `__restrict__` twin issues all six loads first). Here each load whose address
//! comes from a `noalias` kernel buffer moves up its block, past stores into *other* `noalias`
//! buffers, together with the pure instructions that compute its address, to just above the
//! earliest such store before the first instruction it must stay behind: one defining a value it needs that cannot move, a store
//! that may reach its buffer, a call that is not a pure intrinsic, an atomic, a fence, inline
//! assembly or a phi. Two `noalias` kernel parameters never overlap (the launchers hold
//! distinct borrows, `noalias_inputs.rs`), so no load can read a different value for it.

use super::guarded_loads::{each_kernel, input_root};
use super::speculated_blocks::{load_parts, PURE_OPS};
use super::{find_params_close, is_ident_byte, split_top, Line};

/// Calls that touch no memory, which a load may pass.
const PURE_CALLS: [&str; 14] = [
    "@llvm.nvvm.read.ptx.sreg.",
    "@llvm.umin.",
    "@llvm.umax.",
    "@llvm.smin.",
    "@llvm.smax.",
    "@llvm.usub.sat.",
    "@llvm.uadd.sat.",
    "@llvm.fma.",
    "@llvm.fmuladd.",
    "@llvm.fabs.",
    "@llvm.assume(",
    "@llvm.experimental.noalias.scope.decl(",
    "@llvm.umul.with.overflow.",
    "@llvm.uadd.with.overflow.",
];

/// Reorders every kernel of `lines`; returns how many loads moved.
pub(super) fn hoist(lines: &mut Vec<Line>) -> usize {
    each_kernel(lines, |body, define, _| {
        let buffers = noalias_buffers(define);
        if buffers.len() < 2 {
            return (body, 0);
        }
        rewrite_function(body, &buffers)
    })
}

/// The `noalias` pointer parameters `#[kernel]` made from slices (`%__oxide_in_*`,
/// `%__oxide_out_*`).
fn noalias_buffers(define: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (define.find('('), find_params_close(define)) else { return Vec::new() };
    split_top(&define[open + 1..close])
        .into_iter()
        .filter_map(|p| {
            let words: Vec<&str> = p.split_whitespace().collect();
            let name = *words.last()?;
            let slice = name.starts_with("%__oxide_in_") || name.starts_with("%__oxide_out_");
            (words.first() == Some(&"ptr") && words.contains(&"noalias") && slice).then(|| name.to_string())
        })
        .collect()
}

fn rewrite_function(mut body: Vec<Line>, buffers: &[String]) -> (Vec<Line>, usize) {
    let mut moved = 0;
    let mut start = 0;
    while start < body.len() {
        // One block: from a label (or the entry) to its terminator.
        let end = (start..body.len()).find(|&i| is_terminator(&body[i].text)).unwrap_or(body.len());
        moved += schedule_block(&mut body, start, end, buffers);
        start = end + 1;
    }
    (body, moved)
}

/// Moves the qualifying loads of `body[start..end]` up; returns how many moved.
fn schedule_block(body: &mut [Line], start: usize, end: usize, buffers: &[String]) -> usize {
    let mut moved = 0;
    for i in start..end {
        let text = body[i].text.trim().to_string();
        let Some((_, _, ptr, _)) = load_parts(&text) else { continue };
        let Some(root) = input_root(body, &ptr, buffers) else { continue };
        if text.contains("%\"") {
            continue; // a quoted name this scan would not follow
        }
        // Scan back from the load: `needed` are the values it (or what moves with it) uses.
        let mut needed = operands(&text);
        let mut carried = Vec::new();
        let mut to = i;
        for j in (start..i).rev() {
            let line = body[j].text.trim();
            if line.is_empty() || line.starts_with(';') {
                continue;
            }
            if line.contains(':') && !body[j].text.starts_with(char::is_whitespace) {
                break; // the block's label
            }
            match defined(line) {
                Some(name) if needed.contains(&name) => {
                    if !is_pure(line) || line.contains("%\"") {
                        break;
                    }
                    needed.extend(operands(line));
                    carried.push(j);
                    continue;
                }
                _ => {}
            }
            if blocks_load(line, &root, body, buffers) {
                break;
            }
            // Only as far up as the earliest store it passes: the order of everything else
            // (other loads included) stays as it was.
            if line.starts_with("store ") {
                to = j;
            }
        }
        if to == i {
            continue;
        }
        // New order of `to..=i`: what moves (carried lines in their order, then the load),
        // then everything else in its order.
        carried.retain(|&c| c >= to);
        carried.reverse();
        let mut order: Vec<usize> = carried.clone();
        order.push(i);
        order.extend((to..i).filter(|k| !carried.contains(k)));
        let lines: Vec<Line> = order.iter().map(|&k| Line { no: body[k].no, text: body[k].text.clone() }).collect();
        for (k, line) in lines.into_iter().enumerate() {
            body[to + k] = line;
        }
        moved += 1;
    }
    moved
}

/// Whether a load of buffer `root` must stay below `line`.
fn blocks_load(line: &str, root: &str, body: &[Line], buffers: &[String]) -> bool {
    if line.starts_with("%") && line.contains(" = phi ") {
        return true;
    }
    let op = defined(line).map_or(line, |_| line.split_once(" = ").map_or(line, |(_, rest)| rest));
    let word = op.split_whitespace().next().unwrap_or("");
    match word {
        "store" => {
            let parts = split_top(&op["store".len()..]);
            let volatile =
                parts.first().is_some_and(|t| t.trim().starts_with("volatile") || t.trim().starts_with("atomic"));
            let Some(ptr) = parts.get(1).and_then(|p| p.trim().strip_prefix("ptr ")) else { return true };
            volatile || input_root(body, ptr, buffers).is_none_or(|r| r == root)
        }
        "load" => op.starts_with("load atomic") || op.starts_with("load volatile"),
        "call" | "tail" | "notail" | "musttail" => op.contains(" asm ") || !PURE_CALLS.iter().any(|c| op.contains(c)),
        "atomicrmw" | "cmpxchg" | "fence" | "invoke" | "va_arg" | "callbr" => true,
        _ => false,
    }
}

/// Whether `line` computes a value from its operands alone (no memory, no trap).
fn is_pure(line: &str) -> bool {
    line.split_once(" = ").is_some_and(|(_, rest)| PURE_OPS.contains(&rest.split_whitespace().next().unwrap_or("")))
}

/// The value a line defines (`%name` of `%name = ...`).
fn defined(line: &str) -> Option<String> {
    let (name, _) = line.split_once(" = ")?;
    name.starts_with('%').then(|| name.to_string())
}

/// The `%values` a line reads (after its `=`, if any).
fn operands(line: &str) -> Vec<String> {
    let rhs = line.split_once(" = ").map_or(line, |(_, rest)| rest);
    let b = rhs.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && (i == 0 || !is_ident_byte(b[i - 1])) {
            let end = i + 1 + b[i + 1..].iter().take_while(|c| is_ident_byte(**c)).count();
            out.push(rhs[i..end].to_string());
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

fn is_terminator(line: &str) -> bool {
    let t = line.trim_start();
    line.starts_with(char::is_whitespace)
        && ["br ", "ret", "switch ", "unreachable", "indirectbr ", "resume ", "callbr "]
            .iter()
            .any(|k| t.starts_with(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ir: &str) -> (String, usize) {
        let mut lines: Vec<Line> =
            ir.lines().enumerate().map(|(i, text)| Line { no: i + 1, text: text.to_string() }).collect();
        let n = hoist(&mut lines);
        let text: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        (text.join("\n"), n)
    }

    const HEAD: &str = "define ptx_kernel void @k(ptr noalias noundef nonnull %__oxide_out_u, i64 %__oxide_out_u_len, \
        ptr noalias noundef nonnull %__oxide_out_w, i64 %__oxide_out_w_len, ptr %raw) #0 {";

    #[test]
    fn loads_of_other_buffers_move_above_stores_with_their_address() {
        let ir = format!(
            "{HEAD}\nstart:\n  %a = getelementptr inbounds float, ptr %__oxide_out_u, i64 %i\n  %x = load float, ptr %a, align 4\n  %y = fmul float %x, 2.0\n  store float %y, ptr %a, align 4\n  %b = getelementptr inbounds float, ptr %__oxide_out_w, i64 %i\n  %z = load float, ptr %b, align 4\n  %t = fmul float %z, 2.0\n  store float %t, ptr %b, align 4\n  ret void\n}}\n"
        );
        let (out, n) = run(&ir);
        assert_eq!(n, 1, "{out}");
        let order: Vec<&str> = out.lines().skip(2).map(|l| l.trim().split(' ').next().unwrap_or("")).collect();
        assert_eq!(order, ["%a", "%x", "%y", "%b", "%z", "store", "%t", "store", "ret", "}"], "{out}");
    }

    #[test]
    fn a_store_that_may_reach_the_buffer_or_a_call_keeps_the_load_below() {
        for blocker in [
            "store float 1.0, ptr %raw, align 4",
            "store float 1.0, ptr %__oxide_out_w, align 4",
            "call void @llvm.nvvm.barrier0()",
            "fence seq_cst",
            "store volatile float 1.0, ptr %__oxide_out_u, align 4",
        ] {
            let ir = format!(
                "{HEAD}\nstart:\n  {blocker}\n  %b = getelementptr inbounds float, ptr %__oxide_out_w, i64 %i\n  %z = load float, ptr %b, align 4\n  ret void\n}}\n"
            );
            let (out, n) = run(&ir);
            assert_eq!(n, 0, "{blocker}: {out}");
            assert_eq!(out, ir.trim_end(), "{blocker}");
        }
    }

    #[test]
    fn a_load_waits_for_a_value_that_cannot_move() {
        // `%i` is loaded from memory after the store: the load it addresses stays below it.
        let ir = format!(
            "{HEAD}\nstart:\n  store float 1.0, ptr %__oxide_out_u, align 4\n  %i = load i64, ptr %raw, align 8\n  %b = getelementptr inbounds float, ptr %__oxide_out_w, i64 %i\n  %z = load float, ptr %b, align 4\n  ret void\n}}\n"
        );
        let (out, n) = run(&ir);
        assert_eq!(n, 0, "{out}");
    }

    #[test]
    fn loads_stay_in_their_block_and_below_phis() {
        let ir = format!(
            "{HEAD}\nstart:\n  br label %next\n\nnext:                                             ; preds = %start\n  %p = phi i64 [ 0, %start ]\n  store float 1.0, ptr %__oxide_out_u, align 4\n  %b = getelementptr inbounds float, ptr %__oxide_out_w, i64 %p\n  %z = load float, ptr %b, align 4\n  ret void\n}}\n"
        );
        let (out, n) = run(&ir);
        assert_eq!(n, 1, "{out}");
        let next: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("next:")).skip(1).map(str::trim).collect();
        assert!(next[0].starts_with("%p = phi"), "{out}");
        assert!(next[1].starts_with("%b = "), "{out}");
        assert!(next[2].starts_with("%z = load"), "{out}");
        assert!(next[3].starts_with("store"), "{out}");
    }
}
