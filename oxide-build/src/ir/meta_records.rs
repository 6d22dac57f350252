//! Decoding and removal of the `oxide.meta` statics that carry data from the kernel source to the build.

use super::{err, global_refs, int_bits, parse_global, split_top, split_type, IrError, Line, MetaRecord};
use std::collections::HashSet;

const META_SECTION: &str = "oxide.meta";

/// Decodes and removes `oxide.meta` statics (and their `@llvm.used` entries), since
/// they only exist to carry data from the kernel source to the build.
pub(super) fn extract_meta(lines: &mut Vec<Line>) -> Result<Vec<(MetaRecord, usize)>, IrError> {
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

fn is_used_list(line: &str) -> bool {
    line.starts_with("@llvm.used ") || line.starts_with("@llvm.compiler.used ")
}

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

#[cfg(test)]
mod tests {
    use crate::ir::tests::{line_of, run};
    use crate::ir::MetaRecord;

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
}
