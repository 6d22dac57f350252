//! Post-processing of the device module's textual LLVM IR, between rustc and llc.
//!
//! Stock rustc cannot express some GPU semantics (shared memory, launch bounds,
//! convergence), so oxide adds them here by rewriting the IR text. LLVM prints every
//! global, function header and attribute group on a line of its own, which lets each
//! transform work line by line without LLVM bindings.

use std::collections::HashSet;
use std::fmt;

mod guarded_loads;

/// The rewritten module and what the rest of the pipeline needs to know about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processed {
    pub ir: String,
    /// Names of `define ptx_kernel` functions, in module order.
    pub kernels: Vec<String>,
    /// Globals moved to `addrspace(3)`.
    pub shared_statics: Vec<String>,
    /// The module declares a libdevice function (`@__nv_*`), so libdevice must be linked.
    pub needs_libdevice: bool,
    /// Records from `oxide.meta` statics, which are removed from the IR.
    pub meta: Vec<MetaRecord>,
}

/// One `#[link_section = "oxide.meta"]` static, decoded as integers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaRecord {
    pub name: String,
    pub values: Vec<u64>,
}

/// A rewrite that cannot be done, naming the symbol and the (1-based) input line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IrError {
    pub line: usize,
    pub symbol: String,
    pub message: String,
}

impl fmt::Display for IrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "device LLVM IR, line {}, `@{}`: {}", self.line, self.symbol, self.message)
    }
}

impl std::error::Error for IrError {}

fn err(line: usize, symbol: &str, message: impl Into<String>) -> IrError {
    IrError { line, symbol: symbol.to_string(), message: message.into() }
}

/// Meta records with this prefix carry `[maxntid, minctasm]` for the named kernel.
const LAUNCH_BOUNDS_PREFIX: &str = "__oxide_launch_bounds_";
/// Meta records with this prefix carry the kernel's required block `[x, y, z]`.
const BLOCK_PREFIX: &str = "__oxide_block_";
const SHARED_SECTION: &str = "oxide.shared";
const META_SECTION: &str = "oxide.meta";
const DYNAMIC_SHARED_PREFIX: &str = "__oxide_dynamic_shared";

/// Runs every transform over one whole device module.
pub fn process(ir: &str) -> Result<Processed, IrError> {
    let mut lines: Vec<Line> =
        ir.lines().enumerate().map(|(i, text)| Line { no: i + 1, text: text.to_string() }).collect();
    let kernels = find_kernels(&lines);
    let meta = extract_meta(&mut lines)?;
    let shared_statics = move_shared(&mut lines)?;
    internalize(&mut lines, &kernels);
    let bounds = launch_bounds(&meta, &kernels)?;
    add_fn_attrs(&mut lines, &bounds);
    mark_noalias_params(&mut lines);
    guarded_loads::hoist(&mut lines);
    let needs_libdevice = needs_libdevice(&lines);

    let mut out = String::with_capacity(ir.len() + 1024);
    for line in &lines {
        out.push_str(&line.text);
        out.push('\n');
    }
    Ok(Processed {
        ir: out,
        kernels,
        shared_statics,
        needs_libdevice,
        meta: meta.into_iter().map(|(record, _)| record).collect(),
    })
}

