//! Release builds: a copy of each kernel for 1-D launches, which the launchers pick when the
//! launch's grid and block are 1-D.
//!
//! `thread::index()` is the thread's position in the whole grid, linearised over all three
//! dimensions (the ownership types rely on it being unique in any launch). A kernel cannot know
//! that its launches are 1-D, so it reads eleven special registers and multiplies them out in
//! 64 bits: 24 of a 15-tap convolution's 150 SASS instructions, where nvcc's twin spends two on
//! `blockIdx.x * blockDim.x + threadIdx.x`. The copy `@k__oxide_1d` reads `%tid.y`, `%tid.z`,
//! `%ctaid.y`, `%ctaid.z` as 0 and `%ntid.y`, `%ntid.z`, `%nctaid.y`, `%nctaid.z` as 1, which is
//! what they are in a launch whose grid and block are 1 in y and z; `opt`'s instcombine folds
//! the rest (conv1d_15: 127 instructions). The runtime (`oxide_rt`'s `Kernel`) launches the copy
//! only for such a launch and the kernel itself otherwise, so every launch computes what the
//! kernel's own entry computes.
//!
//! A kernel that reads no y or z register gets no copy, nor one whose required block shape
//! (`"nvvm.reqntid"`) has more than one row. Debug builds get none: without `opt` nothing would
//! fold. (A copy for 2-D launches was measured too: it saved 1 to 3 of the 2-D kernels' 280 to
//! 830 instructions, not worth doubling their code.)

use super::Line;

/// The copy's symbol is the kernel's with this suffix; the runtime looks it up by that name
/// (`oxide_rt::__private::ONE_D_SUFFIX`, the same string).
pub const SUFFIX: &str = "__oxide_1d";

/// Appends the 1-D copy of every kernel after it; returns the copies' names.
pub(super) fn add(lines: &mut Vec<Line>) -> Vec<String> {
    super::append_copies(lines, |define, body| {
        let name = kernel_name(define)?;
        // A copy only when the kernel reads y or z and a 1-D block is allowed.
        if !reads_y_or_z(body) || required_block(define).iter().skip(1).any(|&e| e > 1) {
            return None;
        }
        let copy_name = format!("{name}{SUFFIX}");
        let no = body.first().map_or(0, |l| l.no);
        let mut copy = vec![Line { no, text: define.replacen(&format!("@{name}("), &format!("@{copy_name}("), 1) }];
        // Inline PTX names the kernel's parameters by symbol (a tensor map's address).
        let (params, copy_params) = (format!("{name}_param_"), format!("{copy_name}_param_"));
        for line in body {
            let text = fixed_register(&line.text).unwrap_or_else(|| line.text.replace(&params, &copy_params));
            copy.push(Line { no: line.no, text });
        }
        copy.push(Line { no, text: "}".to_string() });
        Some((copy_name, copy))
    })
}

/// After `opt`: the same registers read as constants in the copies' inlined callees (the
/// panic paths read every thread and block coordinate for their report). Left as reads, they
/// would be one read per panic path where the kernel itself shares one (CSE), and ptxas
/// hoists them into the hot path (rgba16_levels: 0.955 -> 0.970 of nvcc's time, spmv_csr
/// 0.897 -> 0.948 on the H200 before this). Returns how many reads it replaced.
pub(super) fn fold_inlined_reads(lines: &mut [Line]) -> usize {
    let mut count = 0;
    let mut in_copy = false;
    for line in lines.iter_mut() {
        if line.text.starts_with("define ") {
            in_copy = kernel_name(&line.text).is_some_and(|n| n.ends_with(SUFFIX));
        } else if line.text.starts_with('}') {
            in_copy = false;
        } else if in_copy {
            if let Some(new) = fixed_register(&line.text) {
                line.text = new;
                count += 1;
            }
        }
    }
    count
}

/// `k` of `define ... @k(`.
fn kernel_name(define: &str) -> Option<&str> {
    let (_, rest) = define.split_once(" @")?;
    let (name, _) = rest.split_once('(')?;
    (!name.starts_with('"')).then_some(name)
}

