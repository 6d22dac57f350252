//! `noalias nonnull` on the slice parameters of kernels, `readonly` on inputs (`nonnull` alone on
//! inputs of atomics).

use super::{find_params_close, split_top, Line};

/// Kernel parameters that `#[kernel]` names `__oxide_in_*` (from `&[T]`) or `__oxide_out_*`
/// (from `DisjointSlice<T>`) never alias each other: the host launcher holds `&` / `&mut`
/// borrows of distinct device buffers for the launch. Saying so lets NVPTX read inputs
/// through the non-coherent cache (`ld.global.nc`), as nvcc does for `const __restrict__`.
/// They are never null either (the launchers substitute an aligned address for empty slices),
/// which removes the null test of `Option<&mut T>` from every output access.
/// Inputs of atomics are named `__oxide_atomic_*` and get only `nonnull`: threads write through
/// them and the same buffer may be passed twice, so `noalias` would be a false promise (llc-22
/// even crashed on such a kernel that only loads). Non-null they are (same launchers), and
/// saying so removes the null test of `Option<&AtomicF32>` from `Matrix<AtomicF32>::get`.
pub(super) const IN_PARAM: &str = "%__oxide_in_";
const OUT_PARAM: &str = "%__oxide_out_";
const ATOMIC_PARAM: &str = "%__oxide_atomic_";

pub(super) fn mark_noalias_params(lines: &mut [Line]) {
    for line in lines.iter_mut() {
        if !line.text.starts_with("define ") || !line.text.contains(" ptx_kernel ") {
            continue;
        }
        let (Some(open), Some(close)) = (line.text.find('('), find_params_close(&line.text)) else {
            continue;
        };
        let params = &line.text[open + 1..close];
        let rewritten: Vec<String> = split_top(params)
            .into_iter()
            .map(|p| {
                let p = p.trim();
                let Some(rest) = p.strip_prefix("ptr ") else { return p.to_string() };
                let name = p.rsplit(' ').next().unwrap_or("");
                let marked = name.starts_with(IN_PARAM) || name.starts_with(OUT_PARAM);
                // Non-null too: the launchers pass an aligned dangling address for empty slices.
                let nonnull = if p.split(' ').any(|w| w == "nonnull") { "" } else { "nonnull " };
                if name.starts_with(ATOMIC_PARAM) {
                    return format!("ptr {nonnull}{rest}");
                }
                if !marked || p.split(' ').any(|w| w == "noalias") {
                    return p.to_string();
                }
                // Inputs are read-only too (`KernelArg`: no interior mutability; the launchers
                // refuse an input of atomics overlapping them). rustc infers `readonly` only for
                // pointers whose address never becomes an integer, so a row whose loop counts
                // by address (`row.iter()`) lost the non-coherent cache and, with it, the
                // freedom of ptxas to move its loads above the output's stores.
                let readonly = name.starts_with(IN_PARAM) && !p.split(' ').any(|w| w == "readonly" || w == "readnone");
                let readonly = if readonly { "readonly " } else { "" };
                format!("ptr noalias {nonnull}{readonly}{rest}")
            })
            .collect();
        line.text = format!("{}{}{}", &line.text[..open + 1], rewritten.join(", "), &line.text[close..]);
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::process;
    use crate::ir::tests::TestResult;

    #[test]
    fn slice_params_of_kernels_become_noalias() -> TestResult {
        let ir = "define ptx_kernel void @k(float %a, ptr noundef readonly captures(none) %__oxide_in_x, i64 %__oxide_in_x_len, ptr noundef %__oxide_out_y, i64 %n, ptr %raw, ptr noundef %__oxide_atomic_c, i64 %__oxide_atomic_c_len, ptr noundef %__oxide_in_w, i64 %__oxide_in_w_len) unnamed_addr #0 {\n\
                  ret void\n}\n\
                  define void @helper(ptr %__oxide_in_x) #0 {\n  ret void\n}\n";
        let out = process(ir)?.ir;
        assert!(
            out.contains("ptr noalias nonnull noundef readonly captures(none) %__oxide_in_x, i64 %__oxide_in_x_len"),
            "{out}"
        );
        assert!(out.contains("ptr noalias nonnull noundef %__oxide_out_y"), "{out}");
        assert!(
            out.contains("ptr noalias nonnull readonly noundef %__oxide_in_w"),
            "an input whose address rustc saw escape is read-only all the same: {out}"
        );
        assert!(out.contains("ptr %raw, "), "unmarked pointers stay as they are: {out}");
        assert!(out.contains(", ptr nonnull noundef %__oxide_atomic_c, "), "inputs of atomics may alias: {out}");
        assert!(out.contains("define internal void @helper(ptr %__oxide_in_x)"), "only kernels: {out}");
        Ok(())
    }
}
