//! Post-processing of the device module's textual LLVM IR, between rustc and llc.
//!
//! Stock rustc cannot express some GPU semantics (shared memory, launch bounds,
//! convergence), so oxide adds them here by rewriting the IR text. LLVM prints every
//! global, function header and attribute group on a line of its own, which lets each
//! transform work line by line without LLVM bindings.
//!
//! Each transform lives in a file of its own under `ir/`, beside its tests; [`process`] is the
//! ordered list of them. [`inline_panic_paths`] runs after it, in release builds only. [`run`]
//! is the pipeline stage: rustc's IR file in, the rewritten IR file out.

use crate::error::{Error, ErrorKind};
use std::fmt;
use std::path::{Path, PathBuf};

mod barrier_loops;
mod block_ranges;
mod checked_chains;
mod clamped_indices;
mod contractable_ops;
mod distance_exits;
mod early_checks;
mod early_loads;
mod equal_arms;
mod extents_first;
mod float_atomics;
mod fn_attrs;
mod grid_constants;
mod guarded_epilogs;
mod guarded_loads;
mod internalize;
mod kernel_bodies;
mod kernel_entries;
mod late_combines;
mod launch_bounds;
mod libdevice;
mod merged_barriers;
mod meta_records;
mod narrow_arith;
mod narrow_compares;
mod narrow_counters;
mod narrow_indices;
mod noalias_inputs;
mod offset_checks;
mod one_d_copies;
mod ordered_ranges;
mod panic_paths;
mod predicated_loads;
mod private_array_loops;
mod saturating_casts;
mod shared_bases;
mod shared_memory;
mod speculated_blocks;
mod versioned_checks;
mod wide_halves;

pub(crate) use one_d_copies::without_identical_copies;
pub use one_d_copies::SUFFIX as ONE_D_SUFFIX;
pub use panic_paths::inline_panic_paths;
pub use versioned_checks::SUFFIX as UNCHECKED_SUFFIX;

pub(crate) struct Input<'a> {
    /// rustc's LLVM IR of the whole device module.
    pub raw: &'a Path,
    pub module: &'a str,
    /// The kernels module as the build script names it, for the warning when it has no kernels.
    pub module_file: &'a Path,
    /// Debug builds keep the panic paths that format a message (see `ir/panic_paths.rs`).
    pub panic_messages: bool,
    /// Mark the kernels' float multiplies and adds fusable (`ir/contractable_ops.rs`), as
    /// nvcc's `--fmad=true`.
    pub fmad: bool,
    /// Where the rewritten IR is written (`<module>.ll`).
    pub work_dir: &'a Path,
}

/// The IR stage's result: the rewritten module, written to `path` for codegen.
pub(crate) struct Module {
    pub processed: Processed,
    pub path: PathBuf,
    raw: PathBuf,
    warnings: Vec<String>,
}

impl crate::Traced for Module {
    fn trace(&self) -> crate::Trace {
        crate::Trace {
            commands: vec![],
            inputs: vec![self.raw.clone()],
            outputs: vec![self.path.clone()],
            warnings: self.warnings.clone(),
        }
    }
}

/// Reads rustc's IR, rewrites it ([`process`], and [`inline_panic_paths`] without panic
/// messages) and writes the result.
pub(crate) fn run(input: &Input<'_>) -> Result<Module, Error> {
    let raw =
        std::fs::read_to_string(input.raw).map_err(|e| Error::io(format!("reading {}", input.raw.display()), e))?;
    let mut processed =
        process(&raw).map_err(|e| Error::new(ErrorKind::Ir, format!("kernels module `{}`: {e}", input.module)))?;
    if input.fmad {
        processed.ir = contractable(&processed.ir);
    }
    if !input.panic_messages {
        processed.ir = inline_panic_paths(&processed.ir);
        add_copies(&mut processed, one_d_copies::add);
        add_copies(&mut processed, versioned_checks::add);
    }
    let mut warnings = Vec::new();
    if processed.kernels.is_empty() {
        warnings.push(format!("{} defines no #[kernel] functions", input.module_file.display()));
    }
    for kernel in out_of_line_bodies(&raw) {
        warnings.push(format!(
            "kernel `{kernel}`: its body is too large for LLVM's inliner and stays a function of its own, \
             so its arguments pass through local memory and oxide's kernel passes skip it; \
             put `#[inline(always)]` on `fn {kernel}` in {}",
            input.module_file.display()
        ));
    }
    let work = input.work_dir;
    std::fs::create_dir_all(work).map_err(|e| Error::io(format!("creating {}", work.display()), e))?;
    let path = work.join(format!("{}.ll", input.module));
    std::fs::write(&path, &processed.ir).map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
    Ok(Module { processed, path, raw: input.raw.to_path_buf(), warnings })
}

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
    /// Some loop is marked for full unrolling (`ir/private_array_loops.rs`): the optimiser must
    /// run the unroller before llc.
    pub unroll_private_loops: bool,
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

