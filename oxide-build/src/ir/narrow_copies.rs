//! Release builds: every kernel that reads a thread position gets a second copy of its body in
//! which index arithmetic is provably within 32 bits; one uniform branch picks the copy.
//!
//! Rust kernels index with `usize`, so every index, comparison and address is 64-bit math
//! (a 64-bit add or compare is two SASS instructions, an address a shift-and-add pair instead
//! of one `IMAD.WIDE`); nvcc's `int` indices are half that. oxide-rt passes each thread position
//! (`thread::index()`, `global_x/y/z()`, `linear_position()`) through an identity `asm!`
//! *marker* (`// oxide.index`), which rustc's optimiser keeps. Here, each kernel `@k` whose body
//! holds a marker becomes
//! - `@k` (same parameters and attributes): `narrow = every slice length and shape parameter
//!   < 2^31 && blocks * threads per block <= 2^30`, then a call of one of:
//! - `@k.narrow` (internal, `alwaysinline`): the body with each marker replaced by
//!   `x & (2^30 - 1)` and each length or shape parameter `p` read through `p & (2^31 - 1)`;
//! - `@k.wide` (internal, `alwaysinline`): the body with each marker replaced by `x`.
//!
//! Under the branch condition every mask is the identity (a thread position is below the
//! launch's thread count, at most 2^30), so `@k.narrow` computes exactly what `@k.wide` does:
//! the masks are ordinary instructions that state the ranges, nothing is trusted. codegen's
//! `opt` inlines both copies; `narrow_indices.rs` then narrows what the masks bound to 32-bit
//! arithmetic and drops the narrow copy where that gained nothing. The condition passes through
//! an opaque `asm!` (`// oxide.narrow`) so that `opt` cannot use it to fold the masks away
//! before `narrow_indices.rs` reads them; that pass removes it.
//!
//! Debug builds, and functions other than kernels, get the identity in place of every marker.

use super::{find_params_close, parse_define, split_top, Line};

/// The template oxide-rt's marker `asm!` starts with (as LLVM prints it).
pub(super) const INDEX_MARKER: &str = "asm \"// oxide.index\\0A";
/// The template of the entry's opaque condition.
pub(super) const NARROW_MARKER: &str = "asm \"// oxide.narrow\\0A";
/// Thread positions in the narrow copy are below 2^30.
pub(super) const INDEX_MASK: i64 = (1 << 30) - 1;
/// Lengths and shapes in the narrow copy are below 2^31.
pub(super) const LEN_MASK: i64 = (1 << 31) - 1;

/// Splits every kernel with a marker (see the module docs); returns how many were split.
pub(super) fn split(lines: &mut Vec<Line>) -> usize {
    let mut count = 0;
    let mut i = 0;
    while i < lines.len() {
        let Some(header) = parse_define(&lines[i].text).filter(|h| h.is_kernel) else {
            i += 1;
            continue;
        };
        let Some(len) = lines[i + 1..].iter().position(|l| l.text.starts_with('}')) else { break };
        let body = &lines[i + 1..i + 1 + len];
        let define = lines[i].text.clone();
        let Some(copies) = copies(&define, &header.name, body) else {
            i += len + 2;
            continue;
        };
        let no = lines[i].no;
        let new: Vec<Line> = copies.into_iter().map(|text| Line { no, text }).collect();
        let n = new.len();
        lines.splice(i..i + len + 2, new);
        i += n;
        count += 1;
    }
    unmark(lines);
    count
}

/// Replaces every marker left by the identity (debug builds; functions other than kernels).
pub(super) fn unmark(lines: &mut [Line]) {
    for line in lines.iter_mut() {
        if let Some(new) = replace_marker(&line.text, None) {
            line.text = new;
        }
    }
}

