//! Bounds-checked reads of kernel inputs without a branch around the load.
//!
//! `input.get(i)` on a `&[T]` kernel argument becomes, after rustc's optimisation,
//!
//! ```text
//! G:  %c = icmp ult i64 %i, %__oxide_in_x_len
//!     br i1 %c, label %L, label %M
//! L:  %p = getelementptr inbounds nuw T, ptr %__oxide_in_x, i64 %i      ; preds = %G
//!     %v = load T, ptr %p
//!     br label %M
//! M:  %r = phi T [ %v, %L ], [ C, %G ], ...
//! ```
//!
//! A load that only runs under a branch is one ptxas will not lift above a barrier, which it
//! does for nvcc's unchecked `in[i]` (examples/scan reads the block's offset after two
//! barriers: 1.137 of nvcc's time with the branch). So a guarded load that follows a barrier
//! moves into `G`, at a clamped index, and a select keeps its value only when the check passed:
//!
//! ```text
//! G:  %k = select i1 %c, i64 %i, i64 0
//!     %p = getelementptr inbounds nuw T, ptr %__oxide_in_x, i64 %k
//!     %v = load T, ptr %p
//!     %s = select i1 %c, T %v, T C
//!     br i1 %c, label %L, label %M
//! L:  br label %M
//! M:  %r = phi T [ %s, %L ], [ %s, %G ], ...
//! ```
//!
//! The guard need not compare the index itself (a `Matrix` read checks a row and a column, a
//! clamped index checks nothing but the other axis): when `L` computes the address from an
//! input through a chain of `getelementptr`s and pure integer arithmetic, those move into `G`
//! and the address, not the index, is chosen:
//!
//! ```text
//! G:  %q = getelementptr float, ptr %row, i64 %j        ; %row derives from %__oxide_in_x
//!     %a = select i1 %c, ptr %q, ptr %__oxide_in_x
//!     %v = load float, ptr %a
//!     %s = select i1 %c, float %v, float C
//! ```
//!
//! Sound because: when the check passes the same element is read as before; when it fails,
//! element 0 is read and discarded (in the pointer form the address computed from the failed
//! index may be poison, and the select never picks it), and element 0 is always readable: a non-empty slice has
//! it, and the launchers point empty input slices at a per-context pad of
//! `oxide_rt::__private::EMPTY_INPUT_PAD` (256) bytes. Only read-only inputs (`readonly`, so
//! nobody writes them during the kernel) and loads of at most [`MAX_LOAD_BYTES`] qualify.

use super::noalias_inputs::IN_PARAM;
use super::predicated_loads::MARK;
use super::{int_bits, MetaRecord};
use super::{split_top, uses_value, Line};
use std::collections::{HashMap, HashSet};

/// The largest load hoisted; must not exceed the runtime's empty-input pad.
const MAX_LOAD_BYTES: u64 = 16;

/// Rewrites every matching guarded load in every kernel; returns how many were rewritten.
pub(super) fn hoist(lines: &mut Vec<Line>, meta: &[MetaRecord]) -> usize {
    each_kernel(lines, |body, define, first| {
        rewrite_function(body, &readonly_inputs(define), &input_sizes(define, meta), first)
    })
}

/// The element size in bytes of each `__oxide_in_*` input of the kernel `define` opens, from
/// the `__oxide_input_sizes_<kernel>` record `#[kernel]` writes (one size per input pointer, in
/// order); empty when the record is missing or does not match the parameters.
pub(super) fn input_sizes(define: &str, meta: &[MetaRecord]) -> HashMap<String, u64> {
    let Some(name) = define.split_once(" @").and_then(|(_, r)| r.split_once('(')).map(|(n, _)| n.trim_matches('"'))
    else {
        return HashMap::new();
    };
    // A kernel's 1-D copy reads the kernel's inputs.
    let name = name.strip_suffix(super::one_d_copies::SUFFIX).unwrap_or(name);
    let Some(sizes) = meta.iter().find(|m| m.name == format!("__oxide_input_sizes_{name}")) else {
        return HashMap::new();
    };
    let pointers: Vec<String> = define
        .split(&[' ', ',', ')'][..])
        .filter(|w| w.starts_with("%__oxide_in_") && !w.ends_with("_len"))
        .map(str::to_string)
        .collect();
    if pointers.len() != sizes.values.len() {
        return HashMap::new();
    }
    pointers.into_iter().zip(sizes.values.iter().copied()).collect()
}