/// The kernels of rustc's module whose entry still calls their body (`ir/kernel_bodies.rs`).
fn out_of_line_bodies(ir: &str) -> Vec<String> {
    let lines: Vec<Line> = ir.lines().enumerate().map(|(i, text)| Line { no: i + 1, text: text.to_string() }).collect();
    kernel_bodies::out_of_line(&lines, &kernel_entries::find_kernels(&lines))
}

/// Runs every transform over one whole device module, in order: each file under `ir/` is one
/// transform, with its reasons and its tests.
pub fn process(ir: &str) -> Result<Processed, IrError> {
    let mut lines: Vec<Line> =
        ir.lines().enumerate().map(|(i, text)| Line { no: i + 1, text: text.to_string() }).collect();
    let kernels = kernel_entries::find_kernels(&lines);
    let meta = meta_records::extract_meta(&mut lines)?;
    grid_constants::align_tensor_maps(&mut lines, &meta)?;
    let shared_statics = shared_memory::move_shared(&mut lines)?;
    internalize::internalize(&mut lines, &kernels);
    let bounds = launch_bounds::launch_bounds(&meta, &kernels)?;
    fn_attrs::add_fn_attrs(&mut lines, &bounds);
    fn_attrs::convergent_asm(&mut lines);
    block_ranges::bound_reads(&mut lines);
    noalias_inputs::mark_noalias_params(&mut lines);
    clamped_indices::clamped_checks(&mut lines);
    let records: Vec<MetaRecord> = meta.iter().map(|(record, _)| record.clone()).collect();
    guarded_loads::hoist(&mut lines, &records);
    saturating_casts::nvvm_casts(&mut lines);
    float_atomics::atomicrmw_fadd(&mut lines);
    let unroll_private_loops = private_array_loops::mark(&mut lines);
    equal_arms::merge(&mut lines);
    distance_exits::counted_exits(&mut lines);
    merged_barriers::merge(&mut lines);
    barrier_loops::freeze_branches(&mut lines);
    let needs_libdevice = libdevice::needs_libdevice(&lines);

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
        unroll_private_loops,
        meta: meta.into_iter().map(|(record, _)| record).collect(),
    })
}

/// `ir` without the `freeze`s `ir/barrier_loops.rs` put on branches for `opt`'s range check
/// elimination, once that has run.
pub(crate) fn thaw(ir: &str) -> String {
    let mut lines: Vec<Line> =
        ir.lines().enumerate().map(|(i, text)| Line { no: i + 1, text: text.to_string() }).collect();
    barrier_loops::thaw(&mut lines);
    let mut out = String::with_capacity(ir.len());
    for line in &lines {
        out.push_str(&line.text);
        out.push('\n');
    }
    out
}

/// Copies of the kernels (`ir/one_d_copies.rs`, `ir/versioned_checks.rs`: `add` appends each
/// after its kernel and names them), listed among the kernels so that `opt` keeps them.
fn add_copies(processed: &mut Processed, add: fn(&mut Vec<Line>) -> Vec<String>) {
    let mut lines: Vec<Line> =
        processed.ir.lines().enumerate().map(|(i, text)| Line { no: i + 1, text: text.to_string() }).collect();
    let copies = add(&mut lines);
    if copies.is_empty() {
        return;
    }
    let mut out = String::with_capacity(processed.ir.len() * 2);
    for line in &lines {
        out.push_str(&line.text);
        out.push('\n');
    }
    processed.ir = out;
    processed.kernels.extend(copies);
}