/// Whether the body reads a y or z special register.
fn reads_y_or_z(body: &[Line]) -> bool {
    body.iter().filter_map(|l| register(&l.text)).any(|(_, axis)| axis > 1)
}

/// The block extents a `"nvvm.reqntid"="x,y,z"` attribute fixes; empty when none.
pub(super) fn required_block(define: &str) -> Vec<u64> {
    let Some((_, rest)) = define.split_once("\"nvvm.reqntid\"=\"") else { return Vec::new() };
    let list = rest.split('"').next().unwrap_or_default();
    list.split(',').filter_map(|e| e.trim().parse().ok()).collect()
}

/// `(register, axis)` of a read of `%tid`, `%ctaid`, `%ntid` or `%nctaid`.
pub(super) fn register(line: &str) -> Option<(&str, usize)> {
    let (_, rest) = line.split_once("@llvm.nvvm.read.ptx.sreg.")?;
    let (reg, rest) = rest.split_once('.')?;
    if !["tid", "ctaid", "ntid", "nctaid"].contains(&reg) {
        return None;
    }
    let axis = match rest.split('(').next()? {
        "x" => 1,
        "y" => 2,
        "z" => 3,
        _ => return None,
    };
    Some((reg, axis))
}

/// The line with a read of a y or z register replaced by its value in a 1-D launch: 0 for
/// positions, 1 for extents.
fn fixed_register(line: &str) -> Option<String> {
    let (reg, axis) = register(line)?;
    if axis == 1 {
        return None;
    }
    let (lhs, _) = line.split_once(" = ")?;
    let value = if reg.starts_with('n') { 1 } else { 0 };
    Some(format!("{lhs} = add i32 {value}, 0"))
}

/// `ptx` without the 1-D copies that came out the same as their kernel (a kernel declared
/// `dims = 1` already knows its launches are 1-D; in others the y and z reads may fold away).
pub(crate) fn without_identical_copies(ptx: &str) -> String {
    let entries = entry_spans(ptx);
    let body = |name: &str| -> Option<String> {
        let &(start, end) = entries.get(name)?;
        Some(normalised(&ptx[start..end], name))
    };
    let mut dropped: Vec<(usize, usize)> = entries
        .iter()
        .filter_map(|(name, &span)| {
            let kernel = name.strip_suffix(SUFFIX)?;
            (body(name)? == body(kernel)?).then_some(span)
        })
        .collect();
    if dropped.is_empty() {
        return ptx.to_string();
    }
    dropped.sort_unstable();
    let mut out = String::with_capacity(ptx.len());
    let mut at = 0;
    for (start, end) in dropped {
        out.push_str(&ptx[at..start]);
        at = end;
    }
    out.push_str(&ptx[at..]);
    out
}

/// `name -> (start, end)` of each `.visible .entry` (from its line to the line after its `}`).
fn entry_spans(ptx: &str) -> std::collections::HashMap<String, (usize, usize)> {
    let mut out = std::collections::HashMap::new();
    let mut offset = 0;
    let mut open: Option<(String, usize)> = None;
    for line in ptx.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix(".visible .entry ") {
            open = rest.split('(').next().map(|n| (n.trim().to_string(), offset));
        } else if line.starts_with('}') {
            if let Some((name, start)) = open.take() {
                out.insert(name, (start, offset + line.len()));
            }
        }
        offset += line.len();
    }
    out
}