/// Release builds (`Build::panic_messages(false)`): panic paths become inline code instead of
/// calls. A panic only records its location and traps then, but as a call into core's
/// `noinline` panic functions it makes ptxas reserve registers for the call ABI in every kernel
/// with a bounds check (H200, examples/transpose with 64 x 64 tiles: 40 registers instead of
/// 32, 3 instead of 4 blocks per SM, 1.25x nvcc's time). Every attribute group of a function or
/// call that never returns trades `noinline` for `alwaysinline`; codegen's `opt` step inlines.
/// Debug builds keep the calls: there the handler formats messages through `core::fmt`.
pub fn inline_panic_paths(ir: &str) -> String {
    let mut out = String::with_capacity(ir.len() + 256);
    for line in ir.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let group = line.starts_with("attributes #");
        if group && words.contains(&"noreturn") && words.contains(&"noinline") && !words.contains(&"optnone") {
            out.push_str(&line.replacen(" noinline ", " alwaysinline ", 1));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// One input line; `no` survives removals so errors point at the input.
struct Line {
    no: usize,
    text: String,
}

// ---------------------------------------------------------------------------------
// Transforms

/// (1) Kernel entries are the functions defined with the `ptx_kernel` calling convention.
fn find_kernels(lines: &[Line]) -> Vec<String> {
    lines.iter().filter_map(|l| parse_define(&l.text)).filter(|h| h.is_kernel).map(|h| h.name).collect()
}

/// (4) Decodes and removes `oxide.meta` statics (and their `@llvm.used` entries), since
/// they only exist to carry data from the kernel source to the build.
fn extract_meta(lines: &mut Vec<Line>) -> Result<Vec<(MetaRecord, usize)>, IrError> {
    let mut records = Vec::new();
    for line in lines.iter() {
        let Some(g) = parse_global(&line.text) else {
            continue;
        };
        if g.section() != Some(META_SECTION) {
            continue;
        }
        let Some(init) = g.init else {
            return Err(err(line.no, &g.name, "an oxide.meta static needs an initializer"));
        };
        let values = meta_values(g.ty, init, g.align()).map_err(|m| err(line.no, &g.name, m))?;
        records.push((MetaRecord { name: g.name.clone(), values }, line.no));
    }
    if records.is_empty() {
        return Ok(records);
    }

    let names: HashSet<&str> = records.iter().map(|(r, _)| r.name.as_str()).collect();
    // A record that code still reads must stay defined; only its section goes.
    let mut still_used: HashSet<String> = HashSet::new();
    for line in lines.iter() {
        if is_used_list(&line.text) {
            continue;
        }
        for r in global_refs(&line.text) {
            let own_def = r.start == 0;
            if !own_def && names.contains(r.name.as_str()) {
                still_used.insert(r.name);
            }
        }
    }
    let removed: HashSet<String> = names.iter().filter(|n| !still_used.contains(**n)).map(|n| n.to_string()).collect();

    lines.retain(|l| match parse_global(&l.text) {
        Some(g) => !removed.contains(&g.name),
        None => true,
    });
    for line in lines.iter_mut() {
        let Some(mut g) = parse_global(&line.text) else {
            continue;
        };
        if still_used.contains(&g.name) {
            g.attrs.retain(|a| !a.starts_with("section "));
            line.text = g.render();
        }
    }
    drop_from_used_lists(lines, &removed);
    Ok(records)
}

/// Removes entries naming `removed` from `@llvm.used` / `@llvm.compiler.used`,
/// deleting a list that ends up empty (a zero-length appending array is pointless).
fn drop_from_used_lists(lines: &mut Vec<Line>, removed: &HashSet<String>) {
    let mut delete = HashSet::new();
    for line in lines.iter_mut() {
        if !is_used_list(&line.text) {
            continue;
        }
        let Some(mut g) = parse_global(&line.text) else {
            continue;
        };
        let (Some(init), Some((_, elem_ty))) = (g.init, array_type(g.ty)) else {
            continue;
        };
        let inner = init.trim().strip_prefix('[').and_then(|s| s.strip_suffix(']')).unwrap_or("");
        let kept: Vec<&str> = split_top(inner)
            .into_iter()
            .filter(|e| !e.is_empty())
            .filter(|e| !global_refs(e).iter().any(|r| removed.contains(&r.name)))
            .collect();
        if kept.is_empty() {
            delete.insert(line.no);
            continue;
        }
        let ty = format!("[{} x {}]", kept.len(), elem_ty);
        let init = format!("[{}]", kept.join(", "));
        g.ty = &ty;
        g.init = Some(&init);
        line.text = g.render();
    }
    lines.retain(|l| !delete.contains(&l.no));
}

/// Kernel parameters that `#[kernel]` names `__oxide_in_*` (from `&[T]`) or `__oxide_out_*`
/// (from `DisjointSlice<T>`) never alias each other: the host launcher holds `&` / `&mut`
/// borrows of distinct device buffers for the launch. Saying so lets NVPTX read inputs
/// through the non-coherent cache (`ld.global.nc`), as nvcc does for `const __restrict__`.
/// They are never null either (the launchers substitute an aligned address for empty slices),
/// which removes the null test of `Option<&mut T>` from every output access.
/// Inputs of atomics are named `__oxide_atomic_*` and left alone: threads write through them
/// and the same buffer may be passed twice, so `noalias` would be a false promise (llc-22 even
/// crashed on such a kernel that only loads).
const IN_PARAM: &str = "%__oxide_in_";
const OUT_PARAM: &str = "%__oxide_out_";

fn mark_noalias_params(lines: &mut [Line]) {
    for line in lines.iter_mut() {
        if !line.text.starts_with("define ") || !line.text.contains(" ptx_kernel ") {
            continue;
        }
        let (Some(open), Some(close)) = (line.text.find('('), find_params_close(&line.text)) else {
            continue;
        };
        let params = &line.text[open + 1..close];
        let rewritten: Vec<String> = split_top(params)
            .into_iter()
            .map(|p| {
                let p = p.trim();
                let Some(rest) = p.strip_prefix("ptr ") else { return p.to_string() };
                let name = p.rsplit(' ').next().unwrap_or("");
                let marked = name.starts_with(IN_PARAM) || name.starts_with(OUT_PARAM);
                if !marked || p.split(' ').any(|w| w == "noalias") {
                    return p.to_string();
                }
                // Non-null too: the launchers pass an aligned dangling address for empty slices.
                let nonnull = if p.split(' ').any(|w| w == "nonnull") { "" } else { "nonnull " };
                format!("ptr noalias {nonnull}{rest}")
            })
            .collect();
        line.text = format!("{}{}{}", &line.text[..open + 1], rewritten.join(", "), &line.text[close..]);
    }
}

/// The `)` closing the parameter list of a `define` line (skipping nested parentheses).
fn find_params_close(line: &str) -> Option<usize> {
    let open = line.find('(')?;
    let mut depth = 0usize;
    for (i, c) in line[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

fn is_used_list(line: &str) -> bool {
    line.starts_with("@llvm.used ") || line.starts_with("@llvm.compiler.used ")
}

/// (3) Moves `oxide.shared` statics (and `__oxide_dynamic_shared*` extern statics) to
/// shared memory, `addrspace(3)`, and makes every use see them through a generic
/// pointer, which is what the Rust code was compiled against.
fn move_shared(lines: &mut [Line]) -> Result<Vec<String>, IrError> {
    let mut names = Vec::new();
    for line in lines.iter_mut() {
        let Some(g) = parse_global(&line.text) else {
            continue;
        };
        let dynamic = g.name.starts_with(DYNAMIC_SHARED_PREFIX);
        if !dynamic && g.section() != Some(SHARED_SECTION) {
            continue;
        }
        if g.prefix.contains(&"addrspace(3)") {
            continue; // already moved
        }
        if g.kind != "global" && g.kind != "constant" {
            return Err(err(line.no, &g.name, "a shared-memory symbol must be a static"));
        }
        if g.prefix.iter().any(|t| t.starts_with("addrspace(")) {
            return Err(err(line.no, &g.name, "a shared-memory static already has an address space"));
        }
        let metadata = g.attrs.iter().filter(|a| a.starts_with('!'));
        let mut text = match g.init {
            // Shared memory cannot be initialized: each block starts with garbage.
            Some(_) if !dynamic => {
                let mut t = format!("{} = internal addrspace(3) global {} undef", g.token, g.ty);
                if let Some(align) = g.align() {
                    t.push_str(&format!(", align {align}"));
                }
                t
            }
            Some(_) => {
                return Err(err(
                    line.no,
                    &g.name,
                    "dynamic shared memory must be an `extern` static (its size is set at launch)",
                ))
            }
            // Extern: the dynamic shared memory window, sized at launch time.
            None => format!(
                "{} = external addrspace(3) global {}, align {}",
                g.token,
                g.ty,
                g.align().unwrap_or(16).max(16)
            ),
        };
        for m in metadata {
            text.push_str(", ");
            text.push_str(m);
        }
        names.push(g.name.clone());
        line.text = text;
    }
    if names.is_empty() {
        return Ok(names);
    }

    let set: HashSet<&str> = names.iter().map(String::as_str).collect();
    for line in lines.iter_mut() {
        let refs = global_refs(&line.text);
        let is_def = line.text.starts_with('@');
        let mut text = line.text.clone();
        // Right to left so earlier byte offsets stay valid.
        for r in refs.iter().rev() {
            if (is_def && r.start == 0) || !set.contains(r.name.as_str()) {
                continue;
            }
            let token = &line.text[r.start..r.end];
            text.replace_range(r.start..r.end, &format!("addrspacecast (ptr addrspace(3) {token} to ptr)"));
        }
        line.text = text;
    }
    Ok(names)
}

/// (2) Gives every definition but the kernels internal linkage, so llc emits no
/// `.visible` helpers and later `opt` passes may inline and drop them freely.
fn internalize(lines: &mut [Line], kernels: &[String]) {
    for line in lines.iter_mut() {
        if line.text.starts_with("define ") {
            if let Some(h) = parse_define(&line.text) {
                if !kernels.contains(&h.name) {
                    line.text = internalize_define(&line.text, &h);
                }
            }
        } else if let Some(mut g) = parse_global(&line.text) {
            if g.name.starts_with("llvm.") || (g.is_var() && g.init.is_none()) {
                continue; // LLVM's special globals and declarations keep their linkage
            }
            let linkage = g.prefix.iter().copied().find(|t| LINKAGES.contains(t));
            let has_comdat = g.attrs.iter().any(|a| is_comdat(a));
            if matches!(linkage, Some("internal" | "private")) && !has_comdat && !has_vis(&g.prefix) {
                continue;
            }
            let keep = if linkage == Some("private") { "private" } else { "internal" };
            let mut prefix = vec![keep];
            prefix.extend(g.prefix.iter().copied().filter(|t| !is_linkage_word(t)));
            g.prefix = prefix;
            g.attrs.retain(|a| !is_comdat(a));
            line.text = g.render();
        }
    }
}

fn internalize_define(line: &str, h: &FnHeader) -> String {
    let mut text = line.to_string();
    // Tail first: its offsets are after the header's leading keywords.
    for &(s, e) in tokens(line, h.args_end).iter().rev() {
        if is_comdat(&line[s..e]) {
            let ws = line[..s].len() - line[..s].trim_end().len();
            text.replace_range(s - ws..e, "");
        }
    }
    let after_define = "define ".len();
    let mut linkage = None;
    let mut rest = after_define;
    for (s, e) in tokens(line, after_define) {
        let word = &line[s..e];
        if !is_linkage_word(word) {
            rest = s;
            break;
        }
        if LINKAGES.contains(&word) {
            linkage = Some(word);
        }
    }
    let keep = if linkage == Some("private") { "private " } else { "internal " };
    text.replace_range(after_define..rest, keep);
    text
}

/// (5) Turns launch-bounds records into the function attributes LLVM 22's NVPTX
/// backend reads (`.maxntid` / `.minnctapersm` in the PTX).
fn launch_bounds(meta: &[(MetaRecord, usize)], kernels: &[String]) -> Result<Vec<(String, Vec<String>)>, IrError> {
    let mut out = Vec::new();
    for (record, line) in meta {
        if let Some(kernel) = record.name.strip_prefix(BLOCK_PREFIX) {
            out.push(required_block(record, *line, kernel, kernels)?);
            continue;
        }
        let Some(kernel) = record.name.strip_prefix(LAUNCH_BOUNDS_PREFIX) else {
            continue;
        };
        if !kernels.iter().any(|k| k == kernel) {
            return Err(err(
                *line,
                &record.name,
                format!("launch bounds name `{kernel}`, which is not a kernel in this module"),
            ));
        }
        let (maxntid, minctasm) = match record.values[..] {
            [t] => (t, 0),
            [t, m] => (t, m),
            _ => return Err(err(*line, &record.name, "launch bounds must be [maxntid, minctasm]")),
        };
        if !(1..=1024).contains(&maxntid) {
            return Err(err(*line, &record.name, format!("max threads per block {maxntid} is outside 1..=1024")));
        }
        let mut attrs = vec![format!("\"nvvm.maxntid\"=\"{maxntid},1,1\"")];
        if minctasm != 0 {
            attrs.push(format!("\"nvvm.minctasm\"=\"{minctasm}\""));
        }
        out.push((kernel.to_string(), attrs));
    }
    Ok(out)
}

/// `#[kernel(block(x, y, z))]`: `.reqntid x, y, z` (instead of `.maxntid`, which PTX does not
/// allow beside it); ptxas then allocates registers for exactly that many threads.
fn required_block(
    record: &MetaRecord,
    line: usize,
    kernel: &str,
    kernels: &[String],
) -> Result<(String, Vec<String>), IrError> {
    if !kernels.iter().any(|k| k == kernel) {
        return Err(err(
            line,
            &record.name,
            format!("a required block names `{kernel}`, which is not a kernel in this module"),
        ));
    }
    match record.values[..] {
        [x, y, z] if x >= 1 && y >= 1 && z >= 1 && x * y * z <= 1024 => {
            Ok((kernel.to_string(), vec![format!("\"nvvm.reqntid\"=\"{x},{y},{z}\"")]))
        }
        _ => Err(err(
            line,
            &record.name,
            format!("a required block must be [x, y, z] with at most 1024 threads, found {:?}", record.values),
        )),
    }
}

/// (6) Adds `convergent` to every definition (as clang does for CUDA), so `opt` cannot
/// move barriers and warp shuffles across divergent control flow; plus each kernel's
/// launch-bounds attributes. They go inline in the header, so shared attribute groups
/// (a group may also serve a declaration) stay untouched.
fn add_fn_attrs(lines: &mut [Line], bounds: &[(String, Vec<String>)]) {
    for line in lines.iter_mut() {
        let Some(h) = parse_define(&line.text) else {
            continue;
        };
        let toks = tokens(&line.text, h.args_end);
        let mut at = h.args_end;
        for &(s, e) in &toks {
            let word = &line.text[s..e];
            if word == "unnamed_addr" || word == "local_unnamed_addr" || word.starts_with("addrspace(") {
                at = e;
            } else {
                break;
            }
        }
        let mut attrs = String::new();
        if !toks.iter().any(|&(s, e)| &line.text[s..e] == "convergent") {
            attrs.push_str(" convergent");
        }
        for (_, extra) in bounds.iter().filter(|(k, _)| *k == h.name) {
            for a in extra {
                attrs.push(' ');
                attrs.push_str(a);
            }
        }
        line.text.insert_str(at, &attrs);
    }
}

/// (7) libdevice must be linked when the module calls any `__nv_*` math function.
fn needs_libdevice(lines: &[Line]) -> bool {
    lines.iter().any(|l| {
        l.text.starts_with("declare ") && global_refs(&l.text).first().is_some_and(|r| r.name.starts_with("__nv_"))
    })
}

// ---------------------------------------------------------------------------------
// Meta record decoding

/// Decodes a meta initializer into integers. rustc emits `[u32; N]` statics as a byte
/// string (`[8 x i8] c"..."`) or `zeroinitializer`, so the element width comes from the
/// static's alignment unless the type itself names a wider integer.
fn meta_values(ty: &str, init: &str, align: Option<u64>) -> Result<Vec<u64>, String> {
    let bytes = const_bytes(ty, init)?;
    let explicit = array_type(ty).and_then(|(_, elem)| int_bits(elem)).filter(|b| *b > 8);
    let width = match explicit {
        Some(bits) => (bits / 8) as usize,
        None => align.unwrap_or(1).min(8) as usize,
    };
    if !matches!(width, 1 | 2 | 4 | 8) || bytes.len() % width != 0 {
        return Err(format!("oxide.meta static of {} bytes is not an array of {width}-byte integers", bytes.len()));
    }
    Ok(bytes.chunks(width).map(|c| c.iter().rev().fold(0u64, |acc, &b| (acc << 8) | u64::from(b))).collect())
}

/// The little-endian bytes of a constant of integer, array or struct type.
fn const_bytes(ty: &str, init: &str) -> Result<Vec<u8>, String> {
    let (ty, init) = (ty.trim(), init.trim());
    if matches!(init, "zeroinitializer" | "undef" | "poison") {
        return Ok(vec![0; layout(ty)?.0]);
    }
    if let Some(s) = init.strip_prefix("c\"").and_then(|s| s.strip_suffix('"')) {
        return decode_c_string(s);
    }
    if let Some(bits) = int_bits(ty) {
        let v: i128 = init.parse().map_err(|_| format!("`{init}` is not an integer constant"))?;
        return Ok(v.to_le_bytes()[..(bits / 8) as usize].to_vec());
    }
    let packed = ty.starts_with("<{");
    let inner = if array_type(ty).is_some() {
        init.strip_prefix('[').and_then(|s| s.strip_suffix(']'))
    } else if packed {
        init.strip_prefix("<{").and_then(|s| s.strip_suffix("}>"))
    } else if ty.starts_with('{') {
        init.strip_prefix('{').and_then(|s| s.strip_suffix('}'))
    } else {
        None
    };
    let Some(inner) = inner else {
        return Err(format!("unsupported constant `{init}` of type `{ty}`"));
    };
    let mut out = Vec::new();
    for part in split_top(inner).into_iter().filter(|p| !p.is_empty()) {
        let (t, v) = split_type(part);
        if !packed {
            let align = layout(t)?.1;
            out.resize(out.len().next_multiple_of(align), 0);
        }
        out.extend(const_bytes(t, v)?);
    }
    if !packed {
        out.resize(layout(ty)?.0, 0); // tail padding
    }
    Ok(out)
}

/// (size, align) in bytes of an integer/array/struct type on nvptx64.
fn layout(ty: &str) -> Result<(usize, usize), String> {
    let ty = ty.trim();
    if let Some(bits) = int_bits(ty) {
        let size = (bits / 8) as usize;
        return Ok((size, size.clamp(1, 8)));
    }
    if let Some((n, elem)) = array_type(ty) {
        let (size, align) = layout(elem)?;
        return Ok((size * n, align));
    }
    let packed = ty.strip_prefix("<{").and_then(|s| s.strip_suffix("}>"));
    let plain = ty.strip_prefix('{').and_then(|s| s.strip_suffix('}'));
    let Some(fields) = packed.or(plain) else {
        return Err(format!("unsupported type `{ty}` in an oxide.meta static"));
    };
    let (mut size, mut max_align) = (0usize, 1usize);
    for f in split_top(fields).into_iter().filter(|f| !f.is_empty()) {
        let (s, a) = layout(f)?;
        let a = if packed.is_some() { 1 } else { a };
        size = size.next_multiple_of(a) + s;
        max_align = max_align.max(a);
    }
    Ok((size.next_multiple_of(max_align), max_align))
}

/// Bit width of `iN` when N is a whole number of bytes.
fn int_bits(ty: &str) -> Option<u32> {
    let bits: u32 = ty.trim().strip_prefix('i')?.parse().ok()?;
    (bits % 8 == 0 && (8..=128).contains(&bits)).then_some(bits)
}

/// `[N x T]` → (N, T).
fn array_type(ty: &str) -> Option<(usize, &str)> {
    let inner = ty.trim().strip_prefix('[')?.strip_suffix(']')?;
    let (n, elem) = inner.split_once(" x ")?;
    Some((n.trim().parse().ok()?, elem.trim()))
}

/// LLVM string constants escape bytes as `\XX` and a backslash as `\\`.
fn decode_c_string(s: &str) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
        } else if b.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else {
            let hex = s.get(i + 1..i + 3).ok_or("truncated escape in string constant")?;
            let v = u8::from_str_radix(hex, 16).map_err(|_| format!("bad escape `\\{hex}`"))?;
            out.push(v);
            i += 3;
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------
// Lexing helpers for LLVM's one-line-per-item text form

const LINKAGES: &[&str] = &[
    "private",
    "internal",
    "available_externally",
    "linkonce",
    "weak",
    "common",
    "appending",
    "extern_weak",
    "linkonce_odr",
    "weak_odr",
    "external",
];

/// Linkage, preemption, visibility and DLL storage: the words internalization replaces.
/// Visibility must go because a local symbol with `hidden` is invalid IR.
fn is_linkage_word(w: &str) -> bool {
    LINKAGES.contains(&w)
        || matches!(w, "dso_local" | "dso_preemptable" | "default" | "hidden" | "protected" | "dllimport" | "dllexport")
}

fn has_vis(prefix: &[&str]) -> bool {
    prefix.iter().any(|t| matches!(*t, "hidden" | "protected"))
}

fn is_comdat(tok: &str) -> bool {
    tok == "comdat" || tok.starts_with("comdat(")
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'$' | b'.' | b'_')
}

/// Index just past the string whose opening quote is at `i`. LLVM escapes an embedded
/// quote as `\22`, so the next quote always closes it.
fn skip_string(b: &[u8], i: usize) -> usize {
    match b[i + 1..].iter().position(|&c| c == b'"') {
        Some(p) => i + p + 2,
        None => b.len(),
    }
}

/// Index just past the bracket group opening at `i`, skipping strings.
fn skip_group(b: &[u8], i: usize) -> usize {
    let mut depth = 0i32;
    let mut j = i;
    while j < b.len() {
        match b[j] {
            b'"' => {
                j = skip_string(b, j);
                continue;
            }
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b')' | b']' | b'}' | b'>' => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
        j += 1;
    }
    b.len()
}

/// Splits at commas outside brackets and strings, trimming each part.
fn split_top(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let (mut depth, mut start, mut i) = (0i32, 0usize, 0usize);
    let mut parts = Vec::new();
    while i < b.len() {
        match b[i] {
            b'"' => {
                i = skip_string(b, i);
                continue;
            }
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b')' | b']' | b'}' | b'>' => depth -= 1,
            b',' if depth == 0 => {
                parts.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(s[start..].trim());
    parts
}

/// Whitespace-separated tokens from `from` on, strings and bracket groups kept whole.
fn tokens(s: &str, from: usize) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = from;
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() || b[i] == b';' {
            return out;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            i = match b[i] {
                b'"' => skip_string(b, i),
                b'(' | b'[' | b'<' => skip_group(b, i),
                _ => i + 1,
            };
        }
        out.push((start, i));
    }
}

/// Splits a leading type off `s`: `[4 x i8] c"..."` → (`[4 x i8]`, `c"..."`).
fn split_type(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    let b = s.as_bytes();
    let end = match b.first() {
        Some(b'[' | b'{' | b'<') => skip_group(b, 0),
        Some(b'%') if b.get(1) == Some(&b'"') => skip_string(b, 1),
        _ => {
            let e = b.iter().position(|c| c.is_ascii_whitespace() || *c == b',').unwrap_or(b.len());
            let rest = s[e..].trim_start();
            match rest.strip_prefix("addrspace(") {
                Some(r) if &s[..e] == "ptr" => {
                    let close = r.find(')').map_or(r.len(), |p| p + 1);
                    s.len() - r.len() + close
                }
                _ => e,
            }
        }
    };
    (&s[..end], s[end..].trim_start())
}

/// A `@name` token: byte range in the line and the name without `@` or quotes.
#[derive(Debug)]
struct GlobalRef {
    start: usize,
    end: usize,
    name: String,
}

/// Every `@name` in a line, ignoring string literals and the trailing comment.
fn global_refs(line: &str) -> Vec<GlobalRef> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b';' => break,
            b'"' => i = skip_string(b, i),
            b'@' if b.get(i + 1) == Some(&b'"') => {
                let end = skip_string(b, i + 1);
                let inner_end = if b[end - 1] == b'"' && end > i + 2 { end - 1 } else { end };
                out.push(GlobalRef { start: i, end, name: line[i + 2..inner_end].to_string() });
                i = end;
            }
            b'@' => {
                let s = i + 1;
                let mut e = s;
                while e < b.len() && is_ident_byte(b[e]) {
                    e += 1;
                }
                if e > s {
                    out.push(GlobalRef { start: i, end: e, name: line[s..e].to_string() });
                }
                i = e;
            }
            _ => i += 1,
        }
    }
    out
}

/// A module-level `@name = ...` line split into its parts.
struct Global<'a> {
    /// `@name` as written (possibly quoted).
    token: &'a str,
    name: String,
    /// Words between `=` and the kind: linkage, visibility, `unnamed_addr`, `addrspace(N)`...
    prefix: Vec<&'a str>,
    /// `global`, `constant`, `alias` or `ifunc`.
    kind: &'a str,
    ty: &'a str,
    /// None for a declaration.
    init: Option<&'a str>,
    /// `section "x"`, `align 4`, `comdat`, `!dbg !3`, ... (an alias's aliasee too).
    attrs: Vec<&'a str>,
}

impl Global<'_> {
    fn is_var(&self) -> bool {
        self.kind == "global" || self.kind == "constant"
    }

    fn section(&self) -> Option<&str> {
        self.attrs.iter().find_map(|a| a.strip_prefix("section ")?.trim().strip_prefix('"')?.strip_suffix('"'))
    }

    fn align(&self) -> Option<u64> {
        self.attrs.iter().find_map(|a| a.strip_prefix("align ")?.trim().parse().ok())
    }

    fn render(&self) -> String {
        let mut s = format!("{} =", self.token);
        for w in &self.prefix {
            s.push(' ');
            s.push_str(w);
        }
        s.push_str(&format!(" {} {}", self.kind, self.ty));
        if let Some(init) = self.init {
            s.push(' ');
            s.push_str(init);
        }
        for a in &self.attrs {
            s.push_str(", ");
            s.push_str(a);
        }
        s
    }
}

