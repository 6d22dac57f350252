//! Whether libdevice must be linked.

use super::{global_refs, Line};

/// libdevice must be linked when the module calls any `__nv_*` math function.
pub(super) fn needs_libdevice(lines: &[Line]) -> bool {
    lines.iter().any(|l| {
        l.text.starts_with("declare ") && global_refs(&l.text).first().is_some_and(|r| r.name.starts_with("__nv_"))
    })
}

#[cfg(test)]
mod tests {
    use crate::ir::tests::run;

    #[test]
    fn libdevice_detection() {
        assert!(run("declare float @__nv_expf(float)\n").needs_libdevice);
        assert!(!run("declare float @llvm.exp.f32(float)\n; @__nv_expf\n").needs_libdevice);
    }
}