/// The lines of the entry, `@k.narrow` and `@k.wide` (each with its closing `}`), or None when
/// the kernel has no marker or a parameter that cannot simply be passed on (`byval`).
fn copies(define: &str, name: &str, body: &[Line]) -> Option<Vec<String>> {
    if !body.iter().any(|l| l.text.contains(INDEX_MARKER)) {
        return None;
    }
    let (open, close) = (define.find('(')?, find_params_close(define)?);
    let params: Vec<&str> = split_top(&define[open + 1..close]).into_iter().filter(|p| !p.is_empty()).collect();
    if params.iter().any(|p| p.contains("byval") || p.split_whitespace().last().is_none_or(|n| !n.starts_with('%'))) {
        return None;
    }
    let names: Vec<&str> = params.iter().filter_map(|p| p.split_whitespace().last()).collect();
    // A shape parameter may carry a pointer (`DisjointAppend`'s counter): not a length.
    let as_pointer = |n: &str| body.iter().any(|l| l.text.contains("inttoptr") && super::uses_value(&l.text, n));
    let lengths: Vec<&str> = names.iter().copied().filter(|n| is_length(n) && !as_pointer(n)).collect();
    let quoted = |suffix: &str| format!("@\"{}.{suffix}\"", name.replace('"', ""));
    let (narrow, wide) = (quoted("narrow"), quoted("wide"));
    // The copies: same parameters and attributes, internal and always inlined.
    let tail = define[close + 1..].trim_start();
    let (addr, attrs) = match tail.split_once(' ') {
        Some((w, rest)) if w.ends_with("unnamed_addr") => (format!("{w} "), rest),
        _ => (String::new(), tail),
    };
    if attrs.split_whitespace().any(|w| w == "noinline" || w == "optnone") {
        return None;
    }
    let copy_header =
        |callee: &str| format!("define internal void {callee}({}) {addr}alwaysinline {attrs}", params.join(", "));
    let args: Vec<String> = params.iter().map(|p| call_arg(p)).collect();
    let args = args.join(", ");

    let mut out = Vec::with_capacity(2 * body.len() + 40);
    out.push(define.to_string());
    out.extend(entry(&lengths, &narrow, &wide, &args));
    out.push("}".to_string());
    out.push(String::new());
    out.push(copy_header(&narrow));
    out.extend(narrow_body(body, &lengths));
    out.push("}".to_string());
    out.push(String::new());
    out.push(copy_header(&wide));
    out.extend(body.iter().map(|l| replace_marker(&l.text, None).unwrap_or_else(|| l.text.clone())));
    out.push("}".to_string());
    Some(out)
}

/// `#[kernel]`'s slice length and shape parameters (`oxide-macros/src/expand.rs`).
fn is_length(name: &str) -> bool {
    name.starts_with("%__oxide_") && (name.ends_with("_len") || name.starts_with("%__oxide_shape"))
}

/// A parameter as a call argument: its type and name, without the parameter attributes.
fn call_arg(param: &str) -> String {
    let (ty, _) = super::split_type(param);
    let name = param.split_whitespace().last().unwrap_or_default();
    format!("{ty} {name}")
}

/// The entry's body: the condition, then a call of either copy.
fn entry(lengths: &[&str], narrow: &str, wide: &str, args: &str) -> Vec<String> {
    let mut out = vec!["oxide.entry:".to_string()];
    let sreg = |reg: &str, dim: &str, out: &mut Vec<String>| {
        out.push(format!("  %oxide.{reg}.{dim} = call i32 @llvm.nvvm.read.ptx.sreg.{reg}.{dim}()"));
        out.push(format!("  %oxide.{reg}.{dim}.w = zext i32 %oxide.{reg}.{dim} to i64"));
    };
    // Blocks, and threads per block, each below 2^63 (nctaid.y/z < 2^16); both at most 2^30,
    // so their product cannot wrap.
    for reg in ["nctaid", "ntid"] {
        for dim in ["x", "y", "z"] {
            sreg(reg, dim, &mut out);
        }
        out.push(format!("  %oxide.{reg}.xy = mul i64 %oxide.{reg}.x.w, %oxide.{reg}.y.w"));
        out.push(format!("  %oxide.{reg} = mul i64 %oxide.{reg}.xy, %oxide.{reg}.z.w"));
        out.push(format!("  %oxide.{reg}.ok = icmp ule i64 %oxide.{reg}, {}", 1u64 << 30));
    }
    out.push("  %oxide.threads = mul i64 %oxide.nctaid, %oxide.ntid".to_string());
    out.push(format!("  %oxide.threads.ok = icmp ule i64 %oxide.threads, {}", 1u64 << 30));
    out.push("  %oxide.ok.0 = and i1 %oxide.nctaid.ok, %oxide.ntid.ok".to_string());
    out.push("  %oxide.ok.1 = and i1 %oxide.ok.0, %oxide.threads.ok".to_string());
    let mut last = "%oxide.ok.1".to_string();
    for (i, len) in lengths.iter().enumerate() {
        out.push(format!("  %oxide.len.{i} = icmp ult i64 {len}, {}", 1u64 << 31));
        out.push(format!("  %oxide.ok.len.{i} = and i1 {last}, %oxide.len.{i}"));
        last = format!("%oxide.ok.len.{i}");
    }
    out.push(format!("  %oxide.narrow.in = zext i1 {last} to i32"));
    out.push(
        "  %oxide.narrow.out = call i32 asm \"// oxide.narrow\\0A\\09mov.b32 $0, $1;\", \"=r,r\"(i32 %oxide.narrow.in)"
            .to_string(),
    );
    out.push("  %oxide.narrow = icmp ne i32 %oxide.narrow.out, 0".to_string());
    out.push("  br i1 %oxide.narrow, label %oxide.narrow.call, label %oxide.wide.call".to_string());
    for (label, callee) in [("oxide.narrow.call", narrow), ("oxide.wide.call", wide)] {
        out.push(String::new());
        out.push(format!("{label}:"));
        out.push(format!("  call void {callee}({args})"));
        out.push("  ret void".to_string());
    }
    out
}

