//! The first step of a peeled reduction made after its branch, where the loads that follow
//! are (after `opt`, before `llc`).
//!
//! A block-stride loop over a row (`row.iter().skip(t).step_by(B)`) reaches llc with its first
//! iteration peeled: one load, its combine with the reduction's start value, then the test
//! whether the row goes on, and every later path receives the combine through a phi:
//!
//! ```text
//! P:  %v = load float, ptr %p
//!     %r = call float @llvm.maxnum.f32(float %v, float 0xFFF0000000000000)   ; max(v, -inf)
//!     br i1 %more, label %Q, label %X
//! E:  %m0 = phi float [ %r, %Q ], [ %m8, %R ]        ; the unrolled remainder's start
//! X:  %m = phi float [ %r, %P ], [ %m7, %E7 ], ...    ; the row's result
//! ```
//!
//! ptxas schedules within a block: the combine stays in `P` right after its load, so the thread
//! waits out a whole memory latency there before it issues the remainder's loads (xent_rows:
//! the peeled load, then 7 more, two latencies per pass where nvcc has one). A combine with a
//! constant has an identity (max/min: NaN, which `maxnum`/`minnum` and PTX `max`/`min` drop;
//! `fadd`: -0.0; `fmul`: 1.0; `add`/`or`/`xor`: 0), so each phi takes the load itself and
//! combines after its phis, with the constant on the edges where `%r` came in and the identity
//! on the others:
//!
//! ```text
//! E:  %a = phi float [ %v, %Q ], [ %m8, %R ]
//!     %k = phi float [ 0xFFF0000000000000, %Q ], [ 0x7FF8000000000000, %R ]
//!     %m0 = call float @llvm.maxnum.f32(float %a, float %k)
//! ```
//!
//! which computes what the phi did on every edge. In a loop header that would combine on
//! every iteration, so there the combine is made at the end of the entering block instead.

use super::guarded_loads::{blocks, each_kernel, REMOVED};
use super::{split_top, uses_value, Line};

/// Rewrites every qualifying combine of every kernel; returns how many moved.
pub(super) fn rewrite(lines: &mut Vec<Line>) -> usize {
    each_kernel(lines, |body, _, first| rewrite_function(body, first))
}

/// A combine of a loaded value with a constant: `%r = <head><a>, <b><tail>`, the operands
/// typed where the instruction types them.
struct Combine {
    name: String,
    line: usize,
    rhs: String,
    /// The loaded value and the constant, in operand order.
    operands: [String; 2],
    load_first: bool,
    ty: String,
    identity: &'static str,
    is_call: bool,
    head: String,
    tail: String,
}

impl Combine {
    /// The same instruction with operands `a` and `b`.
    fn with(&self, a: &str, b: &str) -> String {
        let ty = &self.ty;
        if self.is_call {
            format!("{}{ty} {a}, {ty} {b}{}", self.head, self.tail)
        } else {
            format!("{}{a}, {b}", self.head)
        }
    }
}

fn rewrite_function(mut body: Vec<Line>, first_id: usize) -> (Vec<Line>, usize) {
    let blocks = blocks(&body);
    let block_of = |line: usize| blocks.iter().position(|b| b.insts.contains(&line));
    let position = |label: &str| blocks.iter().position(|b| b.label == label);
    // New phis go in before new combines inserted at the same line.
    let (mut phis, mut ops): (Inserts, Inserts) = (Vec::new(), Vec::new());
    let mut changed_blocks: Vec<usize> = Vec::new();
    let mut count = 0;
    for b in &blocks {
        let loads: Vec<String> = b
            .insts
            .iter()
            .filter_map(|&i| {
                let (name, rhs) = body[i].text.trim().split_once(" = ")?;
                let plain = rhs.starts_with("load ") && !rhs.contains("volatile");
                plain.then(|| name.to_string())
            })
            .collect();
        for &i in &b.insts {
            let Some(c) = parse_combine(&body[i].text, i, &loads) else { continue };
            // Every use must be a phi's incoming value, at most one phi per block.
            let uses: Vec<usize> = (0..body.len()).filter(|&j| j != i && uses_value(&body[j].text, &c.name)).collect();
            if uses.is_empty() || uses.iter().any(|&j| !body[j].text.trim().contains(" = phi ")) {
                continue;
            }
            let id = first_id + count;
            let plan = plan_uses(&body, &blocks, &c, &uses, id, &block_of, &position);
            let Some((edits, new_phis, new_ops)) = plan else { continue };
            let touched: Vec<usize> = uses.iter().filter_map(|&j| block_of(j)).collect();
            if touched.iter().any(|k| changed_blocks.contains(k)) {
                continue;
            }
            changed_blocks.extend(touched);
            for (j, text) in edits {
                body[j].text = text;
            }
            phis.extend(new_phis);
            ops.extend(new_ops);
            body[c.line].text = REMOVED.to_string();
            count += 1;
        }
    }
    phis.extend(ops);
    phis.sort_by_key(|(at, _)| *at);
    let mut out = Vec::with_capacity(body.len() + phis.len());
    let mut new = phis.into_iter().peekable();
    for (i, line) in body.into_iter().enumerate() {
        while let Some((_, text)) = new.next_if(|(at, _)| *at == i) {
            out.push(Line { no: line.no, text });
        }
        if line.text != REMOVED {
            out.push(line);
        }
    }
    (out, count)
}

