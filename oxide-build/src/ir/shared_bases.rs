//! Guarded reads at constant distances from one index share one address (after `opt`, before
//! `llc`).
//!
//! A 3×3 convolution with zero padding reads each row's three taps under conditions of their
//! own (`xx >= 1`, `xx - 1 < cols`), each at an index of its own:
//!
//! ```text
//! T1: %i1 = add nuw nsw i64 %row, %x          ; %p1 = getelementptr inbounds nuw float, ptr %in, i64 %i1
//! T2: %x1 = add nuw nsw i64 %x, 1 ; %i2 = add nuw nsw i64 %row, %x1 ; %p2 = ... i64 %i2
//! T0: %x0 = add nsw i64 %x, -1    ; %i0 = add nuw nsw i64 %x0, %row ; %p0 = ... i64 %i0
//! ```
//!
//! llc's address sinking computes `%in + 4 * (%row + %x)` again in every tap's block, and
//! ptxas, predicating the taps, reloads the parameter and redoes the 64-bit shift and add under
//! each predicate (conv2d_3x3: 15 such instructions; nvcc's twin forms each row's address once
//! and reads `[r - 4]`, `[r]`, `[r + 4]`). Here each index is read as a sum of values plus a
//! constant (through `add`s); reads of one input whose sums match share
//! `%b = getelementptr T, ptr %in, i64 <the sum>`, made once where it dominates all of them,
//! and each reads `getelementptr T, ptr %b, i64 <its constant>`: the same address, so the same
//! element. The geps lose `inbounds` (the shared base need not be an element itself).

use super::guarded_loads::{blocks, each_kernel, Block};
use super::{definitions, Line};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Sums expanded through at most this many nested `add`s.
const MAX_DEPTH: usize = 4;

/// Rewrites every qualifying group of reads in every kernel; returns how many reads changed.
pub(super) fn share(lines: &mut Vec<Line>) -> usize {
    each_kernel(lines, |body, define, first| rewrite_function(body, &pointer_params(define), first))
}

/// One read: the line of its `getelementptr`, its block, and its index as atoms + constant.
struct Read {
    gep: usize,
    block: usize,
    name: String,
    ty: String,
    offset: i64,
}

fn rewrite_function(mut body: Vec<Line>, params: &HashSet<String>, first_id: usize) -> (Vec<Line>, usize) {
    let blocks = blocks(&body);
    let defs = definitions(&body);
    let block_of = block_index(&blocks);
    let mut groups: BTreeMap<(String, String, Vec<String>), Vec<Read>> = BTreeMap::new();
    for (b, block) in blocks.iter().enumerate() {
        for &i in &block.insts {
            let Some((name, ty, base, index)) = element_gep(&body[i].text) else { continue };
            if !params.contains(&base) || !used_only_by_loads(&body, &name) {
                continue;
            }
            let Some((mut atoms, offset)) = sum(&body, &defs, &index, MAX_DEPTH) else { continue };
            atoms.sort();
            let read = Read { gep: i, block: b, name, ty: ty.clone(), offset };
            groups.entry((base, ty, atoms)).or_default().push(read);
        }
    }
    let doms = dominators(&blocks);
    let mut inserts: Vec<(usize, Vec<String>)> = Vec::new();
    let mut count = 0;
    for (n, ((base, ty, atoms), reads)) in groups.into_iter().enumerate() {
        let in_blocks: HashSet<usize> = reads.iter().map(|r| r.block).collect();
        let offsets: HashSet<i64> = reads.iter().map(|r| r.offset).collect();
        // Worth it only where llc would form the address in several blocks.
        if in_blocks.len() < 2 || offsets.len() < 2 {
            continue;
        }
        let Some(at_block) = common_dominator(&doms, &in_blocks) else { continue };
        let atom_blocks: Option<Vec<Option<usize>>> =
            atoms.iter().map(|a| defs.get(a).map(|&d| block_of.get(&d).copied()).or(Some(None))).collect();
        // Every atom is an argument or defined in a block that dominates the insertion point.
        let Some(atom_blocks) = atom_blocks else { continue };
        if atom_blocks.iter().flatten().any(|&d| !doms[at_block].contains(&d)) {
            continue;
        }
        let block = &blocks[at_block];
        let Some(&term) = block.insts.last() else { continue };
        let first_read = reads.iter().filter(|r| r.block == at_block).map(|r| r.gep).min();
        let at = first_read.map_or(term, |r| r.min(term));
        let id = first_id + n;
        let mut new = Vec::new();
        let mut acc = atoms[0].clone();
        for (k, a) in atoms.iter().enumerate().skip(1) {
            let next = format!("%__oxide_sb{id}_{k}");
            new.push(format!("  {next} = add i64 {acc}, {a}"));
            acc = next;
        }
        let shared = format!("%__oxide_sb{id}");
        new.push(format!("  {shared} = getelementptr {ty}, ptr {base}, i64 {acc}"));
        inserts.push((at, new));
        for r in &reads {
            body[r.gep].text = format!("  {} = getelementptr {}, ptr {shared}, i64 {}", r.name, r.ty, r.offset);
            count += 1;
        }
    }
    super::guarded_loads::apply(&mut body, inserts);
    (body, count)
}