/// The narrow copy's body: markers masked to 2^30 - 1, lengths read through a mask to 2^31 - 1
/// (computed at the top of the entry block).
fn narrow_body(body: &[Line], lengths: &[&str]) -> Vec<String> {
    let masked = |len: &str| format!("%oxide.n.{}", &len[1..]);
    let mut out: Vec<String> = body
        .iter()
        .map(|l| {
            let mut t = replace_marker(&l.text, Some(INDEX_MASK)).unwrap_or_else(|| l.text.clone());
            for len in lengths {
                t = replace_value(&t, len, &masked(len));
            }
            t
        })
        .collect();
    let at = out.iter().position(|t| !t.trim().is_empty() && !t.trim_start().starts_with(';')).map_or(0, |first| {
        if out[first].starts_with(char::is_whitespace) {
            first
        } else {
            first + 1
        }
    });
    let masks = lengths.iter().map(|len| format!("  {} = and i64 {len}, {LEN_MASK}", masked(len)));
    out.splice(at..at, masks);
    out
}

/// `%v = and i64 %x, mask` (or `or i64 %x, 0`: the identity) for a marker line; None for any other.
fn replace_marker(line: &str, mask: Option<i64>) -> Option<String> {
    let at = line.find(INDEX_MARKER)?;
    let (def, _) = line.split_once(" = ")?;
    let b = line.as_bytes();
    // The operand list follows the template and constraint strings.
    let after = at + "asm ".len();
    let templ_end = super::skip_string(b, after);
    let rest = line[templ_end..].trim_start().strip_prefix(',')?.trim_start();
    let cons_start = line.len() - rest.len();
    let cons_end = super::skip_string(b, cons_start);
    let open = cons_end + line[cons_end..].find('(')?;
    let close = super::skip_group(b, open);
    let arg = split_top(&line[open + 1..close - 1]).into_iter().next()?;
    let (ty, value) = super::split_type(arg);
    Some(match mask {
        Some(m) => format!("{def} = and {ty} {value}, {m}"),
        None => format!("{def} = or {ty} {value}, 0"),
    })
}