/// Lines to insert, each before the given line index (or, for edits, to put in its place).
type Inserts = Vec<(usize, String)>;

/// A phi's `[ value, block ]` entries.
type Entries = Vec<(String, String)>;

/// How each phi that reads `c` changes: its new text, new phis and new combines.
fn plan_uses(
    body: &[Line],
    blocks: &[super::guarded_loads::Block],
    c: &Combine,
    uses: &[usize],
    id: usize,
    block_of: &impl Fn(usize) -> Option<usize>,
    position: &impl Fn(&str) -> Option<usize>,
) -> Option<(Inserts, Inserts, Inserts)> {
    let (mut edits, mut phis, mut ops) = (Vec::new(), Vec::new(), Vec::new());
    let (load, konst) = if c.load_first { (&c.operands[0], &c.operands[1]) } else { (&c.operands[1], &c.operands[0]) };
    for (n, &j) in uses.iter().enumerate() {
        let k = block_of(j)?;
        let blk = &blocks[k];
        if uses.iter().filter(|&&u| block_of(u) == Some(k)).count() > 1 {
            return None;
        }
        let (phi, ty, entries) = parse_phi(&body[j].text)?;
        if ty != c.ty {
            return None;
        }
        // A block entered from itself or from below is a loop header.
        let is_header = blk.preds.iter().any(|p| position(p).is_none_or(|q| q >= k));
        if is_header {
            // Combining here would combine on every iteration: combine at the end of each
            // block `%r` enters from instead (above the loop, else nothing moves).
            let mut new_entries = entries.clone();
            for (e, (value, from)) in entries.iter().enumerate() {
                if value != &c.name {
                    continue;
                }
                let q = position(from)?;
                if q >= k || blocks[q].insts.contains(&c.line) {
                    return None;
                }
                let term = *blocks[q].insts.last()?;
                let clone = format!("%__oxide_lc{id}_c{n}_{e}");
                ops.push((term, format!("  {clone} = {}", c.rhs)));
                new_entries[e].0 = clone;
            }
            edits.push((j, phi_line(&phi, &ty, &new_entries)));
        } else {
            let a = format!("%__oxide_lc{id}_a{n}");
            let kn = format!("%__oxide_lc{id}_k{n}");
            let pick = |here: &str, other: &str| -> Entries {
                entries
                    .iter()
                    .map(|(v, f)| (if v == &c.name { here.to_string() } else { other.replace('*', v) }, f.clone()))
                    .collect()
            };
            edits.push((j, phi_line(&a, &ty, &pick(load, "*"))));
            phis.push((j + 1, phi_line(&kn, &ty, &pick(konst, c.identity))));
            let first_op = blk.insts.iter().copied().find(|&x| !body[x].text.trim().contains(" = phi "))?;
            let (x, y) = if c.load_first { (&a, &kn) } else { (&kn, &a) };
            ops.push((first_op, format!("  {phi} = {}", c.with(x, y))));
        }
    }
    Some((edits, phis, ops))
}

/// The identity of each combine oxide moves, by how the instruction starts.
fn identity(op: &str, ty: &str) -> Option<&'static str> {
    let float = matches!(ty, "float" | "double");
    let int = ty.starts_with('i') && ty[1..].bytes().all(|b| b.is_ascii_digit());
    match op {
        "maxnum" | "minnum" if float => Some("0x7FF8000000000000"),
        "fadd" if float => Some("-0.000000e+00"),
        "fmul" if float => Some("1.000000e+00"),
        "add" | "or" | "xor" if int => Some("0"),
        _ => None,
    }
}