/// An entry's text with its own name and its function-numbered labels (`$L__BB7_3`) made
/// neutral, so that two entries compare equal when their code is.
fn normalised(entry: &str, name: &str) -> String {
    let text =
        entry.replacen(&format!(".entry {name}("), ".entry @(", 1).replace(&format!("{name}_param_"), "@_param_");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("$L__BB") {
        out.push_str(&rest[..at + 6]);
        rest = &rest[at + 6..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const KERNELS: &str = r#"define ptx_kernel void @lin(ptr %out) unnamed_addr #0 {
start:
  %tx = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = tail call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %bz = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %nz = tail call i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()
  %m = tail call i64 asm "mov.b64 $0, lin_param_0;", "=l"()
  %a = add i32 %tx, %ty
  %b = mul i32 %bz, %nz
  %c = add i32 %a, %b
  store i32 %c, ptr %out, align 4
  ret void
}

define ptx_kernel void @flat(ptr %out) unnamed_addr #0 {
start:
  %tx = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  store i32 %tx, ptr %out, align 4
  ret void
}

define ptx_kernel void @tile(ptr %out) unnamed_addr "nvvm.reqntid"="32,8,1" #0 {
start:
  %ty = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %bz = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %s = add i32 %ty, %bz
  store i32 %s, ptr %out, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()
"#;

    #[test]
    fn kernels_reading_y_or_z_get_a_copy_with_those_registers_fixed() {
        let mut lines: Vec<Line> =
            KERNELS.lines().enumerate().map(|(i, t)| Line { no: i + 1, text: t.to_string() }).collect();
        let names = add(&mut lines);
        // `flat` reads only x; `tile`'s block of 8 rows rules out a 1-D launch.
        assert_eq!(names, ["lin__oxide_1d"]);
        let out: String = lines.iter().map(|l| format!("{}\n", l.text)).collect();
        // y and z positions are 0, extents 1; x stays. The copy follows its kernel.
        let want = "}\n\ndefine ptx_kernel void @lin__oxide_1d(ptr %out) unnamed_addr #0 {\nstart:\n  \
                    %tx = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %ty = add i32 0, 0\n  \
                    %bz = add i32 0, 0\n  %nz = add i32 1, 0\n";
        assert!(out.contains(want), "missing\n{want}\nin\n{out}");
        assert!(out.find("@lin__oxide_1d(") < out.find("@flat("), "{out}");
        // Inline PTX naming a parameter names the copy's.
        assert!(out.contains("asm \"mov.b64 $0, lin__oxide_1d_param_0;\""), "{out}");
        // The originals are unchanged.
        assert!(out.starts_with(&KERNELS[..KERNELS.find("\n\ndefine").unwrap()]), "{out}");
        crate::ir::tests::assert_valid_ir("one-d-copies", &out);
    }

    #[test]
    fn copies_that_compile_to_their_kernel_s_code_are_dropped() {
        let entry = |name: &str, n: u32, reads: &str| {
            format!(
                ".visible .entry {name}(\n\t.param .u64 {name}_param_0\n)\n{{\n\tmov.u32 %r1, %tid.x;\n{reads}\
                 \t@%p1 bra $L__BB{n}_2;\n$L__BB{n}_2:\n\tret;\n}}\n\n"
            )
        };
        let same = entry("a", 0, "") + &entry("a__oxide_1d", 3, "");
        let differs = entry("b", 1, "\tmov.u32 %r2, %tid.y;\n") + &entry("b__oxide_1d", 4, "");
        let ptx = format!("//\n.version 8.0\n\n{same}{differs}");
        let out = without_identical_copies(&ptx);
        assert!(!out.contains("a__oxide_1d") && out.contains(".entry a(\n"), "{out}");
        assert!(out.contains(".entry b(\n") && out.contains(".entry b__oxide_1d(\n"), "{out}");
        assert_eq!(without_identical_copies(&out), out);
    }

    #[test]
    fn reads_inlined_after_the_copy_was_made_are_folded_too() {
        let ir = "define ptx_kernel void @k(ptr %o) {\n  %a = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.y()\n}\n\
                  define ptx_kernel void @k__oxide_1d(ptr %o) {\n  %a = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.y()\n  \
                  %b = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %c = tail call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()\n}\n";
        let (out, n) = crate::ir::tests::transformed(ir, |lines| fold_inlined_reads(lines));
        assert_eq!(n, 2, "{out}");
        assert!(out.starts_with(
            "define ptx_kernel void @k(ptr %o) {\n  %a = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.y()\n"
        ));
        assert!(out.contains("@k__oxide_1d(ptr %o) {\n  %a = add i32 0, 0\n  %b = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %c = add i32 1, 0\n"), "{out}");
    }
}