/// After each kernel, the copy `copy(its define line, its body)` makes of it, if any (the
/// copy's name and lines, `define` to `}`); returns the copies' names.
fn append_copies(lines: &mut Vec<Line>, copy: impl Fn(&str, &[Line]) -> Option<(String, Vec<Line>)>) -> Vec<String> {
    let mut names = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let text = &lines[i].text;
        if !(text.starts_with("define ") && text.contains(" ptx_kernel ")) {
            i += 1;
            continue;
        }
        let Some(len) = lines[i + 1..].iter().position(|l| l.text.starts_with('}')) else { break };
        let end = i + len + 2;
        let Some((name, mut new)) = copy(&lines[i].text, &lines[i + 1..end - 1]) else {
            i = end;
            continue;
        };
        new.insert(0, Line { no: lines[i].no, text: String::new() });
        names.push(name);
        let n = new.len();
        lines.splice(end..end, new);
        i = end + n;
    }
    names
}

/// `ir` with the kernels' float multiplies and adds marked `contract` (`ir/contractable_ops.rs`).
fn contractable(ir: &str) -> String {
    let mut lines: Vec<Line> =
        ir.lines().enumerate().map(|(i, text)| Line { no: i + 1, text: text.to_string() }).collect();
    contractable_ops::mark(&mut lines);
    let mut out = String::with_capacity(ir.len() + ir.len() / 16);
    for line in &lines {
        out.push_str(&line.text);
        out.push('\n');
    }
    out
}

/// The transforms that run on `opt`'s output rather than rustc's: conditional blocks of input
/// reads become unconditional (`ir/speculated_blocks.rs`), the 1-D copies read the y and z
/// registers their callees brought in as constants (`ir/one_d_copies.rs`), libdevice's products
/// that only the kernels' marked adds use are marked for fusing too (`ir/contractable_ops.rs`),
/// a range `a * n..(a + k) * n` is not tested for its end below its start
/// (`ir/ordered_ranges.rs`), a read at `i - C` is
/// tested by one compare instead of two (`ir/offset_checks.rs`), loads move above the stores to
/// other buffers before them (`ir/early_loads.rs`), unrolled loop remainders become rows of
/// guarded steps (`ir/guarded_epilogs.rs`), reads behind checks of earlier reads move above
/// those checks (`ir/checked_chains.rs`, bounded by the inputs' sizes in `meta`), and a peeled
/// reduction's first combine moves behind its branch (`ir/late_combines.rs`), the bounds
/// checks of a branching region are tested once at its start (`ir/early_checks.rs`), 16-bit
/// arithmetic is computed in 32 bits (`ir/wide_halves.rs`), guarded reads at constant
/// distances from one index share its address (`ir/shared_bases.rs`), 64-bit arithmetic whose
/// values stay below 2^32 is computed in 32 bits (`ir/narrow_arith.rs`), compares of 64-bit
/// values with zero high halves are made on the low ones (`ir/narrow_compares.rs`), and the
/// launch's extents are read before the block index in each block (`ir/extents_first.rs`),
/// loops counting to a constant below 2^31 count in 32 bits (`ir/narrow_counters.rs`), and the
/// reads the first two made unconditional become predicated loads (`ir/predicated_loads.rs`).
/// Returns the text and how many sites changed.
pub(crate) fn after_opt(ir: &str, meta: &[MetaRecord]) -> (String, usize) {
    let (text, blocks) = speculated_blocks::speculate(ir, meta);
    let mut lines: Vec<Line> =
        text.lines().enumerate().map(|(i, text)| Line { no: i + 1, text: text.to_string() }).collect();
    let folded = one_d_copies::fold_inlined_reads(&mut lines);
    let fused = contractable_ops::mark_results(&mut lines);
    let ranges = ordered_ranges::fold(&mut lines);
    let merged = offset_checks::merge(&mut lines);
    let loads = early_loads::hoist(&mut lines);
    let chains = guarded_epilogs::rewrite(&mut lines);
    let checked = checked_chains::hoist(&mut lines, meta);
    let combines = late_combines::rewrite(&mut lines);
    let regions = early_checks::hoist(&mut lines);
    let halves = wide_halves::widen(&mut lines);
    let bases = shared_bases::share(&mut lines);
    let arith = narrow_arith::narrow(&mut lines);
    let compares = narrow_compares::narrow(&mut lines);
    let extents = extents_first::hoist(&mut lines);
    let counters = narrow_counters::narrow(&mut lines);
    let predicated = predicated_loads::predicate(&mut lines);
    let changed = folded
        + fused
        + ranges
        + merged
        + loads
        + chains
        + checked
        + combines
        + regions
        + halves
        + bases
        + arith
        + compares
        + extents
        + counters
        + predicated;
    if changed == 0 {
        return (text, blocks);
    }
    let mut out = String::with_capacity(text.len());
    for line in &lines {
        out.push_str(&line.text);
        out.push('\n');
    }
    (out, blocks + changed)
}