/// `line` with every use of the value `from` (a whole `%name`) replaced by `to`.
pub(super) fn replace_value(line: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(from) {
        let end = at + from.len();
        let whole = !rest[end..].bytes().next().is_some_and(super::is_ident_byte)
            && !rest[..at].bytes().last().is_some_and(super::is_ident_byte);
        out.push_str(&rest[..at]);
        out.push_str(if whole { to } else { from });
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARKER: &str = "\"// oxide.index\\0A\\09mov.b64 ${0}, ${1};\", \"=&l,l\"";

    fn kernel() -> String {
        format!(
            "define ptx_kernel void @k(ptr noalias readonly %__oxide_in_x, i64 noundef %__oxide_in_x_len, i32 %n) unnamed_addr #0 {{\n\
             start:\n  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %w = zext i32 %t to i64\n\
             \x20 %i = tail call i64 asm {MARKER}(i64 %w) #3, !srcloc !5\n\
             \x20 %c = icmp ult i64 %i, %__oxide_in_x_len\n  ret void\n}}\n\
             define internal void @helper(i64 %a) {{\n  %j = call i64 asm {MARKER}(i64 %a)\n  ret void\n}}\n"
        )
    }

    fn lines(ir: &str) -> Vec<Line> {
        ir.lines().enumerate().map(|(i, t)| Line { no: i + 1, text: t.to_string() }).collect()
    }

    fn text(lines: &[Line]) -> String {
        lines.iter().map(|l| format!("{}\n", l.text)).collect()
    }

    #[test]
    fn a_kernel_with_a_marker_becomes_an_entry_and_two_copies() {
        let mut l = lines(&kernel());
        assert_eq!(split(&mut l), 1);
        let out = text(&l);
        // The entry keeps the header and calls either copy with the same arguments.
        assert!(out.contains("define ptx_kernel void @k(ptr noalias readonly %__oxide_in_x, i64 noundef %__oxide_in_x_len, i32 %n) unnamed_addr #0 {"), "{out}");
        assert!(out.contains("  call void @\"k.narrow\"(ptr %__oxide_in_x, i64 %__oxide_in_x_len, i32 %n)"), "{out}");
        assert!(out.contains("  call void @\"k.wide\"(ptr %__oxide_in_x, i64 %__oxide_in_x_len, i32 %n)"), "{out}");
        assert!(out.contains("%oxide.len.0 = icmp ult i64 %__oxide_in_x_len, 2147483648"), "{out}");
        assert!(out.contains("%oxide.threads.ok = icmp ule i64 %oxide.threads, 1073741824"), "{out}");
        assert!(out.contains(NARROW_MARKER), "{out}");
        assert!(out.contains("define internal void @\"k.narrow\"(ptr noalias readonly %__oxide_in_x, i64 noundef %__oxide_in_x_len, i32 %n) unnamed_addr alwaysinline #0 {"), "{out}");
        // The narrow copy masks the marker and the length (at the top of its entry block).
        assert!(out.contains("start:\n  %oxide.n.__oxide_in_x_len = and i64 %__oxide_in_x_len, 2147483647\n"), "{out}");
        assert!(out.contains("  %i = and i64 %w, 1073741823\n"), "{out}");
        assert!(out.contains("%c = icmp ult i64 %i, %oxide.n.__oxide_in_x_len"), "{out}");
        // The wide copy and the helper get the identity; no marker is left.
        assert_eq!(out.matches("  %i = or i64 %w, 0\n").count(), 1, "{out}");
        assert!(out.contains("  %j = or i64 %a, 0\n"), "{out}");
        assert!(!out.contains(INDEX_MARKER), "{out}");
    }

    #[test]
    fn kernels_without_markers_and_byval_parameters_stay() {
        let plain = "define ptx_kernel void @p(i64 %__oxide_in_x_len) #0 {\nstart:\n  ret void\n}\n";
        let mut l = lines(plain);
        assert_eq!(split(&mut l), 0);
        assert_eq!(text(&l), plain);
        let byval = kernel().replace("i32 %n)", "ptr byval([4 x i32]) %n)");
        let mut l = lines(&byval);
        assert_eq!(split(&mut l), 0);
        assert!(text(&l).contains("  %i = or i64 %w, 0\n"));
    }

    #[test]
    fn a_shape_parameter_used_as_a_pointer_is_no_length() {
        let ir = kernel().replace("i32 %n) unnamed_addr", "i64 %__oxide_shape0_out) unnamed_addr").replace(
            "  ret void\n}\ndefine internal",
            "  %p = inttoptr i64 %__oxide_shape0_out to ptr\n  ret void\n}\ndefine internal",
        );
        let mut l = lines(&ir);
        assert_eq!(split(&mut l), 1);
        let out = text(&l);
        assert!(out.contains("%oxide.len.0 = icmp ult i64 %__oxide_in_x_len"), "{out}");
        assert!(
            !out.contains("icmp ult i64 %__oxide_shape0_out") && !out.contains("%oxide.n.__oxide_shape0_out"),
            "{out}"
        );
        assert!(out.contains("  %p = inttoptr i64 %__oxide_shape0_out to ptr\n"), "{out}");
    }

    #[test]
    fn whole_names_only_are_replaced() {
        assert_eq!(replace_value("add i64 %a, %ab, %a", "%a", "%z"), "add i64 %z, %ab, %z");
    }
}