/// Whether a read of `ty` at element 0 of input `root` stays within that element (so within a
/// non-empty input): not wider than the element, where `#[kernel]` recorded its size.
pub(super) fn within_element(sizes: &HashMap<String, u64>, root: &str, ty: &str) -> bool {
    match sizes.get(root) {
        Some(&size) => type_bytes(ty).is_some_and(|b| b <= size),
        None => true,
    }
}

/// The bytes a load of `ty` reads (scalars and vectors of them).
pub(super) fn type_bytes(ty: &str) -> Option<u64> {
    let scalar = |t: &str| -> Option<u64> {
        match t {
            "half" | "bfloat" => Some(2),
            "float" => Some(4),
            "double" | "ptr" => Some(8),
            _ => int_bits(t).map(|b| u64::from(b) / 8),
        }
    };
    match ty.strip_prefix('<').and_then(|t| t.strip_suffix('>')) {
        Some(v) => {
            let (n, elem) = v.split_once(" x ")?;
            Some(n.trim().parse::<u64>().ok()? * scalar(elem.trim())?)
        }
        None => scalar(ty),
    }
}

/// Runs `rewrite(body, its `define` line, sites so far)` over the body of every kernel, and
/// numbers LLVM's unnamed values again where it moved something; returns the sites in all.
/// Shared by the transforms that move loads (this one and `speculated_blocks.rs`).
pub(super) fn each_kernel(
    lines: &mut Vec<Line>,
    rewrite: impl Fn(Vec<Line>, &str, usize) -> (Vec<Line>, usize),
) -> usize {
    let mut count = 0;
    let mut i = 0;
    while i < lines.len() {
        let text = &lines[i].text;
        if !(text.starts_with("define ") && text.contains(" ptx_kernel ")) {
            i += 1;
            continue;
        }
        let define = text.clone();
        let Some(len) = lines[i + 1..].iter().position(|l| l.text.starts_with('}')) else { break };
        let body: Vec<Line> = lines.drain(i + 1..i + 1 + len).collect();
        let (mut body, n) = rewrite(body, &define, count);
        if n > 0 {
            // Loads and address arithmetic moved up: numbered values may now be out of order.
            super::renumber(&mut lines[i].text, &mut body);
        }
        count += n;
        let body_len = body.len();
        lines.splice(i + 1..i + 1, body);
        i += body_len + 2;
    }
    count
}

/// Inserts each `(index, lines)` before that index of `body` (back to front, so the indices
/// hold), then drops the lines marked [`REMOVED`].
pub(super) fn apply(body: &mut Vec<Line>, mut inserts: Vec<(usize, Vec<String>)>) {
    inserts.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
    for (at, new) in inserts {
        let no = body[at].no;
        body.splice(at..at, new.into_iter().map(|text| Line { no, text }));
    }
    body.retain(|l| l.text != REMOVED);
}

/// `%__oxide_in_*` pointer parameters marked `readonly` on a kernel's `define` line.
pub(super) fn readonly_inputs(define: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (define.find('('), super::find_params_close(define)) else { return Vec::new() };
    split_top(&define[open + 1..close])
        .into_iter()
        .filter_map(|p| {
            let words: Vec<&str> = p.split_whitespace().collect();
            let name = *words.last()?;
            (words.first() == Some(&"ptr") && words.contains(&"readonly") && name.starts_with(IN_PARAM))
                .then(|| name.to_string())
        })
        .collect()
}

pub(super) struct Block {
    pub(super) label: String,
    pub(super) preds: Vec<String>,
    /// Indices (into the function body) of its instruction lines.
    pub(super) insts: Vec<usize>,
}

