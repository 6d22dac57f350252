//! Internal linkage for every definition but the kernels.

use super::{parse_define, parse_global, tokens, FnHeader, Line};

/// Gives every definition but the kernels internal linkage, so llc emits no
/// `.visible` helpers and later `opt` passes may inline and drop them freely.
pub(super) fn internalize(lines: &mut [Line], kernels: &[String]) {
    for line in lines.iter_mut() {
        if line.text.starts_with("define ") {
            if let Some(h) = parse_define(&line.text) {
                if !kernels.contains(&h.name) {
                    line.text = internalize_define(&line.text, &h);
                }
            }
        } else if let Some(mut g) = parse_global(&line.text) {
            if g.name.starts_with("llvm.") || (g.is_var() && g.init.is_none()) {
                continue; // LLVM's special globals and declarations keep their linkage
            }
            let linkage = g.prefix.iter().copied().find(|t| LINKAGES.contains(t));
            let has_comdat = g.attrs.iter().any(|a| is_comdat(a));
            if matches!(linkage, Some("internal" | "private")) && !has_comdat && !has_vis(&g.prefix) {
                continue;
            }
            let keep = if linkage == Some("private") { "private" } else { "internal" };
            let mut prefix = vec![keep];
            prefix.extend(g.prefix.iter().copied().filter(|t| !is_linkage_word(t)));
            g.prefix = prefix;
            g.attrs.retain(|a| !is_comdat(a));
            line.text = g.render();
        }
    }
}

fn internalize_define(line: &str, h: &FnHeader) -> String {
    let mut text = line.to_string();
    // Tail first: its offsets are after the header's leading keywords.
    for &(s, e) in tokens(line, h.args_end).iter().rev() {
        if is_comdat(&line[s..e]) {
            let ws = line[..s].len() - line[..s].trim_end().len();
            text.replace_range(s - ws..e, "");
        }
    }
    let after_define = "define ".len();
    let mut linkage = None;
    let mut rest = after_define;
    for (s, e) in tokens(line, after_define) {
        let word = &line[s..e];
        if !is_linkage_word(word) {
            rest = s;
            break;
        }
        if LINKAGES.contains(&word) {
            linkage = Some(word);
        }
    }
    let keep = if linkage == Some("private") { "private " } else { "internal " };
    text.replace_range(after_define..rest, keep);
    text
}

const LINKAGES: &[&str] = &[
    "private",
    "internal",
    "available_externally",
    "linkonce",
    "weak",
    "common",
    "appending",
    "extern_weak",
    "linkonce_odr",
    "weak_odr",
    "external",
];

/// Linkage, preemption, visibility and DLL storage: the words internalization replaces.
/// Visibility must go because a local symbol with `hidden` is invalid IR.
fn is_linkage_word(w: &str) -> bool {
    LINKAGES.contains(&w)
        || matches!(w, "dso_local" | "dso_preemptable" | "default" | "hidden" | "protected" | "dllimport" | "dllexport")
}

fn has_vis(prefix: &[&str]) -> bool {
    prefix.iter().any(|t| matches!(*t, "hidden" | "protected"))
}

fn is_comdat(tok: &str) -> bool {
    tok == "comdat" || tok.starts_with("comdat(")
}

#[cfg(test)]
mod tests {
    use crate::ir::tests::{line_of, run};

    #[test]
    fn internalizes_definitions_only() {
        let ir = "$f = comdat any\n\
                  @g = global i32 1, align 4\n\
                  @h = weak_odr hidden global i32 2, comdat, align 4\n\
                  @p = private unnamed_addr constant [2 x i8] c\"hi\", align 1\n\
                  @d = external global i32\n\
                  @tl = dso_local thread_local(initialexec) global i32 0\n\
                  define linkonce_odr hidden void @f() unnamed_addr comdat #0 {\n  ret void\n}\n\
                  define dso_local void @e() comdat($f) {\n  ret void\n}\n\
                  define private void @q() {\n  ret void\n}\n\
                  declare hidden void @ext()\n\
                  define ptx_kernel void @k() {\n  ret void\n}\n";
        let out = run(ir).ir;
        assert_eq!(line_of(&out, "@g "), "@g = internal global i32 1, align 4");
        assert_eq!(line_of(&out, "@h "), "@h = internal global i32 2, align 4");
        assert_eq!(line_of(&out, "@p "), "@p = private unnamed_addr constant [2 x i8] c\"hi\", align 1");
        assert_eq!(line_of(&out, "@d "), "@d = external global i32");
        assert_eq!(line_of(&out, "@tl "), "@tl = internal thread_local(initialexec) global i32 0");
        assert_eq!(line_of(&out, "define internal void @f"), "define internal void @f() unnamed_addr convergent #0 {");
        assert_eq!(line_of(&out, "define internal void @e"), "define internal void @e() convergent {");
        assert_eq!(line_of(&out, "define private"), "define private void @q() convergent {");
        assert_eq!(line_of(&out, "declare"), "declare hidden void @ext()");
        assert_eq!(line_of(&out, "define ptx_kernel"), "define ptx_kernel void @k() convergent {");
    }
}