fn parse_global(line: &str) -> Option<Global<'_>> {
    if !line.starts_with('@') {
        return None;
    }
    let first = global_refs(line).into_iter().next()?;
    let code_end = tokens(line, 0).last().map_or(line.len(), |t| t.1);
    let mut rest = line[first.end..code_end].trim_start().strip_prefix('=')?.trim_start();
    let mut prefix = Vec::new();
    let kind = loop {
        let end = rest.find(char::is_whitespace)?;
        let word = &rest[..end];
        rest = rest[end..].trim_start();
        if matches!(word, "global" | "constant" | "alias" | "ifunc") {
            break word;
        }
        prefix.push(word);
    };
    let mut parts = split_top(rest).into_iter();
    let (ty, init) = split_type(parts.next()?);
    Some(Global {
        token: &line[first.start..first.end],
        name: first.name,
        prefix,
        kind,
        ty,
        init: (!init.is_empty()).then_some(init),
        attrs: parts.collect(),
    })
}

/// The parts of a `define` header the transforms need.
struct FnHeader {
    name: String,
    /// Byte index just past the argument list's `)`.
    args_end: usize,
    is_kernel: bool,
}

fn parse_define(line: &str) -> Option<FnHeader> {
    let lead = line.strip_prefix("define ")?;
    // Return attributes and types never contain `@`, so the first one names the function.
    let name = global_refs(line).into_iter().next()?;
    let b = line.as_bytes();
    if b.get(name.end) != Some(&b'(') {
        return None;
    }
    let is_kernel = lead[..name.start - "define ".len()].split_whitespace().any(|w| w == "ptx_kernel");
    Some(FnHeader { args_end: skip_group(b, name.end), name: name.name, is_kernel })
}

