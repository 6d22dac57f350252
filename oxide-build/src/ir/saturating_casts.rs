//! Float → integer `as` casts as one `cvt.rzi`.
//!
//! Rust's `x as i32` saturates (NaN → 0, out of range → the nearest bound) and rustc emits
//! `llvm.fptosi.sat`. The NVPTX backend lowers that to `cvt.rzi` plus three compares and three
//! selects, although PTX's `cvt.rzi` from a float to an integer already clamps to the
//! destination range and turns NaN into 0 (the PTX ISA's `cvt`; checked on the GPU by
//! device-api's `float_casts` test at every edge). So the scalar 32/64-bit casts call the NVVM
//! conversion intrinsics instead, which are exactly that one instruction; nvcc emits the same
//! for a C cast.

use super::Line;

/// `(llvm.fpto?i.sat name, nvvm intrinsic, return type, argument type)`.
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

/// Renames every call of a scalar saturating cast to its NVVM intrinsic and declares the
/// intrinsics used (the old declarations stay; unused declarations cost nothing).
pub(super) fn nvvm_casts(lines: &mut Vec<Line>) {
    let mut used = [false; CASTS.len()];
    for line in lines.iter_mut().filter(|l| !l.text.starts_with("declare ")) {
        for (i, (sat, nvvm, _, _)) in CASTS.iter().enumerate() {
            let (from, to) = (format!("@{sat}("), format!("@{nvvm}("));
            if line.text.contains(&from) {
                line.text = line.text.replace(&from, &to);
                used[i] = true;
            }
        }
    }
    for (i, (_, nvvm, ret, arg)) in CASTS.iter().enumerate() {
        let declared = lines.iter().any(|l| l.text.starts_with("declare ") && l.text.contains(&format!("@{nvvm}(")));
        if used[i] && !declared {
            let no = lines.last().map_or(0, |l| l.no);
            lines.push(Line { no, text: format!("declare {ret} @{nvvm}({arg})") });
        }
    }
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
        assert!(out.contains("%a = tail call i32 @llvm.nvvm.f2i.rz(float %x)"), "{out}");
        assert!(out.contains("%b = tail call i64 @llvm.nvvm.d2ull.rz(double %y)"), "{out}");
        // No NVVM intrinsic for 8-bit results: left to the backend.
        assert!(out.contains("%c = tail call i8 @llvm.fptoui.sat.i8.f32(float %x)"), "{out}");
        assert_eq!(out.matches("declare i32 @llvm.nvvm.f2i.rz(float)").count(), 1, "{out}");
        assert_eq!(out.matches("declare i64 @llvm.nvvm.d2ull.rz(double)").count(), 1, "{out}");
        assert!(!out.contains("@llvm.nvvm.f2ui.rz"), "{out}");
    }
}
