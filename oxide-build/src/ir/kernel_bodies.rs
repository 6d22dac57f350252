//! Kernel bodies LLVM left out of their entries.
//!
//! `#[kernel] fn k(..)` becomes an entry that calls `k`'s body; rustc's inliner normally makes
//! them one function. A body beyond its size limit (sgemm's sixteen written-out k-steps) stays
//! a separate function: the entry passes its arguments by pointers to local memory, and the
//! passes here that look at kernels (guarded reads, ranges, copies) do not see the body. The
//! build says so, with the fix: `#[inline(always)]` on the kernel fn.

use super::{parse_define, Line};

/// The kernels whose entry still calls their own body (`…___oxide_src…<len><name>`).
pub(super) fn out_of_line(lines: &[Line], kernels: &[String]) -> Vec<String> {
    let defined: Vec<String> = lines.iter().filter_map(|l| parse_define(&l.text)).map(|h| h.name).collect();
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    for line in lines {
        let text = line.text.as_str();
        if let Some(h) = parse_define(text) {
            current = kernels.contains(&h.name).then_some(h.name);
        } else if text.starts_with('}') {
            current = None;
        } else if let Some(kernel) = &current {
            let body = format!("{}{kernel}", kernel.len());
            let calls_body = callee(text)
                .is_some_and(|c| c.contains("___oxide_src") && c.ends_with(&body) && defined.iter().any(|d| d == c));
            if calls_body && !found.contains(kernel) {
                found.push(kernel.clone());
            }
        }
    }
    found
}

/// The function a `call` instruction names directly.
fn callee(line: &str) -> Option<&str> {
    let at = line.find(" call ")?;
    let rest = &line[at..];
    let name = &rest[rest.find('@')? + 1..];
    Some(&name[..name.find('(')?])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(ir: &str) -> Vec<Line> {
        ir.lines().enumerate().map(|(i, t)| Line { no: i + 1, text: t.to_string() }).collect()
    }

    const IR: &str =
        "define internal fastcc void @_RNvNtNtCs1_5crate11___oxide_src7kernels5sgemm(ptr %a) unnamed_addr #0 {
  ret void
}
define ptx_kernel void @sgemm(ptr %a) #1 {
  call fastcc void @_RNvNtNtCs1_5crate11___oxide_src7kernels5sgemm(ptr %a)
  ret void
}
define ptx_kernel void @saxpy(ptr %a) #1 {
  call fastcc void @_RNvNtCs2_8oxide_rt6device6shared13out_of_bounds(ptr %a)
  ret void
}
";

    #[test]
    fn an_entry_calling_its_own_body_is_named() {
        let kernels = ["sgemm".to_string(), "saxpy".to_string()];
        assert_eq!(out_of_line(&lines(IR), &kernels), ["sgemm"]);
        // Inlined (no call), or a call of another kernel's body or of a declaration: nothing.
        let inlined = IR.replace("  call fastcc void @_RNvNtNtCs1_5crate11___oxide_src7kernels5sgemm(ptr %a)\n", "");
        assert!(out_of_line(&lines(&inlined), &kernels).is_empty());
        let declared = IR
            .replace("define internal fastcc void @_RNv", "declare void @_RNv")
            .replace(" unnamed_addr #0 {\n  ret void\n}", "");
        assert!(out_of_line(&lines(&declared), &kernels).is_empty(), "{declared}");
        let other = IR.replace("define ptx_kernel void @sgemm(", "define ptx_kernel void @sgemm2(");
        assert!(out_of_line(&lines(&other), &["sgemm2".to_string()]).is_empty());
    }
}
