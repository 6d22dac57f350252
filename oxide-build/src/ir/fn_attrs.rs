//! `convergent` on every definition and every inline-asm call site, plus each kernel's launch-bounds
//! attributes, inline in the header.

use super::{parse_define, tokens, Line};

/// Adds `convergent` to every definition (as clang does for CUDA), so `opt` cannot
/// move barriers and warp shuffles across divergent control flow; plus each kernel's
/// launch-bounds attributes. They go inline in the header, so shared attribute groups
/// (a group may also serve a declaration) stay untouched.
pub(super) fn add_fn_attrs(lines: &mut [Line], bounds: &[(String, Vec<String>)]) {
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

/// Adds `convergent` to every inline-assembly call site (as clang does in CUDA device code):
/// `mma.sync.aligned` and `ldmatrix.sync.aligned` must be executed by all lanes of a warp at the
/// same instruction, so `opt` and `llc` must not duplicate them into divergent branches (tail
/// duplication, jump threading) — an inline `asm` call is not convergent unless marked.
pub(super) fn convergent_asm(lines: &mut [Line]) {
    for line in lines.iter_mut() {
        let Some(at) = line.text.find(" asm sideeffect \"").or_else(|| line.text.find(" asm \"")) else {
            continue;
        };
        if let Some(end) = asm_args_end(&line.text, at) {
            if line.text[end..].split_whitespace().next() != Some("convergent") {
                line.text.insert_str(end, " convergent");
            }
        }
    }
}

/// The byte after the `)` closing an inline-asm call's arguments: after the asm string and the
/// constraint string (LLVM escapes `"` inside them as `\22`), the argument list, skipping
/// nested parentheses (constant expressions).
fn asm_args_end(text: &str, from: usize) -> Option<usize> {
    let b = text.as_bytes();
    let asm_open = from + text[from..].find('"')?;
    let asm_close = asm_open + 1 + text[asm_open + 1..].find('"')?;
    let cons_open = asm_close + 1 + text[asm_close + 1..].find('"')?;
    let cons_close = cons_open + 1 + text[cons_open + 1..].find('"')?;
    let open = cons_close + 1 + text[cons_close + 1..].find('(')?;
    let mut depth = 0usize;
    for (i, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::ir::tests::{line_of, run};

    #[test]
    fn inline_asm_call_sites_become_convergent() {
        let ir = "define void @k(ptr %p) {\n  %1 = tail call { i32, i32 } asm sideeffect \"ldmatrix.sync.aligned.m8n8.x2.shared.b16 {$0, $1}, [$2]; // (x)\", \"=r,=r,l,~{memory}\"(ptr getelementptr (i8, ptr addrspacecast (ptr addrspace(3) @S to ptr), i64 16)) #9, !srcloc !3\n  tail call void asm sideeffect \"cp.async.commit_group;\", \"~{memory}\"() #9\n  ret void\n}\n";
        let out = run(ir).ir;
        assert!(
            out.contains("[$2]; // (x)\", \"=r,=r,l,~{memory}\"(ptr getelementptr (i8, ptr addrspacecast (ptr addrspace(3) @S to ptr), i64 16)) convergent #9, !srcloc !3"),
            "{out}"
        );
        assert!(out.contains("asm sideeffect \"cp.async.commit_group;\", \"~{memory}\"() convergent #9"), "{out}");
    }

    #[test]
    fn convergent_goes_before_attribute_groups_with_tricky_signatures() {
        let ir = "define internal noundef range(i32 0, 5) i32 @f(ptr noundef align 4 dereferenceable(8) %p, { i32, i32 } %s) unnamed_addr #3 !dbg !7 {\n  ret i32 0\n}\n";
        assert_eq!(
            line_of(&run(ir).ir, "define"),
            "define internal noundef range(i32 0, 5) i32 @f(ptr noundef align 4 dereferenceable(8) %p, { i32, i32 } %s) unnamed_addr convergent #3 !dbg !7 {"
        );
    }
}
