//! Float → integer `as` casts as `cvt.rzi` plus a NaN select.
//!
//! Rust's `x as i32` saturates (NaN → 0, out of range → the nearest bound) and rustc emits
//! `llvm.fptosi.sat`. The NVPTX backend lowers that to `cvt.rzi` plus three compares and three
//! selects, although PTX's `cvt.rzi` from a float to an integer already clamps to the
//! destination range. It does not map NaN to 0 for every pair of types (measured on the H200:
//! f32 → i64 and f64 → i32 give the minimum), so the NaN case keeps its select: one compare and
//! one select instead of three each. device-api's `float_casts` test checks every edge on the
//! GPU against Rust's own casts.

use super::Line;

/// `(llvm.fpto?i.sat name, nvvm intrinsic, result type, argument type)`.
const CASTS: [(&str, &str, &str, &str); 8] = [
    ("llvm.fptosi.sat.i32.f32", "llvm.nvvm.f2i.rz", "i32", "float"),
    ("llvm.fptoui.sat.i32.f32", "llvm.nvvm.f2ui.rz", "i32", "float"),
    ("llvm.fptosi.sat.i64.f32", "llvm.nvvm.f2ll.rz", "i64", "float"),
    ("llvm.fptoui.sat.i64.f32", "llvm.nvvm.f2ull.rz", "i64", "float"),
    ("llvm.fptosi.sat.i32.f64", "llvm.nvvm.d2i.rz", "i32", "double"),
    ("llvm.fptoui.sat.i32.f64", "llvm.nvvm.d2ui.rz", "i32", "double"),
    ("llvm.fptosi.sat.i64.f64", "llvm.nvvm.d2ll.rz", "i64", "double"),
    ("llvm.fptoui.sat.i64.f64", "llvm.nvvm.d2ull.rz", "i64", "double"),
];

/// Rewrites each `%r = [tail] call iN @llvm.fpto?i.sat.iN.fM(fM %x)` of a scalar 32/64-bit cast
/// into the NVVM conversion, a NaN test and a select, and declares the intrinsics used.
pub(super) fn nvvm_casts(lines: &mut Vec<Line>) {
    let mut used = [false; CASTS.len()];
    let mut fresh = 0usize;
    let mut out = Vec::with_capacity(lines.len());
    for line in lines.drain(..) {
        let rewritten = CASTS.iter().enumerate().find_map(|(i, cast)| {
            let (indent, result, x) = parse(&line.text, cast)?;
            used[i] = true;
            fresh += 1;
            let (_, nvvm, int, float) = cast;
            Some([
                format!("{indent}%__oxide_cvt{fresh} = call {int} @{nvvm}({float} {x})"),
                format!("{indent}%__oxide_nan{fresh} = fcmp uno {float} {x}, 0.0"),
                format!("{indent}{result} = select i1 %__oxide_nan{fresh}, {int} 0, {int} %__oxide_cvt{fresh}"),
            ])
        });
        match rewritten {
            Some(new) => out.extend(new.into_iter().map(|text| Line { no: line.no, text })),
            None => out.push(line),
        }
    }
    *lines = out;
    for (i, (_, nvvm, int, float)) in CASTS.iter().enumerate() {
        let declared = lines.iter().any(|l| l.text.starts_with("declare ") && l.text.contains(&format!("@{nvvm}(")));
        if used[i] && !declared {
            let no = lines.last().map_or(0, |l| l.no);
            lines.push(Line { no, text: format!("declare {int} @{nvvm}({float})") });
        }
    }
}

/// `(indentation, %result, operand)` of a call of `cast`'s saturating intrinsic.
fn parse<'a>(text: &'a str, cast: &(&str, &str, &str, &str)) -> Option<(&'a str, &'a str, &'a str)> {
    let (sat, _, int, float) = cast;
    let body = text.trim_start();
    let indent = &text[..text.len() - body.len()];
    let (result, call) = body.split_once(" = ")?;
    let call = call.strip_prefix("tail ").unwrap_or(call);
    let args = call.strip_prefix(&format!("call {int} @{sat}({float} "))?;
    let x = args.split(')').next()?;
    (!x.is_empty() && !x.contains(',')).then_some((indent, result, x))
}

#[cfg(test)]
mod tests {
    use crate::ir::tests::run;

    #[test]
    fn saturating_casts_become_nvvm_conversions() {
        let ir = "define void @k(float %x, double %y, ptr %o) {\n\
                  %a = tail call i32 @llvm.fptosi.sat.i32.f32(float %x)\n\
                  %b = tail call i64 @llvm.fptoui.sat.i64.f64(double %y)\n\
                  %c = tail call i8 @llvm.fptoui.sat.i8.f32(float %x)\n\
                  ret void\n}\n\
                  declare i32 @llvm.fptosi.sat.i32.f32(float)\n\
                  declare i64 @llvm.fptoui.sat.i64.f64(double)\n\
                  declare i8 @llvm.fptoui.sat.i8.f32(float)\n";
        let out = run(ir).ir;
        assert!(
            out.contains(
                "%__oxide_cvt1 = call i32 @llvm.nvvm.f2i.rz(float %x)\n\
                 %__oxide_nan1 = fcmp uno float %x, 0.0\n\
                 %a = select i1 %__oxide_nan1, i32 0, i32 %__oxide_cvt1\n"
            ),
            "{out}"
        );
        assert!(out.contains("%b = select i1 %__oxide_nan2, i64 0, i64 %__oxide_cvt2\n"), "{out}");
        assert!(out.contains("%__oxide_cvt2 = call i64 @llvm.nvvm.d2ull.rz(double %y)\n"), "{out}");
        // No NVVM intrinsic for 8-bit results: left to the backend.
        assert!(out.contains("%c = tail call i8 @llvm.fptoui.sat.i8.f32(float %x)"), "{out}");
        assert_eq!(out.matches("declare i32 @llvm.nvvm.f2i.rz(float)").count(), 1, "{out}");
        assert_eq!(out.matches("declare i64 @llvm.nvvm.d2ull.rz(double)").count(), 1, "{out}");
        assert!(!out.contains("@llvm.nvvm.f2ui.rz"), "{out}");
    }
}