/// `%r = <combine>` of one of `loads` with a constant, in `line` (index `at`).
fn parse_combine(line: &str, at: usize, loads: &[String]) -> Option<Combine> {
    let (name, rhs) = line.trim().split_once(" = ")?;
    let is_const = |v: &str| v.starts_with(|c: char| c.is_ascii_digit() || c == '-');
    let is_call = rhs.starts_with("tail call ") || rhs.starts_with("call ");
    let (op, ty, head, args, tail) =
        if let Some(call) = rhs.strip_prefix("tail call ").or_else(|| rhs.strip_prefix("call ")) {
            // `[flags] float @llvm.maxnum.f32(float %a, float %b)`
            let open = call.find('(')?;
            let callee = call[..open].split_whitespace().last()?;
            let op = callee.strip_prefix("@llvm.")?.split('.').next()?;
            let ty = call[..open].split_whitespace().rev().nth(1)?;
            let close = call.rfind(')')?;
            let args: Vec<String> = split_top(&call[open + 1..close])
                .into_iter()
                .map(|a| a.trim().strip_prefix(ty).map(|v| v.trim().to_string()))
                .collect::<Option<_>>()?;
            let head = format!(" {}{}", &rhs[..rhs.len() - call.len()], &call[..=open]).trim_start().to_string();
            (op.to_string(), ty.to_string(), head, args, call[close..].to_string())
        } else {
            // `fadd [flags] float %a, %b` / `add [nuw] [nsw] i32 %a, %b`
            let op = rhs.split_whitespace().next()?;
            let (before, operands) = rhs.split_once(", ")?;
            let mut words: Vec<&str> = before.split_whitespace().collect();
            let first = words.pop()?;
            let ty = *words.last()?;
            let second = operands.split_whitespace().next()?.to_string();
            if operands.trim() != second {
                return None;
            }
            let head = format!("{} ", words.join(" "));
            (op.to_string(), ty.to_string(), head, vec![first.to_string(), second], String::new())
        };
    let identity = identity(&op, &ty)?;
    // The combine must give back its other operand exactly, also when that is a NaN or an
    // infinity: `nnan`/`ninf` (or `fast`) would make such a result poison (and NaN, max/min's
    // identity, an operand they may not see).
    let padded = format!(" {head} ");
    if [" nnan ", " ninf ", " fast "].iter().any(|f| padded.contains(f)) {
        return None;
    }
    if args.len() != 2 {
        return None;
    }
    let load_first = match (loads.contains(&args[0]), loads.contains(&args[1])) {
        (true, false) if is_const(&args[1]) => true,
        (false, true) if is_const(&args[0]) => false,
        _ => return None,
    };
    Some(Combine {
        name: name.to_string(),
        line: at,
        rhs: rhs.to_string(),
        operands: [args[0].clone(), args[1].clone()],
        load_first,
        ty,
        identity,
        is_call,
        head,
        tail,
    })
}

/// `%x = phi T [ v, %a ], [ w, %b ]` as (`%x`, `T`, entries).
fn parse_phi(line: &str) -> Option<(String, String, Entries)> {
    let (name, rest) = line.trim().split_once(" = phi ")?;
    let open = rest.find('[')?;
    let ty = rest[..open].trim().to_string();
    let mut entries = Vec::new();
    for e in rest[open..].split(']') {
        let e = e.trim().trim_start_matches(',').trim();
        if e.is_empty() {
            continue;
        }
        let inner = e.strip_prefix('[')?;
        let (v, from) = inner.rsplit_once(',')?;
        entries.push((v.trim().to_string(), from.trim().to_string()));
    }
    Some((name.to_string(), ty, entries))
}

