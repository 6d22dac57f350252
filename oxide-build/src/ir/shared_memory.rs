//! Shared-memory statics: moved to `addrspace(3)`, their uses cast back to generic pointers.

use super::{err, global_refs, parse_global, IrError, Line};
use std::collections::HashSet;

const SHARED_SECTION: &str = "oxide.shared";
const DYNAMIC_SHARED_PREFIX: &str = "__oxide_dynamic_shared";

/// Moves `oxide.shared` statics (and `__oxide_dynamic_shared*` extern statics) to
/// shared memory, `addrspace(3)`, and makes every use see them through a generic
/// pointer, which is what the Rust code was compiled against.
pub(super) fn move_shared(lines: &mut [Line]) -> Result<Vec<String>, IrError> {
    let mut names = Vec::new();
    for line in lines.iter_mut() {
        let Some(g) = parse_global(&line.text) else {
            continue;
        };
        let dynamic = g.name.starts_with(DYNAMIC_SHARED_PREFIX);
        if !dynamic && g.section() != Some(SHARED_SECTION) {
            continue;
        }
        if g.prefix.contains(&"addrspace(3)") {
            continue; // already moved
        }
        if g.kind != "global" && g.kind != "constant" {
            return Err(err(line.no, &g.name, "a shared-memory symbol must be a static"));
        }
        if g.prefix.iter().any(|t| t.starts_with("addrspace(")) {
            return Err(err(line.no, &g.name, "a shared-memory static already has an address space"));
        }
        let metadata = g.attrs.iter().filter(|a| a.starts_with('!'));
        let mut text = match g.init {
            // Shared memory cannot be initialized: each block starts with garbage.
            Some(_) if !dynamic => {
                let mut t = format!("{} = internal addrspace(3) global {} undef", g.token, g.ty);
                if let Some(align) = g.align() {
                    t.push_str(&format!(", align {align}"));
                }
                t
            }
            Some(_) => {
                return Err(err(
                    line.no,
                    &g.name,
                    "dynamic shared memory must be an `extern` static (its size is set at launch)",
                ))
            }
            // Extern: the dynamic shared memory window, sized at launch time.
            None => format!(
                "{} = external addrspace(3) global {}, align {}",
                g.token,
                g.ty,
                g.align().unwrap_or(16).max(16)
            ),
        };
        for m in metadata {
            text.push_str(", ");
            text.push_str(m);
        }
        names.push(g.name.clone());
        line.text = text;
    }
    if names.is_empty() {
        return Ok(names);
    }

    let set: HashSet<&str> = names.iter().map(String::as_str).collect();
    for line in lines.iter_mut() {
        let refs = global_refs(&line.text);
        let is_def = line.text.starts_with('@');
        let mut text = line.text.clone();
        // Right to left so earlier byte offsets stay valid.
        for r in refs.iter().rev() {
            if (is_def && r.start == 0) || !set.contains(r.name.as_str()) {
                continue;
            }
            let token = &line.text[r.start..r.end];
            text.replace_range(r.start..r.end, &format!("addrspacecast (ptr addrspace(3) {token} to ptr)"));
        }
        line.text = text;
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use crate::ir::process;
    use crate::ir::tests::{line_of, run};

    #[test]
    fn shared_static_moves_and_uses_are_cast() {
        let ir = "@X = internal unnamed_addr global [1024 x i8] zeroinitializer, section \"oxide.shared\", align 4\n\
                  @X2 = internal global [4 x i8] zeroinitializer, align 4\n\
                  @\"q$LT$x$GT$\" = internal global [8 x i8] zeroinitializer, section \"oxide.shared\", align 8\n\
                  @s = private constant [3 x i8] c\"@X;\"\n\
                  define ptx_kernel void @k() {\n\
                  ; load @X here\n  \
                  %a = getelementptr inbounds nuw float, ptr @X, i64 3\n  \
                  store float 1.0, ptr getelementptr inbounds (i8, ptr @X, i64 16), align 4\n  \
                  store i32 1, ptr @X2, align 4\n  \
                  store i64 1, ptr @\"q$LT$x$GT$\", align 8 ; @X\n  \
                  ret void\n}\n";
        let p = run(ir);
        assert_eq!(p.shared_statics, ["X", "q$LT$x$GT$"]);
        let out = &p.ir;
        assert_eq!(line_of(out, "@X "), "@X = internal addrspace(3) global [1024 x i8] undef, align 4");
        assert_eq!(line_of(out, "@\"q"), "@\"q$LT$x$GT$\" = internal addrspace(3) global [8 x i8] undef, align 8");
        let cast = "addrspacecast (ptr addrspace(3) @X to ptr)";
        assert!(out.contains(&format!("%a = getelementptr inbounds nuw float, ptr {cast}, i64 3")));
        assert!(out.contains(&format!("ptr getelementptr inbounds (i8, ptr {cast}, i64 16)")));
        assert!(out.contains("store i32 1, ptr @X2, align 4"), "{out}");
        assert!(out.contains("ptr addrspacecast (ptr addrspace(3) @\"q$LT$x$GT$\" to ptr), align 8 ; @X"));
        assert!(out.contains("; load @X here") && out.contains("c\"@X;\""));
    }

    #[test]
    fn dynamic_shared_declaration() {
        let ir = "@__oxide_dynamic_shared = external local_unnamed_addr global [0 x i8]\n\
                  define ptx_kernel void @k() {\n  store i8 0, ptr @__oxide_dynamic_shared, align 1\n  ret void\n}\n";
        let p = run(ir);
        assert_eq!(p.shared_statics, ["__oxide_dynamic_shared"]);
        assert_eq!(
            line_of(&p.ir, "@__oxide"),
            "@__oxide_dynamic_shared = external addrspace(3) global [0 x i8], align 16"
        );
        assert!(p.ir.contains("ptr addrspacecast (ptr addrspace(3) @__oxide_dynamic_shared to ptr), align 1"));
    }

    #[test]
    fn dynamic_shared_with_initializer_is_an_error() {
        let ir = "@__oxide_dynamic_shared = global [4 x i8] zeroinitializer\n";
        let e = process(ir).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("line 1") && e.contains("@__oxide_dynamic_shared") && e.contains("extern"), "{e}");
    }
}