/// One input line; `no` survives removals so errors point at the input.
struct Line {
    no: usize,
    text: String,
}

// ---------------------------------------------------------------------------------
// Helpers shared by the transforms

/// `%name -> line index` of every instruction that defines a value.
fn definitions(body: &[Line]) -> std::collections::HashMap<String, usize> {
    body.iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let (lhs, _) = l.text.split_once(" = ")?;
            let name = lhs.trim();
            name.starts_with('%').then(|| (name.to_string(), i))
        })
        .collect()
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

/// Numbers a function's unnamed values and blocks again in order of appearance, as LLVM's
/// parser requires (`%0`, `%1`, … with no gap, arguments first, an unlabelled entry block
/// next) — for transforms that move numbered instructions.
fn renumber(define: &mut String, body: &mut [Line]) {
    let is_num = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mut map = std::collections::HashMap::new();
    let mut next = 0usize;
    let define_num = |name: &str, next: &mut usize, map: &mut std::collections::HashMap<String, usize>| {
        map.insert(name.to_string(), *next);
        *next += 1;
    };
    if let (Some(open), Some(close)) = (define.find('('), find_params_close(define)) {
        for p in split_top(&define[open + 1..close]) {
            if let Some(n) = p.split_whitespace().last().and_then(|w| w.strip_prefix('%')).filter(|n| is_num(n)) {
                define_num(n, &mut next, &mut map);
            }
        }
    }
    let first = body.iter().map(|l| l.text.as_str()).find(|t| !t.trim().is_empty() && !t.trim_start().starts_with(';'));
    if first.is_some_and(|t| t.starts_with(char::is_whitespace)) {
        next += 1; // the entry block's implicit number
    }
    for line in body.iter() {
        let t = &line.text;
        let name = if t.starts_with(char::is_whitespace) {
            t.trim_start().strip_prefix('%').and_then(|r| r.split_once(" = ")).map(|(n, _)| n)
        } else {
            t.split_once(':').map(|(n, _)| n)
        };
        if let Some(n) = name.filter(|n| is_num(n)) {
            define_num(n, &mut next, &mut map);
        }
    }
    if map.iter().all(|(k, v)| k.parse::<usize>().ok() == Some(*v)) {
        return;
    }
    let rewrite = |t: &str, label_line: bool| -> String {
        let b = t.as_bytes();
        let mut out = String::with_capacity(t.len());
        let mut i = 0;
        if label_line {
            if let Some((n, rest)) = t.split_once(':').filter(|(n, _)| is_num(n)) {
                out.push_str(&map[n].to_string());
                out.push(':');
                i = t.len() - rest.len();
            }
        }
        while i < b.len() {
            match b[i] {
                b'"' => {
                    let end = skip_string(b, i);
                    out.push_str(&t[i..end]);
                    i = end;
                }
                b'%' if i == 0 || !is_ident_byte(b[i - 1]) => {
                    let end = i + 1 + b[i + 1..].iter().take_while(|c| is_ident_byte(**c)).count();
                    match map.get(&t[i + 1..end]) {
                        Some(n) => out.push_str(&format!("%{n}")),
                        None => out.push_str(&t[i..end]),
                    }
                    i = end;
                }
                _ => {
                    let c = t[i..].chars().next().unwrap_or(' ');
                    out.push(c);
                    i += c.len_utf8();
                }
            }
        }
        out
    };
    *define = rewrite(define, false);
    for line in body.iter_mut() {
        let label_line = !line.text.starts_with(char::is_whitespace);
        line.text = rewrite(&line.text, label_line);
    }
}