pub(super) fn blocks(body: &[Line]) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    for (i, line) in body.iter().enumerate() {
        let t = &line.text;
        if t.trim().is_empty() || t.trim_start().starts_with(';') {
            continue;
        }
        if !t.starts_with(char::is_whitespace) {
            let (head, comment) = t.split_once(';').unwrap_or((t, ""));
            if let Some(label) = head.trim_end().strip_suffix(':') {
                let preds = comment
                    .trim()
                    .strip_prefix("preds = ")
                    .map(|p| p.split(", ").map(|s| s.trim().to_string()).collect())
                    .unwrap_or_default();
                out.push(Block { label: format!("%{label}"), preds, insts: Vec::new() });
                continue;
            }
        }
        if out.is_empty() {
            out.push(Block { label: String::new(), preds: Vec::new(), insts: Vec::new() });
        }
        if let Some(b) = out.last_mut() {
            b.insts.push(i);
        }
    }
    out
}

/// How a hoisted load picks a readable address when the guard fails.
enum Address {
    /// `L` is `%p = getelementptr inbounds T, ptr %in, i64 %i`: the index becomes 0.
    Index { gep_head: String, base: String, index: String },
    /// `L` computes `%p` from input `%in` through pure instructions (moved up as they are):
    /// the address becomes `%in`.
    Pointer { ptr: String, root: String, pure: Vec<usize> },
}

/// One guarded load found in a function body, with what the rewrite needs.
struct Site {
    guard_term: usize,
    /// Lines of `L` that leave it: the load (rewritten above the guard) and any pure lines
    /// that compute its address (moved above it unchanged).
    moved: Vec<usize>,
    phi: usize,
    cond: String,
    load_on_true: bool,
    address: Address,
    /// The load's name and what follows its address (`, align 4, !noalias !2`).
    load_value: String,
    load_tail: String,
    ty: String,
    other: String,
    load_label: String,
    guard_label: String,
}

/// Marks a line to drop (blank lines are kept as they are).
pub(super) const REMOVED: &str = "\0";

fn rewrite_function(
    mut body: Vec<Line>,
    inputs: &[String],
    sizes: &HashMap<String, u64>,
    first_id: usize,
) -> (Vec<Line>, usize) {
    if inputs.is_empty() {
        return (body, 0);
    }
    // Only loads after a barrier: there the latency can hide behind the barrier wait. Before
    // it, nothing is gained and the branch-free form costs a few more instructions per thread
    // (H200, the first level of examples/scan: 1.003 -> 1.039 of nvcc's time when hoisted).
    let blocks = blocks(&body);
    let after = after_barrier(&body, &blocks);
    let sites: Vec<Site> = blocks
        .iter()
        .filter_map(|b| find_site(&body, &blocks, b, inputs, sizes))
        .filter(|s| after.contains(&s.guard_term))
        .collect();
    // Insertions after each guard's terminator index, applied back to front.
    let mut inserts: Vec<(usize, Vec<String>)> = Vec::new();
    for (n, s) in sites.iter().enumerate() {
        let id = first_id + n;
        let sel = format!("%__oxide_hoist{id}_value");
        let pick = |on_pass: &str, on_fail: &str| {
            if s.load_on_true {
                format!("{on_pass}, {on_fail}")
            } else {
                format!("{on_fail}, {on_pass}")
            }
        };
        let mut lines = Vec::new();
        let load_ptr = match &s.address {
            Address::Index { gep_head, base, index } => {
                let k = format!("%__oxide_hoist{id}_index");
                lines.push(format!("  {k} = select i1 {}, {}", s.cond, pick(&format!("i64 {index}"), "i64 0")));
                lines.push(format!("  {gep_head}, ptr {base}, i64 {k}"));
                gep_head.split(" = ").next().unwrap_or_default().to_string()
            }
            Address::Pointer { ptr, root, pure } => {
                lines.extend(pure.iter().map(|&i| body[i].text.clone()));
                let a = format!("%__oxide_hoist{id}_address");
                lines.push(format!(
                    "  {a} = select i1 {}, {}",
                    s.cond,
                    pick(&format!("ptr {ptr}"), &format!("ptr {root}"))
                ));
                a
            }
        };
        // Marked: its value where the guard fails is never observed (`predicated_loads.rs`).
        lines.push(format!("  {} = load {}, ptr {load_ptr}{}{MARK}", s.load_value, s.ty, s.load_tail));
        lines.push(format!(
            "  {sel} = select i1 {}, {}",
            s.cond,
            pick(&format!("{} {}", s.ty, s.load_value), &format!("{} {}", s.ty, s.other))
        ));
        inserts.push((s.guard_term, lines));
        for &i in &s.moved {
            body[i].text = REMOVED.to_string();
        }
        let phi = &body[s.phi].text;
        let phi = replace_incoming(phi, &s.load_label, &sel);
        body[s.phi].text = replace_incoming(&phi, &s.guard_label, &sel);
    }
    apply(&mut body, inserts);
    (body, sites.len())
}

