//! Float atomic adds as LLVM `atomicrmw fadd`, so the backend sees their address space.
//!
//! oxide-rt writes `AtomicF32/F64::atomic_add` as inline `atom.relaxed.{cta,gpu}.add.f{32,64}`
//! (Rust has no float atomics). Inline asm hides the address from LLVM: a float atomic on a
//! kernel's buffer stays a generic `atom.add.f32` where nvcc emits `atom.global.add.f32`, and on
//! shared memory a generic one where nvcc emits `atom.shared`. The same operation as an
//! `atomicrmw fadd ... monotonic` with the matching sync scope lets address-space inference do
//! its work. System scope stays inline asm (LLVM's NVPTX backend emits no `.sys` for it).

use super::{find_params_close, split_top, Line};

/// `(asm template prefix, value type, sync scope, alignment)`.
const ADDS: [(&str, &str, &str, u32); 4] = [
    ("atom.relaxed.gpu.add.f32 ", "float", "device", 4),
    ("atom.relaxed.cta.add.f32 ", "float", "block", 4),
    ("atom.relaxed.gpu.add.f64 ", "double", "device", 8),
    ("atom.relaxed.cta.add.f64 ", "double", "block", 8),
];

/// Rewrites each `%r = [tail] call float asm sideeffect "atom.relaxed.gpu.add.f32 ...", "..."(ptr
/// .. %p, float %v) ...` into `%r = atomicrmw fadd ptr %p, float %v syncscope("device")
/// monotonic, align 4`. A call of any other shape is left alone.
pub(super) fn atomicrmw_fadd(lines: &mut [Line]) {
    for line in lines.iter_mut() {
        if !line.text.contains(" asm sideeffect \"atom.relaxed.") {
            continue;
        }
        if let Some(text) = rewrite(&line.text) {
            line.text = text;
        }
    }
}

fn rewrite(text: &str) -> Option<String> {
    let (result, call) = text.trim_start().split_once(" = ")?;
    let asm_at = call.find(" asm sideeffect \"")?;
    let template = &call[asm_at + " asm sideeffect \"".len()..];
    let &(_, ty, scope, align) = ADDS.iter().find(|(prefix, ..)| template.starts_with(prefix))?;
    if !call[..asm_at].ends_with(&format!("call {ty}")) {
        return None;
    }
    // The operands follow the constraint string: `"..."(ptr <attrs> P, <ty> V)`.
    let constraints_end = template.find("\", \"")? + 4;
    let rest = &template[constraints_end..];
    let args_open = rest.find("\"(")? + 1;
    let args_close = args_open + find_params_close(&rest[args_open..])?;
    let [ptr, value] = split_top(&rest[args_open + 1..args_close])[..] else { return None };
    let ptr = strip_param_attrs(ptr.trim().strip_prefix("ptr ")?);
    let value = value.trim().strip_prefix(ty)?.trim();
    let indent = &text[..text.len() - text.trim_start().len()];
    Some(format!(
        "{indent}{result} = atomicrmw fadd ptr {ptr}, {ty} {value} syncscope(\"{scope}\") monotonic, align {align}"
    ))
}

/// The operand without its call-site parameter attributes (`nonnull`, `align 4`, ...).
fn strip_param_attrs(mut s: &str) -> &str {
    loop {
        let before = s;
        for word in ["nonnull ", "noundef ", "nocapture "] {
            s = s.strip_prefix(word).unwrap_or(s);
        }
        if let Some(rest) = s.strip_prefix("align ") {
            s = rest.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start();
        }
        for word in ["dereferenceable(", "dereferenceable_or_null("] {
            if let Some(rest) = s.strip_prefix(word) {
                s = rest.split_once(") ").map_or(s, |(_, r)| r);
            }
        }
        if s == before {
            return s;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::tests::run;

    #[test]
    fn float_atomic_adds_become_atomicrmw() {
        let ir = "define void @k(ptr %p, ptr %q, float %v) {\n  \
            %0 = tail call float asm sideeffect \"atom.relaxed.gpu.add.f32 ${0}, [${1}], ${2};\", \"=&r,l,r,~{memory}\"(ptr nonnull align 4 %p, float %v) #29, !noalias !2, !srcloc !6\n  \
            %1 = tail call double asm sideeffect \"atom.relaxed.cta.add.f64 ${0}, [${1}], ${2};\", \"=&l,l,l,~{memory}\"(ptr nonnull getelementptr inbounds nuw (i8, ptr addrspacecast (ptr addrspace(3) @s to ptr), i64 8), double 1.000000e+00) #29\n  \
            %2 = tail call float asm sideeffect \"atom.relaxed.sys.add.f32 ${0}, [${1}], ${2};\", \"=&r,l,r,~{memory}\"(ptr nonnull %q, float %v) #29\n  \
            ret void\n}\n";
        let out = run(ir).ir;
        assert!(
            out.contains("  %0 = atomicrmw fadd ptr %p, float %v syncscope(\"device\") monotonic, align 4\n"),
            "{out}"
        );
        assert!(
            out.contains("  %1 = atomicrmw fadd ptr getelementptr inbounds nuw (i8, ptr addrspacecast (ptr addrspace(3) @s to ptr), i64 8), double 1.000000e+00 syncscope(\"block\") monotonic, align 8\n"),
            "{out}"
        );
        // System scope keeps its `.sys` asm.
        assert!(out.contains("asm sideeffect \"atom.relaxed.sys.add.f32"), "{out}");
    }
}