/// Runs `rewrite` over the body (the lines between `define` and `}`) of every function;
/// returns the sum of what it returned.
fn each_function(lines: &mut Vec<Line>, mut rewrite: impl FnMut(&mut Vec<Line>) -> usize) -> usize {
    let mut count = 0;
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].text.starts_with("define ") {
            i += 1;
            continue;
        }
        let Some(len) = lines[i + 1..].iter().position(|l| l.text.starts_with('}')) else { break };
        let mut body: Vec<Line> = lines.drain(i + 1..i + 1 + len).collect();
        count += rewrite(&mut body);
        let body_len = body.len();
        lines.splice(i + 1..i + 1, body);
        i += body_len + 2;
    }
    count
}

/// Bit width of `iN` when N is a whole number of bytes.
fn int_bits(ty: &str) -> Option<u32> {
    let bits: u32 = ty.trim().strip_prefix('i')?.parse().ok()?;
    (bits % 8 == 0 && (8..=128).contains(&bits)).then_some(bits)
}

// ---------------------------------------------------------------------------------
// Lexing helpers for LLVM's one-line-per-item text form

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'$' | b'.' | b'_')
}

/// Whether `text` defines a phi.
fn is_phi(text: &str) -> bool {
    text.split_once(" = ").is_some_and(|(_, r)| r.trim_start().starts_with("phi "))
}

/// Whether `line` mentions the value `name` (`%x`), not merely a longer name starting with it.
fn uses_value(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(at, _)| !line[at + name.len()..].bytes().next().is_some_and(is_ident_byte))
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
pub(crate) mod tests {
    use super::*;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    pub(super) type TestResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

    const HEAD: &str = "target datalayout = \"e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64\"\ntarget triple = \"nvptx64-nvidia-cuda\"\n";

    fn fixture() -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ir/rustc_1_96_sample.ll");
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    pub(super) fn run(ir: &str) -> Processed {
        process(ir).unwrap_or_else(|e| panic!("{e}"))
    }

    pub(super) fn line_of<'a>(ir: &'a str, start: &str) -> &'a str {
        ir.lines().find(|l| l.starts_with(start)).unwrap_or_else(|| panic!("no line starting with {start:?} in\n{ir}"))
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

    /// Runs a line-based transform over `ir`: the text after it (ending in a newline) and what
    /// the transform returned (the sites it changed).
    pub(super) fn transformed(ir: &str, pass: impl FnOnce(&mut Vec<Line>) -> usize) -> (String, usize) {
        let mut lines: Vec<Line> =
            ir.lines().enumerate().map(|(i, text)| Line { no: i + 1, text: text.to_string() }).collect();
        let n = pass(&mut lines);
        let text: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        (text.join("\n") + "\n", n)
    }

    /// Asserts that LLVM's verifier accepts `ir` (phis, joins, dominance); skips with a printed
    /// reason where `opt-22` is not installed.
    pub(crate) fn assert_valid_ir(what: &str, ir: &str) {
        let Some(opt) = find_tool("opt-22") else {
            eprintln!("skipped: opt-22 not found on PATH (apt-get install llvm-22)");
            return;
        };
        let dir = std::env::temp_dir().join(format!("oxide-valid-ir-{what}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ll = dir.join(format!("{what}.ll"));
        std::fs::write(&ll, ir).unwrap();
        let verified = Command::new(opt).args(["-passes=verify", "-disable-output"]).arg(&ll).output().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(verified.status.success(), "{what}: {}\n{ir}", String::from_utf8_lossy(&verified.stderr));
    }

    pub(crate) fn find_tool(name: &str) -> Option<PathBuf> {
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
}