fn find_site(
    body: &[Line],
    blocks: &[Block],
    l: &Block,
    inputs: &[String],
    sizes: &HashMap<String, u64>,
) -> Option<Site> {
    let (&br_i, rest) = l.insts.split_last()?;
    let (&load_i, pure) = rest.split_last()?;
    let [guard_label] = &l.preds[..] else { return None };
    // `%v = load T, ptr %p, align A, !meta !n...`
    let (value, load_rest) = body[load_i].text.trim().split_once(" = load ")?;
    let load_parts = split_top(load_rest);
    let ty = load_parts.first()?.trim().to_string();
    let ptr = load_parts.get(1)?.trim().strip_prefix("ptr ")?;
    if !fits(&ty)? {
        return None;
    }
    let align = load_parts.get(2).map(|p| p.trim()).filter(|p| p.starts_with("align "))?;
    // Keep alias metadata only: `!noundef`, `!range` and the like promised things about the
    // guarded element that element 0 need not satisfy.
    let mut load_tail = format!(", {align}");
    for md in &load_parts[3..] {
        let md = md.trim();
        if md.starts_with("!alias.scope ") || md.starts_with("!noalias ") {
            load_tail.push_str(", ");
            load_tail.push_str(md);
        }
    }
    let (address, mut moved) = match index_form(body, pure, ptr, inputs) {
        Some(a) => (a, pure.to_vec()),
        None => {
            if !pure.iter().all(|&i| is_pure(&body[i].text)) {
                return None;
            }
            let root = input_root(body, ptr, inputs)?;
            (Address::Pointer { ptr: ptr.to_string(), root, pure: pure.to_vec() }, pure.to_vec())
        }
    };
    // Element 0 must hold the whole read when the guard fails.
    let root = match &address {
        Address::Index { base, .. } => base,
        Address::Pointer { root, .. } => root,
    };
    if !within_element(sizes, root, &ty) {
        return None;
    }
    moved.push(load_i);
    let merge_label = body[br_i].text.trim().strip_prefix("br label ")?.to_string();
    // The guard ends in `br i1 %c, label %L, label %M` (or the other way round).
    let g = blocks.iter().find(|b| &b.label == guard_label)?;
    let guard_term = *g.insts.last()?;
    let br = body[guard_term].text.trim().strip_prefix("br i1 ")?;
    let br_parts = split_top(br);
    let [cond, t, f] = &br_parts[..] else { return None };
    let (t, f) = (t.trim().strip_prefix("label ")?, f.trim().strip_prefix("label ")?);
    let load_on_true = match (t == l.label, f == l.label) {
        (true, false) if f == merge_label => true,
        (false, true) if t == merge_label => false,
        _ => return None,
    };
    // The merge block's phi takes `%v` from L and something from G; `%v` has no other use.
    let m = blocks.iter().find(|b| b.label == merge_label)?;
    let uses: Vec<usize> = m.insts.iter().copied().filter(|&i| uses_value(&body[i].text, value)).collect();
    let [phi] = uses[..] else { return None };
    let phi_text = body[phi].text.trim();
    let (_, phi_rest) = phi_text.split_once(" = phi ")?;
    let (phi_ty, _) = phi_rest.split_once('[')?;
    if !phi_ty.trim().ends_with(&ty) || incoming(phi_text, &l.label)? != value {
        return None;
    }
    let other = incoming(phi_text, guard_label)?;
    let used_elsewhere =
        body.iter().enumerate().any(|(i, line)| i != load_i && i != phi && uses_value(&line.text, value));
    if used_elsewhere {
        return None;
    }
    Some(Site {
        guard_term,
        moved,
        phi,
        cond: cond.trim().to_string(),
        load_on_true,
        address,
        load_value: value.to_string(),
        load_tail,
        ty,
        other,
        load_label: l.label.clone(),
        guard_label: guard_label.clone(),
    })
}

