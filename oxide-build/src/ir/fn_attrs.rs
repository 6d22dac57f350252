//! `convergent` on every definition, plus each kernel's launch-bounds attributes, inline in the header.

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

#[cfg(test)]
mod tests {
    use crate::ir::tests::{line_of, run};

    #[test]
    fn convergent_goes_before_attribute_groups_with_tricky_signatures() {
        let ir = "define internal noundef range(i32 0, 5) i32 @f(ptr noundef align 4 dereferenceable(8) %p, { i32, i32 } %s) unnamed_addr #3 !dbg !7 {\n  ret i32 0\n}\n";
        assert_eq!(
            line_of(&run(ir).ir, "define"),
            "define internal noundef range(i32 0, 5) i32 @f(ptr noundef align 4 dereferenceable(8) %p, { i32, i32 } %s) unnamed_addr convergent #3 !dbg !7 {"
        );
    }
}