/// The `ptr` parameters of the kernel `define` opens.
fn pointer_params(define: &str) -> HashSet<String> {
    let (Some(open), Some(close)) = (define.find('('), super::find_params_close(define)) else { return HashSet::new() };
    super::split_top(&define[open + 1..close])
        .into_iter()
        .filter(|p| p.trim_start().starts_with("ptr "))
        .filter_map(|p| p.split_whitespace().last().map(str::to_string))
        .collect()
}

/// `(name, element type, base, index)` of `%p = getelementptr [inbounds] [nuw] T, ptr %b, i64 %i`.
fn element_gep(line: &str) -> Option<(String, String, String, String)> {
    let (lhs, rhs) = line.split_once(" = ")?;
    let rest = rhs.trim().strip_prefix("getelementptr ")?;
    let rest = rest.strip_prefix("inbounds ").unwrap_or(rest);
    let rest = rest.strip_prefix("nuw ").unwrap_or(rest);
    let parts = super::split_top(rest);
    let [ty, base, index] = parts.as_slice() else { return None };
    let base = base.trim().strip_prefix("ptr ")?;
    let index = index.trim().strip_prefix("i64 ")?;
    let scalar = ["float", "double", "half", "bfloat", "i8", "i16", "i32", "i64"];
    (scalar.contains(&ty.trim()) && base.starts_with('%') && index.starts_with('%'))
        .then(|| (lhs.trim().to_string(), ty.trim().to_string(), base.to_string(), index.to_string()))
}

/// Whether every use of `%name` is the address of a `load`.
fn used_only_by_loads(body: &[Line], name: &str) -> bool {
    let def = format!("{name} = ");
    let address = format!(", ptr {name},");
    let mut uses = body
        .iter()
        .map(|l| l.text.trim_start())
        .filter(|t| !t.starts_with(&def) && super::uses_value(t, name))
        .peekable();
    uses.peek().is_some()
        && uses.all(|t| t.split_once(" = ").is_some_and(|(_, r)| r.starts_with("load ") && r.contains(&address)))
}

/// `%v` as a sum of values and a constant, through `add`s (any flags: the address arithmetic
/// is the same modulo 2^64).
fn sum(body: &[Line], defs: &HashMap<String, usize>, v: &str, depth: usize) -> Option<(Vec<String>, i64)> {
    if let Ok(c) = v.parse::<i64>() {
        return Some((Vec::new(), c));
    }
    let add = defs.get(v).and_then(|&i| {
        let rhs = body[i].text.split_once(" = ")?.1.trim();
        let ops = rhs.strip_prefix("add ")?;
        let ops = ops.trim_start_matches("nuw ").trim_start_matches("nsw ");
        let (a, b) = ops.strip_prefix("i64 ")?.split_once(", ")?;
        Some((a.trim().to_string(), b.trim().to_string()))
    });
    match add {
        Some((a, b)) if depth > 0 => {
            let (mut xs, c) = sum(body, defs, &a, depth - 1)?;
            let (ys, d) = sum(body, defs, &b, depth - 1)?;
            xs.extend(ys);
            Some((xs, c.checked_add(d)?))
        }
        _ => v.starts_with('%').then(|| (vec![v.to_string()], 0)),
    }
}

/// `line -> block` for every instruction line.
fn block_index(blocks: &[Block]) -> HashMap<usize, usize> {
    blocks.iter().enumerate().flat_map(|(b, block)| block.insts.iter().map(move |&i| (i, b))).collect()
}

/// For each block, the blocks that dominate it (itself included), from the blocks'
/// predecessor lists; the first block is the entry.
pub(super) fn dominators(blocks: &[Block]) -> Vec<HashSet<usize>> {
    let index: HashMap<&str, usize> = blocks.iter().enumerate().map(|(i, b)| (b.label.as_str(), i)).collect();
    let preds: Vec<Vec<usize>> =
        blocks.iter().map(|b| b.preds.iter().filter_map(|p| index.get(p.as_str()).copied()).collect()).collect();
    let all: HashSet<usize> = (0..blocks.len()).collect();
    let mut doms: Vec<HashSet<usize>> =
        (0..blocks.len()).map(|i| if i == 0 { HashSet::from([0]) } else { all.clone() }).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for b in 1..blocks.len() {
            let mut new: Option<HashSet<usize>> = None;
            for &p in &preds[b] {
                new = Some(match new {
                    None => doms[p].clone(),
                    Some(acc) => acc.intersection(&doms[p]).copied().collect(),
                });
            }
            let mut new = new.unwrap_or_default();
            new.insert(b);
            if new != doms[b] {
                doms[b] = new;
                changed = true;
            }
        }
    }
    doms
}