/// `L` is exactly `%p = getelementptr inbounds T, ptr %__oxide_in_x, i64 %i` before the load.
fn index_form(body: &[Line], pure: &[usize], ptr: &str, inputs: &[String]) -> Option<Address> {
    let [gep_i] = pure[..] else { return None };
    let (gep_name, gep_rest) = body[gep_i].text.trim().split_once(" = getelementptr ")?;
    let gep_parts = split_top(gep_rest);
    let [ty_part, base_part, idx_part] = &gep_parts[..] else { return None };
    let base = base_part.trim().strip_prefix("ptr ")?.to_string();
    let index = idx_part.trim().strip_prefix("i64 ")?.to_string();
    if gep_name != ptr || !inputs.contains(&base) || !ty_part.split_whitespace().any(|w| w == "inbounds") {
        return None;
    }
    Some(Address::Index { gep_head: format!("{gep_name} = getelementptr {}", ty_part.trim()), base, index })
}

/// Instructions that may run where they were not asked to: no memory access, no trap (no
/// division), at worst a poison result the select never picks.
fn is_pure(line: &str) -> bool {
    const OPS: [&str; 13] =
        ["getelementptr", "add", "sub", "mul", "shl", "lshr", "ashr", "and", "or", "xor", "zext", "sext", "trunc"];
    line.trim().split_once(" = ").is_some_and(|(_, rest)| OPS.contains(&rest.split_whitespace().next().unwrap_or("")))
}

/// The read-only input `ptr` is computed from through `getelementptr`s, and `select`s whose
/// two sides come from the same input (never through a load, which could leave the input).
pub(super) fn input_root(body: &[Line], ptr: &str, inputs: &[String]) -> Option<String> {
    root_within(body, ptr, inputs, 16)
}

fn root_within(body: &[Line], ptr: &str, inputs: &[String], depth: usize) -> Option<String> {
    if inputs.iter().any(|i| i == ptr) {
        return Some(ptr.to_string());
    }
    if depth == 0 {
        return None;
    }
    let head = format!("{ptr} = ");
    let def = body.iter().find_map(|l| l.text.trim().strip_prefix(head.as_str()))?;
    if let Some(gep) = def.strip_prefix("getelementptr ") {
        let base = split_top(gep).get(1)?.trim().strip_prefix("ptr ")?;
        return root_within(body, base, inputs, depth - 1);
    }
    let parts = split_top(def.strip_prefix("select ")?);
    let [_, a, b] = &parts[..] else { return None };
    let a = root_within(body, a.trim().strip_prefix("ptr ")?, inputs, depth - 1)?;
    let b = root_within(body, b.trim().strip_prefix("ptr ")?, inputs, depth - 1)?;
    (a == b).then_some(a)
}

/// Instruction lines that can run after a barrier: later in a block with a barrier, or in a
/// block reachable from one (LLVM lists every block's predecessors in a `; preds =` comment).
pub(super) fn after_barrier(body: &[Line], blocks: &[Block]) -> HashSet<usize> {
    let mut out = HashSet::new();
    let mut queue: Vec<&str> = Vec::new();
    for b in blocks {
        if let Some(k) = b.insts.iter().position(|&i| is_barrier(&body[i].text)) {
            out.extend(b.insts[k + 1..].iter().copied());
            queue.push(&b.label);
        }
    }
    let mut seen: HashSet<&str> = HashSet::new();
    while let Some(from) = queue.pop() {
        for b in blocks.iter().filter(|b| b.preds.iter().any(|p| p == from)) {
            if seen.insert(&b.label) {
                out.extend(b.insts.iter().copied());
                queue.push(&b.label);
            }
        }
    }
    out
}

/// A block-wide barrier: `llvm.nvvm.barrier*` or inline `bar.sync`/`bar.red`/`barrier.*`.
pub(super) fn is_barrier(line: &str) -> bool {
    line.contains("@llvm.nvvm.barrier")
        || (line.contains(" asm ") && ["bar.sync", "bar.red", "barrier."].iter().any(|b| line.contains(b)))
}