fn phi_line(name: &str, ty: &str, entries: &[(String, String)]) -> String {
    let list: Vec<String> = entries.iter().map(|(v, f)| format!("[ {v}, {f} ]")).collect();
    format!("  {name} = phi {ty} {}", list.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ir: &str) -> (String, usize) {
        crate::ir::tests::transformed(ir, rewrite)
    }

    /// A peeled max over a row: the peel `p`, a loop `l` entered through `pre`, a remainder
    /// `e` and the exit `x`, each receiving the peel's combine through a phi.
    const PEEL: &str = "define ptx_kernel void @k(ptr noalias %__oxide_in_x, i64 %n, ptr %out) #0 {
start:
  %v = load float, ptr %__oxide_in_x, align 4
  %r = tail call float @llvm.maxnum.f32(float %v, float 0xFFF0000000000000)
  %more = icmp ugt i64 %n, 1
  br i1 %more, label %pre, label %x

pre:                                              ; preds = %start
  %long = icmp ugt i64 %n, 8
  br i1 %long, label %l, label %e

l:                                                ; preds = %l, %pre
  %m = phi float [ %r, %pre ], [ %m1, %l ]
  %i = phi i64 [ 1, %pre ], [ %i1, %l ]
  %p = getelementptr inbounds float, ptr %__oxide_in_x, i64 %i
  %w = load float, ptr %p, align 4
  %m1 = tail call float @llvm.maxnum.f32(float %m, float %w)
  %i1 = add nuw i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %e, label %l

e:                                                ; preds = %l, %pre
  %me = phi float [ %r, %pre ], [ %m1, %l ]
  %q = getelementptr inbounds float, ptr %__oxide_in_x, i64 1
  %z = load float, ptr %q, align 4
  %m2 = tail call float @llvm.maxnum.f32(float %me, float %z)
  br label %x

x:                                                ; preds = %e, %start
  %res = phi float [ %r, %start ], [ %m2, %e ]
  store float %res, ptr %out, align 4
  ret void
}
";

    #[test]
    fn the_peeled_combine_moves_behind_the_branch() {
        let (out, n) = run(PEEL);
        assert_eq!(n, 1, "{out}");
        for want in [
            // Nothing reads the load in the peel any more.
            "  %v = load float, ptr %__oxide_in_x, align 4\n  %more = icmp ugt i64 %n, 1\n",
            // The loop header gets the combine at the end of the block above it.
            "  %__oxide_lc0_c0_0 = tail call float @llvm.maxnum.f32(float %v, float 0xFFF0000000000000)\n  br i1 %long",
            "  %m = phi float [ %__oxide_lc0_c0_0, %pre ], [ %m1, %l ]\n",
            // The remainder and the exit combine after their phis, NaN on the other edges.
            "  %__oxide_lc0_a1 = phi float [ %v, %pre ], [ %m1, %l ]\n  %__oxide_lc0_k1 = phi float [ 0xFFF0000000000000, %pre ], [ 0x7FF8000000000000, %l ]\n  %me = tail call float @llvm.maxnum.f32(float %__oxide_lc0_a1, float %__oxide_lc0_k1)\n  %q =",
            "  %__oxide_lc0_a2 = phi float [ %v, %start ], [ %m2, %e ]\n  %__oxide_lc0_k2 = phi float [ 0xFFF0000000000000, %start ], [ 0x7FF8000000000000, %e ]\n  %res = tail call float @llvm.maxnum.f32(float %__oxide_lc0_a2, float %__oxide_lc0_k2)\n  store",
        ] {
            assert!(out.contains(want), "missing\n{want}\nin\n{out}");
        }
    }

    #[test]
    fn sums_take_negative_zero_and_keep_their_operand_order() {
        let ir = PEEL.replace(
            "tail call float @llvm.maxnum.f32(float %v, float 0xFFF0000000000000)",
            "fadd contract float 0.000000e+00, %v",
        );
        let (out, n) = run(&ir);
        assert_eq!(n, 1, "{out}");
        assert!(out.contains("  %__oxide_lc0_k1 = phi float [ 0.000000e+00, %pre ], [ -0.000000e+00, %l ]\n  %me = fadd contract float %__oxide_lc0_k1, %__oxide_lc0_a1\n"), "{out}");
    }

    #[test]
    fn combines_with_other_uses_or_no_identity_stay() {
        let other_use = PEEL.replace("  %more = icmp ugt i64 %n, 1", "  %more = fcmp ogt float %r, 0.000000e+00");
        let no_nan = PEEL.replace("tail call float @llvm.maxnum", "tail call nnan float @llvm.maxnum");
        let no_inf_sum = PEEL.replace(
            "tail call float @llvm.maxnum.f32(float %v, float 0xFFF0000000000000)",
            "fadd ninf float %v, 0.000000e+00",
        );
        let not_a_load = PEEL.replace("(float %v, float 0xFFF0000000000000)", "(float %v, float %v)");
        let sub = PEEL.replace(
            "tail call float @llvm.maxnum.f32(float %v, float 0xFFF0000000000000)",
            "fsub float %v, 1.000000e+00",
        );
        for (what, ir) in
            [("other use", other_use), ("nnan", no_nan), ("ninf", no_inf_sum), ("two loads", not_a_load), ("fsub", sub)]
        {
            let (out, n) = run(&ir);
            assert_eq!(n, 0, "{what}: {out}");
        }
    }

    /// LLVM's verifier accepts the result.
    #[test]
    fn the_rewrite_is_valid_ir() {
        let (out, n) = run(PEEL);
        assert_eq!(n, 1);
        let ir = format!("{out}declare float @llvm.maxnum.f32(float, float)\nattributes #0 = {{ nounwind }}\n");
        crate::ir::tests::assert_valid_ir("late-combines", &ir);
    }
}