/// The block nearest the reads that dominates every one of them.
fn common_dominator(doms: &[HashSet<usize>], of: &HashSet<usize>) -> Option<usize> {
    let mut common: Option<HashSet<usize>> = None;
    for &b in of {
        common = Some(match common {
            None => doms[b].clone(),
            Some(acc) => acc.intersection(&doms[b]).copied().collect(),
        });
    }
    // The nearest common dominator is the one the others all dominate.
    let common = common?;
    common.iter().copied().find(|&c| common.iter().all(|&d| doms[c].contains(&d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two taps of a row, `in[row + x - 1]` and `in[row + x + 1]`, each under its own guard.
    const TAPS: &str = "define ptx_kernel void @k(ptr noalias readonly %__oxide_in_in, i64 %len, i64 %row, i64 %x, i1 %a, i1 %b, ptr %out) #0 {
start:
  %x0 = add nsw i64 %x, -1
  br i1 %a, label %t0, label %j0

t0:                                               ; preds = %start
  %i0 = add nuw nsw i64 %x0, %row
  %p0 = getelementptr inbounds nuw float, ptr %__oxide_in_in, i64 %i0
  %v0 = load float, ptr %p0, align 4
  br label %j0

j0:                                               ; preds = %t0, %start
  %s0 = phi float [ %v0, %t0 ], [ 0.000000e+00, %start ]
  br i1 %b, label %t2, label %j2

t2:                                               ; preds = %j0
  %x2 = add nuw nsw i64 %x, 1
  %i2 = add nuw nsw i64 %row, %x2
  %p2 = getelementptr inbounds nuw float, ptr %__oxide_in_in, i64 %i2
  %v2 = load float, ptr %p2, align 4
  %w = fadd float %s0, %v2
  br label %j2

j2:                                               ; preds = %t2, %j0
  %s = phi float [ %w, %t2 ], [ %s0, %j0 ]
  store float %s, ptr %out, align 4
  ret void
}
";

    #[test]
    fn reads_at_constant_distances_from_one_index_share_its_address() {
        let (out, n) = crate::ir::tests::transformed(TAPS, share);
        assert_eq!(n, 2, "{out}");
        for want in [
            // Made once in the block that dominates both reads, from the sum's values.
            "  %x0 = add nsw i64 %x, -1\n  %__oxide_sb0_1 = add i64 %row, %x\n  \
             %__oxide_sb0 = getelementptr float, ptr %__oxide_in_in, i64 %__oxide_sb0_1\n  br i1 %a",
            "  %p0 = getelementptr float, ptr %__oxide_sb0, i64 -1\n",
            "  %p2 = getelementptr float, ptr %__oxide_sb0, i64 1\n",
        ] {
            assert!(out.contains(want), "missing\n{want}\nin\n{out}");
        }
        crate::ir::tests::assert_valid_ir("shared-bases", &out);
    }

    #[test]
    fn reads_stay_when_sharing_gains_nothing_or_cannot_be_placed() {
        let cases = [
            // Both reads in one block: llc forms the address once anyway.
            "define ptx_kernel void @k(ptr %__oxide_in_in, i64 %row, i64 %x, ptr %out) #0 {\nstart:\n  \
             %x0 = add nsw i64 %x, -1\n  %i0 = add i64 %x0, %row\n  %p0 = getelementptr float, ptr %__oxide_in_in, i64 %i0\n  \
             %v0 = load float, ptr %p0, align 4\n  %i2 = add i64 %row, %x\n  %p2 = getelementptr float, ptr %__oxide_in_in, i64 %i2\n  \
             %v2 = load float, ptr %p2, align 4\n  %w = fadd float %v0, %v2\n  store float %w, ptr %out, align 4\n  ret void\n}\n"
                .to_string(),
            // One distance only.
            TAPS.replace("%x2 = add nuw nsw i64 %x, 1", "%x2 = add nuw nsw i64 %x, -1"),
            // The address is stored too, not only read through.
            TAPS.replace("  store float %s, ptr %out, align 4\n", "  store ptr %p2, ptr %out, align 8\n"),
            // Not an element of a kernel parameter (a pointer computed in the kernel).
            TAPS.replace("  %x0 = add nsw i64 %x, -1\n", "  %x0 = add nsw i64 %x, -1\n  %q = getelementptr i8, ptr %out, i64 8\n")
                .replace("ptr %__oxide_in_in, i64 %i2", "ptr %q, i64 %i2")
                .replace("ptr %__oxide_in_in, i64 %i0", "ptr %q, i64 %i0"),
        ];
        for ir in cases {
            let (out, n) = crate::ir::tests::transformed(&ir, share);
            assert_eq!((n, out.as_str()), (0, ir.as_str()));
        }
    }
}