/// Whether the load type is at most [`MAX_LOAD_BYTES`]; `None` for types this pass leaves alone.
pub(super) fn fits(ty: &str) -> Option<bool> {
    Some(type_bytes(ty)? <= MAX_LOAD_BYTES)
}

/// The value a `phi` takes from block `label`.
pub(super) fn incoming(phi: &str, label: &str) -> Option<String> {
    phi.split('[').skip(1).find_map(|group| {
        let inner = group.split(']').next()?;
        let (value, from) = inner.rsplit_once(',')?;
        (from.trim() == label).then(|| value.trim().to_string())
    })
}

/// `phi` with the value it takes from block `label` replaced by `value`.
pub(super) fn replace_incoming(phi: &str, label: &str, value: &str) -> String {
    let mut out = String::with_capacity(phi.len());
    let mut rest = phi;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let Some(close) = rest.find(']') else { break };
        let inner = &rest[..close];
        match inner.rsplit_once(',') {
            Some((_, from)) if from.trim() == label => out.push_str(&format!(" {value}, {} ", from.trim())),
            _ => out.push_str(inner),
        }
        rest = &rest[close..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ir: &str) -> (String, usize) {
        let mut lines: Vec<Line> =
            ir.lines().enumerate().map(|(i, t)| Line { no: i + 1, text: t.to_string() }).collect();
        let n = hoist(&mut lines, &[]);
        (lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join("\n"), n)
    }

    const GUARDED: &str = r#"define ptx_kernel void @k(ptr noalias nonnull noundef readonly captures(none) %__oxide_in_x, i64 noundef %__oxide_in_x_len, i64 %i, ptr noalias nonnull %__oxide_out_y, i64 %__oxide_out_y_len) unnamed_addr #0 {
start:
  tail call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %c = icmp ult i64 %i, %__oxide_in_x_len
  br i1 %c, label %bb2, label %bb3

bb2:                                              ; preds = %start
  %p = getelementptr inbounds nuw float, ptr %__oxide_in_x, i64 %i
  %v = load float, ptr %p, align 4, !alias.scope !2, !noundef !5
  br label %bb3

bb3:                                              ; preds = %bb2, %start
  %r = phi float [ %v, %bb2 ], [ 0.000000e+00, %start ]
  store float %r, ptr %__oxide_out_y, align 4
  ret void
}"#;

    #[test]
    fn guarded_load_moves_above_the_branch() {
        let (out, n) = run(GUARDED);
        assert_eq!(n, 1);
        let expect = [
            "  %c = icmp ult i64 %i, %__oxide_in_x_len",
            "  %__oxide_hoist0_index = select i1 %c, i64 %i, i64 0",
            "  %p = getelementptr inbounds nuw float, ptr %__oxide_in_x, i64 %__oxide_hoist0_index",
            "  %v = load float, ptr %p, align 4, !alias.scope !2, !oxide.speculated !{}",
            "  %__oxide_hoist0_value = select i1 %c, float %v, float 0.000000e+00",
            "  br i1 %c, label %bb2, label %bb3",
            "",
            "bb2:                                              ; preds = %start",
            "  br label %bb3",
            "",
            "bb3:                                              ; preds = %bb2, %start",
            "  %r = phi float [ %__oxide_hoist0_value, %bb2 ], [ %__oxide_hoist0_value, %start ]",
        ]
        .join("\n");
        assert!(out.contains(&expect), "{out}");
    }

    #[test]
    fn inverted_branch_swaps_the_selects() {
        let ir = GUARDED
            .replace("%c = icmp ult i64 %i, %__oxide_in_x_len", "%c = icmp uge i64 %i, %__oxide_in_x_len")
            .replace("br i1 %c, label %bb2, label %bb3", "br i1 %c, label %bb3, label %bb2");
        let (out, n) = run(&ir);
        assert_eq!(n, 1);
        assert!(out.contains("%__oxide_hoist0_index = select i1 %c, i64 0, i64 %i"), "{out}");
        assert!(out.contains("%__oxide_hoist0_value = select i1 %c, float 0.000000e+00, float %v"), "{out}");
    }

    #[test]
    fn writable_or_output_slices_and_wide_loads_are_left_alone() {
        let not_readonly = GUARDED.replace("noundef readonly captures", "noundef captures");
        assert_eq!(run(&not_readonly), (not_readonly.clone(), 0));
        let output = GUARDED.replace("ptr %__oxide_in_x, i64 %i", "ptr %__oxide_out_y, i64 %i");
        assert_eq!(run(&output).1, 0);
        let wide = GUARDED.replace("load float", "load <8 x float>").replace("phi float", "phi <8 x float>");
        assert_eq!(run(&wide).1, 0);
        let volatile = GUARDED.replace("load float", "load volatile float");
        assert_eq!(run(&volatile).1, 0);
    }

    #[test]
    fn reads_wider_than_the_recorded_element_stay() {
        let meta = |size: u64| [MetaRecord { name: "__oxide_input_sizes_k".into(), values: vec![size] }];
        let run_with = |ir: &str, size: u64| crate::ir::tests::transformed(ir, |lines| hoist(lines, &meta(size))).1;
        // A 4-byte read of 4-byte elements moves; of 2-byte elements (a 1-element input would not
        // hold it at element 0) it stays.
        assert_eq!(run_with(GUARDED, 4), 1);
        assert_eq!(run_with(GUARDED, 2), 0);
        let vector = GUARDED.replace("load float", "load <2 x float>").replace("phi float", "phi <2 x float>");
        assert_eq!(run_with(&vector, 4), 0);
        assert_eq!(run_with(&vector, 8), 1);
        assert_eq!(type_bytes("<4 x half>"), Some(8));
        assert_eq!(type_bytes("i64"), Some(8));
    }

    #[test]
    fn an_address_computed_from_an_input_is_chosen_instead_of_the_index() {
        // A `Matrix` read: the guard checks the column, the row offset is computed before.
        let ir = GUARDED
            .replace(
                "  %c = icmp ult i64 %i, %__oxide_in_x_len",
                "  %row = getelementptr float, ptr %__oxide_in_x, i64 %i\n  %c = icmp ult i64 %i, 7",
            )
            .replace(
                "  %p = getelementptr inbounds nuw float, ptr %__oxide_in_x, i64 %i",
                "  %j = shl nuw i64 %i, 2\n  %p = getelementptr float, ptr %row, i64 %j",
            )
            .replace("%v = load", "%0 = load")
            .replace("[ %v, %bb2 ]", "[ %0, %bb2 ]");
        let (out, n) = run(&ir);
        assert_eq!(n, 1, "{out}");
        let expect = [
            "  br i1 %c, label %bb2, label %bb3",
            "",
            "bb2:                                              ; preds = %start",
            "  br label %bb3",
        ]
        .join("\n");
        assert!(out.contains(&expect), "{out}");
        let hoisted = [
            "  %j = shl nuw i64 %i, 2",
            "  %p = getelementptr float, ptr %row, i64 %j",
            "  %__oxide_hoist0_address = select i1 %c, ptr %p, ptr %__oxide_in_x",
            "  %0 = load float, ptr %__oxide_hoist0_address, align 4, !alias.scope !2, !oxide.speculated !{}",
            "  %__oxide_hoist0_value = select i1 %c, float %0, float 0.000000e+00",
        ]
        .join("\n");
        assert!(out.contains(&hoisted), "{out}");
        // A division may trap where the guard would have stopped it: not moved.
        let div = ir.replace("%j = shl nuw i64 %i, 2", "%j = udiv i64 7, %i");
        assert_eq!(run(&div).1, 0);
    }

    #[test]
    fn loads_before_any_barrier_are_left_alone() {
        let ir = GUARDED.replace("  tail call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)\n", "");
        assert_eq!(run(&ir), (ir.clone(), 0));
    }

    #[test]
    fn a_value_used_beyond_the_phi_is_left_alone() {
        let ir =
            GUARDED.replace("  br label %bb3\n", "  store float %v, ptr %__oxide_out_y, align 4\n  br label %bb3\n");
        assert_eq!(run(&ir).1, 0);
    }
}