// ---------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    type TestResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

    const HEAD: &str = "target datalayout = \"e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64\"\ntarget triple = \"nvptx64-nvidia-cuda\"\n";

    fn fixture() -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ir/rustc_1_96_sample.ll");
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn run(ir: &str) -> Processed {
        process(ir).unwrap_or_else(|e| panic!("{e}"))
    }

    fn line_of<'a>(ir: &'a str, start: &str) -> &'a str {
        ir.lines().find(|l| l.starts_with(start)).unwrap_or_else(|| panic!("no line starting with {start:?} in\n{ir}"))
    }

    #[test]
    fn kernels_in_order_including_quoted_names() {
        let ir = "define ptx_kernel void @b() {\n  ret void\n}\n\
                  define internal void @helper() {\n  ret void\n}\n\
                  define ptx_kernel void @\"a$b\"(ptr noundef captures(none) %p) unnamed_addr #0 {\n  ret void\n}\n";
        assert_eq!(run(ir).kernels, ["b", "a$b"]);
    }

    #[test]
    fn internalizes_definitions_only() {
        let ir = "$f = comdat any\n\
                  @g = global i32 1, align 4\n\
                  @h = weak_odr hidden global i32 2, comdat, align 4\n\
                  @p = private unnamed_addr constant [2 x i8] c\"hi\", align 1\n\
                  @d = external global i32\n\
                  @tl = dso_local thread_local(initialexec) global i32 0\n\
                  define linkonce_odr hidden void @f() unnamed_addr comdat #0 {\n  ret void\n}\n\
                  define dso_local void @e() comdat($f) {\n  ret void\n}\n\
                  define private void @q() {\n  ret void\n}\n\
                  declare hidden void @ext()\n\
                  define ptx_kernel void @k() {\n  ret void\n}\n";
        let out = run(ir).ir;
        assert_eq!(line_of(&out, "@g "), "@g = internal global i32 1, align 4");
        assert_eq!(line_of(&out, "@h "), "@h = internal global i32 2, align 4");
        assert_eq!(line_of(&out, "@p "), "@p = private unnamed_addr constant [2 x i8] c\"hi\", align 1");
        assert_eq!(line_of(&out, "@d "), "@d = external global i32");
        assert_eq!(line_of(&out, "@tl "), "@tl = internal thread_local(initialexec) global i32 0");
        assert_eq!(line_of(&out, "define internal void @f"), "define internal void @f() unnamed_addr convergent #0 {");
        assert_eq!(line_of(&out, "define internal void @e"), "define internal void @e() convergent {");
        assert_eq!(line_of(&out, "define private"), "define private void @q() convergent {");
        assert_eq!(line_of(&out, "declare"), "declare hidden void @ext()");
        assert_eq!(line_of(&out, "define ptx_kernel"), "define ptx_kernel void @k() convergent {");
    }

    #[test]
    fn shared_static_moves_and_uses_are_cast() {
        let ir = "@X = internal unnamed_addr global [1024 x i8] zeroinitializer, section \"oxide.shared\", align 4\n\
                  @X2 = internal global [4 x i8] zeroinitializer, align 4\n\
                  @\"q$LT$x$GT$\" = internal global [8 x i8] zeroinitializer, section \"oxide.shared\", align 8\n\
                  @s = private constant [3 x i8] c\"@X;\"\n\
                  define ptx_kernel void @k() {\n\
                  ; load @X here\n  \
                  %a = getelementptr inbounds nuw float, ptr @X, i64 3\n  \
                  store float 1.0, ptr getelementptr inbounds (i8, ptr @X, i64 16), align 4\n  \
                  store i32 1, ptr @X2, align 4\n  \
                  store i64 1, ptr @\"q$LT$x$GT$\", align 8 ; @X\n  \
                  ret void\n}\n";
        let p = run(ir);
        assert_eq!(p.shared_statics, ["X", "q$LT$x$GT$"]);
        let out = &p.ir;
        assert_eq!(line_of(out, "@X "), "@X = internal addrspace(3) global [1024 x i8] undef, align 4");
        assert_eq!(line_of(out, "@\"q"), "@\"q$LT$x$GT$\" = internal addrspace(3) global [8 x i8] undef, align 8");
        let cast = "addrspacecast (ptr addrspace(3) @X to ptr)";
        assert!(out.contains(&format!("%a = getelementptr inbounds nuw float, ptr {cast}, i64 3")));
        assert!(out.contains(&format!("ptr getelementptr inbounds (i8, ptr {cast}, i64 16)")));
        assert!(out.contains("store i32 1, ptr @X2, align 4"), "{out}");
        assert!(out.contains("ptr addrspacecast (ptr addrspace(3) @\"q$LT$x$GT$\" to ptr), align 8 ; @X"));
        assert!(out.contains("; load @X here") && out.contains("c\"@X;\""));
    }

    #[test]
    fn dynamic_shared_declaration() {
        let ir = "@__oxide_dynamic_shared = external local_unnamed_addr global [0 x i8]\n\
                  define ptx_kernel void @k() {\n  store i8 0, ptr @__oxide_dynamic_shared, align 1\n  ret void\n}\n";
        let p = run(ir);
        assert_eq!(p.shared_statics, ["__oxide_dynamic_shared"]);
        assert_eq!(
            line_of(&p.ir, "@__oxide"),
            "@__oxide_dynamic_shared = external addrspace(3) global [0 x i8], align 16"
        );
        assert!(p.ir.contains("ptr addrspacecast (ptr addrspace(3) @__oxide_dynamic_shared to ptr), align 1"));
    }

    #[test]
    fn dynamic_shared_with_initializer_is_an_error() {
        let ir = "@__oxide_dynamic_shared = global [4 x i8] zeroinitializer\n";
        let e = process(ir).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("line 1") && e.contains("@__oxide_dynamic_shared") && e.contains("extern"), "{e}");
    }

    #[test]
    fn meta_records_decoded_and_removed() {
        let ir = "@__oxide_launch_bounds_k = constant [8 x i8] c\"\\00\\01\\00\\00\\02\\00\\00\\00\", section \"oxide.meta\", align 4\n\
                  @m64 = constant [24 x i8] c\"\\01\\00\\00\\00\\00\\00\\00\\00\\02\\00\\00\\00\\01\\00\\00\\00\\03\\00\\00\\00\\00\\00\\00\\00\", section \"oxide.meta\", align 8\n\
                  @zero = constant [16 x i8] zeroinitializer, section \"oxide.meta\", align 4\n\
                  @ints = constant [2 x i32] [i32 7, i32 -1], section \"oxide.meta\", align 4\n\
                  @packed = constant <{ [4 x i8], [4 x i8] }> <{ [4 x i8] c\"\\05\\00\\00\\00\", [4 x i8] zeroinitializer }>, section \"oxide.meta\", align 4\n\
                  @keep = global i32 0\n\
                  @llvm.used = appending global [6 x ptr] [ptr @__oxide_launch_bounds_k, ptr @m64, ptr @zero, ptr @ints, ptr @keep, ptr @packed], section \"llvm.metadata\"\n\
                  @llvm.compiler.used = appending global [1 x ptr] [ptr @zero], section \"llvm.metadata\"\n\
                  define ptx_kernel void @k() {\n  ret void\n}\n";
        let p = run(ir);
        let rec = |name: &str, values: &[u64]| MetaRecord { name: name.to_string(), values: values.to_vec() };
        assert_eq!(
            p.meta,
            [
                rec("__oxide_launch_bounds_k", &[256, 2]),
                rec("m64", &[1, 0x1_0000_0002, 3]),
                rec("zero", &[0, 0, 0, 0]),
                rec("ints", &[7, 0xffff_ffff]),
                rec("packed", &[5, 0]),
            ]
        );
        assert!(!p.ir.contains("oxide.meta") && !p.ir.contains("llvm.compiler.used"), "{}", p.ir);
        assert_eq!(
            line_of(&p.ir, "@llvm.used"),
            "@llvm.used = appending global [1 x ptr] [ptr @keep], section \"llvm.metadata\""
        );
    }

    #[test]
    fn meta_read_by_code_stays_defined() {
        let ir = "@m = constant [4 x i8] c\"\\01\\00\\00\\00\", section \"oxide.meta\", align 4\n\
                  @llvm.used = appending global [1 x ptr] [ptr @m], section \"llvm.metadata\"\n\
                  define ptx_kernel void @k(ptr %o) {\n  %v = load i32, ptr @m, align 4\n  store i32 %v, ptr %o\n  ret void\n}\n";
        let p = run(ir);
        assert_eq!(p.meta[0].values, [1]);
        assert_eq!(line_of(&p.ir, "@m "), "@m = internal constant [4 x i8] c\"\\01\\00\\00\\00\", align 4");
        assert!(p.ir.contains("@llvm.used = appending global [1 x ptr] [ptr @m]"));
    }

    #[test]
    fn slice_params_of_kernels_become_noalias() -> TestResult {
        let ir = "define ptx_kernel void @k(float %a, ptr noundef readonly captures(none) %__oxide_in_x, i64 %__oxide_in_x_len, ptr noundef %__oxide_out_y, i64 %n, ptr %raw, ptr noundef %__oxide_atomic_c, i64 %__oxide_atomic_c_len) unnamed_addr #0 {\n\
                  ret void\n}\n\
                  define void @helper(ptr %__oxide_in_x) #0 {\n  ret void\n}\n";
        let out = process(ir)?.ir;
        assert!(
            out.contains("ptr noalias nonnull noundef readonly captures(none) %__oxide_in_x, i64 %__oxide_in_x_len"),
            "{out}"
        );
        assert!(out.contains("ptr noalias nonnull noundef %__oxide_out_y"), "{out}");
        assert!(out.contains("ptr %raw, "), "unmarked pointers stay as they are: {out}");
        assert!(out.contains(", ptr noundef %__oxide_atomic_c, "), "inputs of atomics may alias: {out}");
        assert!(out.contains("define internal void @helper(ptr %__oxide_in_x)"), "only kernels: {out}");
        Ok(())
    }

    #[test]
    fn launch_bounds_become_nvvm_attributes() {
        let ir = "@__oxide_launch_bounds_k = constant [2 x i32] [i32 128, i32 0], section \"oxide.meta\", align 4\n\
                  define ptx_kernel void @k(ptr %p) unnamed_addr #0 {\n  ret void\n}\n\
                  @__oxide_launch_bounds_j = constant [2 x i32] [i32 64, i32 3], section \"oxide.meta\", align 4\n\
                  define ptx_kernel void @j(ptr %p) local_unnamed_addr convergent {\n  ret void\n}\n";
        let out = run(ir).ir;
        assert_eq!(
            line_of(&out, "define ptx_kernel void @k"),
            "define ptx_kernel void @k(ptr %p) unnamed_addr convergent \"nvvm.maxntid\"=\"128,1,1\" #0 {"
        );
        assert_eq!(
            line_of(&out, "define ptx_kernel void @j"),
            "define ptx_kernel void @j(ptr %p) local_unnamed_addr \"nvvm.maxntid\"=\"64,1,1\" \"nvvm.minctasm\"=\"3\" convergent {"
        );
    }

    #[test]
    fn launch_bounds_for_unknown_kernel_is_an_error() {
        let ir = "define ptx_kernel void @k() {\n  ret void\n}\n\
                  @__oxide_launch_bounds_nope = constant [2 x i32] [i32 128, i32 0], section \"oxide.meta\", align 4\n";
        let e = process(ir).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("line 4") && e.contains("@__oxide_launch_bounds_nope") && e.contains("`nope`"), "{e}");
    }

    #[test]
    fn launch_bounds_out_of_range_is_an_error() {
        let ir = "define ptx_kernel void @k() {\n  ret void\n}\n\
                  @__oxide_launch_bounds_k = constant [2 x i32] [i32 2048, i32 0], section \"oxide.meta\", align 4\n";
        assert!(process(ir).is_err());
    }

    #[test]
    fn convergent_goes_before_attribute_groups_with_tricky_signatures() {
        let ir = "define internal noundef range(i32 0, 5) i32 @f(ptr noundef align 4 dereferenceable(8) %p, { i32, i32 } %s) unnamed_addr #3 !dbg !7 {\n  ret i32 0\n}\n";
        assert_eq!(
            line_of(&run(ir).ir, "define"),
            "define internal noundef range(i32 0, 5) i32 @f(ptr noundef align 4 dereferenceable(8) %p, { i32, i32 } %s) unnamed_addr convergent #3 !dbg !7 {"
        );
    }

    #[test]
    fn libdevice_detection() {
        assert!(run("declare float @__nv_expf(float)\n").needs_libdevice);
        assert!(!run("declare float @llvm.exp.f32(float)\n; @__nv_expf\n").needs_libdevice);
    }

    #[test]
    fn real_rustc_module() {
        let p = run(&fixture());
        assert_eq!(p.kernels, ["saxpy", "tiled"]);
        assert_eq!(
            p.shared_statics,
            ["_RNvCs1vfIJE2lv8x_8irsample4TILE", "_RNvCs1vfIJE2lv8x_8irsample5TILE2", "__oxide_dynamic_shared"]
        );
        assert!(p.needs_libdevice);
        assert_eq!(p.meta.len(), 3);
        assert_eq!(p.meta[0].name, "__oxide_launch_bounds_saxpy");
        assert_eq!(p.meta[0].values, [256, 2]);
        assert_eq!(p.meta[1].values, [1, 0x1_0000_0002, 3]);
        assert_eq!(p.meta[2].values, [0; 4]);
        assert!(!p.ir.contains("oxide.meta") && !p.ir.contains("@llvm.used"));
        assert!(p.ir.contains(
            "define internal fastcc void @_RNvNtCsekQVkFLoVwc_4core9panicking9panic_fmt() unnamed_addr convergent #5 {"
        ));
        assert!(p.ir.contains("\"nvvm.maxntid\"=\"256,1,1\" \"nvvm.minctasm\"=\"2\" #0 {"));
    }

    /// `<venv>/lib/python3*/site-packages/nvidia/cu13/<rel>` in ci/setup.sh's venv
    /// (`OXIDE_VENV`, default `~/.cache/oxide/venv`).
    fn in_venv(rel: &str) -> Option<PathBuf> {
        let venv = std::env::var_os("OXIDE_VENV")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/oxide/venv")))?;
        std::fs::read_dir(venv.join("lib"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().join("site-packages/nvidia/cu13").join(rel))
            .find(|p| p.is_file())
    }

    fn find_tool(name: &str) -> Option<PathBuf> {
        let explicit = (name == "ptxas").then(|| std::env::var_os("OXIDE_PTXAS").map(PathBuf::from)).flatten();
        let on_path = std::env::var_os("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .map(|d| d.join(name));
        explicit.into_iter().chain(on_path).find(|p| p.is_file()).or_else(|| in_venv(&format!("bin/{name}")))
    }

    fn tool_ok(cmd: &mut Command) -> String {
        let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
        assert!(out.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Compiles processed IR with llc-22 (and checks it with ptxas when present).
    fn compile(name: &str, ir: &str) -> TestResult<Option<String>> {
        let Some(llc) = find_tool("llc-22") else {
            eprintln!("skipped: llc-22 not found on PATH (apt-get install llvm-22)");
            return Ok(None);
        };
        let dir = std::env::temp_dir().join(format!("oxide-ir-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let (ll, ptx) = (dir.join("in.ll"), dir.join("out.ptx"));
        std::fs::write(&ll, ir)?;
        tool_ok(Command::new(&llc).arg("-mcpu=sm_90").arg(&ll).arg("-o").arg(&ptx));
        let text = std::fs::read_to_string(&ptx)?;
        if let Some(opt) = find_tool("opt-22") {
            // The `opt` passes after us must accept the module too.
            tool_ok(Command::new(opt).args(["-passes=default<O3>", "-disable-output"]).arg(&ll));
        }
        match find_tool("ptxas") {
            Some(ptxas) => {
                // -c: libdevice (`__nv_*`) is linked by a later stage, so externs may remain.
                tool_ok(Command::new(ptxas).args(["-c", "-arch=sm_90", "-o"]).arg(dir.join("out.cubin")).arg(&ptx));
            }
            None => eprintln!("ptxas not found: PTX not assembled"),
        }
        let _ = std::fs::remove_dir_all(&dir);
        Ok(Some(text))
    }

    #[test]
    fn real_module_compiles_with_llc() -> TestResult {
        let p = run(&fixture());
        let Some(ptx) = compile("real", &p.ir)? else {
            return Ok(());
        };
        for want in [
            ".visible .entry saxpy(",
            ".visible .entry tiled(",
            ".shared .align 4 .b8 _RNvCs1vfIJE2lv8x_8irsample4TILE[1024]",
            ".extern .shared .align 16 .b8 __oxide_dynamic_shared[]",
            "st.shared",
            "ld.shared",
            ".maxntid 256, 1, 1",
            ".minnctapersm 2",
        ] {
            assert!(ptx.contains(want), "PTX lacks `{want}`:\n{ptx}");
        }
        assert!(!ptx.contains(".visible .func"), "{ptx}");
        Ok(())
    }

    /// The stage after this one: link libdevice for `__nv_*`, internalize, optimize.
    #[test]
    fn real_module_links_libdevice() -> TestResult {
        let p = run(&fixture());
        let libdevice = std::env::var_os("OXIDE_LIBDEVICE")
            .map(PathBuf::from)
            .filter(|p| p.is_file())
            .or_else(|| in_venv("nvvm/libdevice/libdevice.10.bc"));
        let (Some(link), Some(opt), Some(libdevice)) = (find_tool("llvm-link-22"), find_tool("opt-22"), libdevice)
        else {
            eprintln!("skipped: needs llvm-link-22, opt-22 and libdevice.10.bc (pip nvidia-cuda-nvcc)");
            return Ok(());
        };
        let dir = std::env::temp_dir().join(format!("oxide-ir-{}-libdevice", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let (ll, linked, optimized) = (dir.join("in.ll"), dir.join("linked.bc"), dir.join("opt.ll"));
        std::fs::write(&ll, &p.ir)?;
        tool_ok(Command::new(link).arg(&ll).arg(&libdevice).arg("-o").arg(&linked));
        tool_ok(
            Command::new(opt)
                .args(["-S", "-passes=internalize,default<O3>"])
                .arg(format!("--internalize-public-api-list={}", p.kernels.join(",")))
                .arg(&linked)
                .arg("-o")
                .arg(&optimized),
        );
        let optimized = std::fs::read_to_string(&optimized)?;
        let _ = std::fs::remove_dir_all(&dir);
        assert!(!optimized.contains("declare float @__nv_expf"), "libdevice not linked");
        let Some(ptx) = compile("libdevice", &optimized)? else {
            return Ok(());
        };
        assert!(ptx.contains(".maxntid 256, 1, 1") && ptx.contains("ld.shared"), "{ptx}");
        Ok(())
    }

    #[test]
    fn internalized_handwritten_module_compiles() -> TestResult {
        let ir = format!(
            "{HEAD}$f = comdat any\n\
             @g = weak_odr hidden global i32 1, comdat($f), align 4\n\
             @S = internal global [64 x i8] zeroinitializer, section \"oxide.shared\", align 16\n\
             define linkonce_odr hidden i32 @f(ptr %p) unnamed_addr comdat #0 {{\n  %v = load i32, ptr %p\n  ret i32 %v\n}}\n\
             define ptx_kernel void @k(ptr %o) #0 {{\n  %a = call i32 @f(ptr @g)\n  store i32 %a, ptr getelementptr inbounds (i8, ptr @S, i64 4)\n  \
             call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)\n  %b = call i32 @f(ptr @S)\n  store i32 %b, ptr %o\n  ret void\n}}\n\
             declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32) #1\n\
             attributes #0 = {{ nounwind }}\nattributes #1 = {{ convergent nounwind }}\n"
        );
        let p = run(&ir);
        let Some(ptx) = compile("hand", &p.ir)? else {
            return Ok(());
        };
        assert!(ptx.contains(".visible .entry k(") && ptx.contains(".shared .align 16 .b8 S[64]"), "{ptx}");
        assert!(!ptx.contains(".visible .func") && !ptx.contains(".visible .global"), "{ptx}");
        Ok(())
    }

    #[test]
    fn panic_paths_trade_noinline_for_alwaysinline() {
        let ir = "define internal void @panic_fmt() #6 {\n  call void @f() #8\n}\n\
                  attributes #6 = { cold noinline noreturn nounwind \"target-cpu\"=\"sm_90\" }\n\
                  attributes #7 = { cold noreturn nounwind memory(inaccessiblemem: write) }\n\
                  attributes #8 = { noinline noreturn nounwind }\n\
                  attributes #9 = { noinline nounwind }\n\
                  attributes #10 = { noinline noreturn nounwind optnone }\n";
        let out = inline_panic_paths(ir);
        assert!(
            out.contains("attributes #6 = { cold alwaysinline noreturn nounwind \"target-cpu\"=\"sm_90\" }"),
            "{out}"
        );
        assert!(out.contains("attributes #8 = { alwaysinline noreturn nounwind }"), "{out}");
        // Returning functions, intrinsics' groups and optnone (which needs noinline) stay.
        for kept in
            ["#7 = { cold noreturn", "#9 = { noinline nounwind }", "#10 = { noinline noreturn nounwind optnone }"]
        {
            assert!(out.contains(kept), "{kept}: {out}");
        }
    }
}
