//! TMA tensor-map parameters made 64-byte aligned `byval` parameters (CUDA's
//! `__grid_constant__`).
//!
//! A kernel's `TensorMap<T, D>` argument arrives as a 128-byte parameter that the kernel never
//! reads as a value: it takes the parameter's address (`mov` of the PTX parameter symbol, then
//! `cvta.param`) and hands it to `cp.async.bulk.tensor`, which requires the map 64-byte aligned.
//! rustc passes a 128-byte aggregate as `[8 x i128]` (16-byte aligned, and rustc's nvptx64 ABI
//! cannot express more), so this stage declares those parameters as
//! `ptr byval([128 x i8]) align 64`, which llc emits as `.param .align 64 .b8 name[128]`. The
//! `#[kernel]` macro names them in a `__oxide_grid_constant_<kernel>` meta record (parameter
//! indices); a named parameter that is not 128 bytes, or that the body reads, is an error.

use super::{err, find_params_close, split_top, uses_value, IrError, Line, MetaRecord};

const PREFIX: &str = "__oxide_grid_constant_";

pub(super) fn align_tensor_maps(lines: &mut [Line], meta: &[(MetaRecord, usize)]) -> Result<(), IrError> {
    for (record, at) in meta {
        let Some(kernel) = record.name.strip_prefix(PREFIX) else { continue };
        let head = format!("@{kernel}(");
        let quoted = format!("@\"{kernel}\"(");
        let Some(def) = lines
            .iter()
            .position(|l| l.text.starts_with("define ") && (l.text.contains(&head) || l.text.contains(&quoted)))
        else {
            return Err(err(
                *at,
                &record.name,
                format!("tensor-map parameters name `{kernel}`, which is not defined here"),
            ));
        };
        let text = lines[def].text.clone();
        let (Some(open), Some(close)) = (text.find('('), find_params_close(&text)) else {
            return Err(err(lines[def].no, kernel, "cannot read the parameter list"));
        };
        let mut params: Vec<String> =
            split_top(&text[open + 1..close]).into_iter().map(|p| p.trim().to_string()).collect();
        for &index in &record.values {
            let Some(p) = params.get_mut(index as usize) else {
                return Err(err(lines[def].no, kernel, format!("has no parameter {index} for a tensor map")));
            };
            let name = p.rsplit(' ').next().unwrap_or("").to_string();
            if !(p.starts_with("[8 x i128] ") || p.starts_with("[16 x i64] ")) {
                return Err(err(
                    lines[def].no,
                    kernel,
                    format!("parameter {index} (`{p}`) should be a 128-byte tensor map (`[8 x i128]`)"),
                ));
            }
            if !name.starts_with('%') {
                return Err(err(lines[def].no, kernel, format!("parameter {index} (`{p}`) has no name")));
            }
            // The body ends at the first line that is only `}`.
            let used = lines[def + 1..]
                .iter()
                .take_while(|l| l.text != "}")
                .any(|l| !l.text.trim_start().starts_with(';') && uses_value(&l.text, &name));
            if used {
                return Err(err(
                    lines[def].no,
                    kernel,
                    format!("tensor-map parameter {index} (`{name}`) is read as a value; the kernel may only take its address"),
                ));
            }
            *p = format!("ptr byval([128 x i8]) align 64 {name}");
        }
        lines[def].text = format!("{}{}{}", &text[..open + 1], params.join(", "), &text[close..]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::ir::process;
    use crate::ir::tests::{line_of, run};

    const IR: &str = "@__oxide_grid_constant_k = constant [1 x i32] [i32 1], section \"oxide.meta\", align 4\n\
        @llvm.used = appending global [1 x ptr] [ptr @__oxide_grid_constant_k], section \"llvm.metadata\"\n\
        define ptx_kernel void @k(ptr noundef %out, [8 x i128] %0, [9 x i32] %1) unnamed_addr #0 {\n\
        start:\n  %a = tail call i64 asm sideeffect \"mov.b64 $0, k_param_1;\", \"=l\"()\n  store i64 %a, ptr %out, align 8\n  ret void\n}\n";

    #[test]
    fn tensor_maps_become_aligned_byval_parameters() {
        let out = run(IR).ir;
        let def = line_of(&out, "define ptx_kernel void @k(");
        assert!(def.contains("(ptr noalias") || def.contains("(ptr noundef %out"), "{def}");
        assert!(def.contains(", ptr byval([128 x i8]) align 64 %0, [9 x i32] %1)"), "{def}");
        assert!(!out.contains("__oxide_grid_constant_k"), "the record is removed:\n{out}");
    }

    #[test]
    fn a_map_read_as_a_value_or_of_another_size_is_an_error() {
        let read = IR.replace("  ret void", "  %x = extractvalue [8 x i128] %0, 0\n  ret void");
        let e = process(&read).unwrap_err();
        assert!(e.message.contains("is read as a value"), "{e}");
        let small = IR.replace("[8 x i128] %0", "[4 x i128] %0");
        let e = process(&small).unwrap_err();
        assert!(e.message.contains("should be a 128-byte tensor map"), "{e}");
    }
}
