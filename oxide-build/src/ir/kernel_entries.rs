//! Which functions are kernel entries.

use super::{parse_define, Line};

/// Kernel entries are the functions defined with the `ptx_kernel` calling convention.
pub(super) fn find_kernels(lines: &[Line]) -> Vec<String> {
    lines.iter().filter_map(|l| parse_define(&l.text)).filter(|h| h.is_kernel).map(|h| h.name).collect()
}

#[cfg(test)]
mod tests {
    use crate::ir::tests::run;

    #[test]
    fn kernels_in_order_including_quoted_names() {
        let ir = "define ptx_kernel void @b() {\n  ret void\n}\n\
                  define internal void @helper() {\n  ret void\n}\n\
                  define ptx_kernel void @\"a$b\"(ptr noundef captures(none) %p) unnamed_addr #0 {\n  ret void\n}\n";
        assert_eq!(run(ir).kernels, ["b", "a$b"]);
    }
}
