//! Launch-bounds and required-block meta records turned into NVVM function attributes.

use super::{err, IrError, MetaRecord};

/// Meta records with this prefix carry `[maxntid, minctasm]` for the named kernel.
const LAUNCH_BOUNDS_PREFIX: &str = "__oxide_launch_bounds_";
/// Meta records with this prefix carry the kernel's required block `[x, y, z]`.
const BLOCK_PREFIX: &str = "__oxide_block_";
/// Meta records with this prefix carry the kernel's cluster shape `[x, y, z]`.
const CLUSTER_PREFIX: &str = "__oxide_cluster_";

/// Turns launch-bounds records into the function attributes LLVM 22's NVPTX
/// backend reads (`.maxntid` / `.minnctapersm` in the PTX).
pub(super) fn launch_bounds(
    meta: &[(MetaRecord, usize)],
    kernels: &[String],
) -> Result<Vec<(String, Vec<String>)>, IrError> {
    let mut out = Vec::new();
    // PTX allows no `.maxntid` beside `.reqntid`: a kernel with a required block keeps only the
    // launch bounds' minimum of resident blocks.
    let required: Vec<&str> = meta.iter().filter_map(|(r, _)| r.name.strip_prefix(BLOCK_PREFIX)).collect();
    for (record, line) in meta {
        if let Some(kernel) = record.name.strip_prefix(CLUSTER_PREFIX) {
            out.push(cluster(record, *line, kernel, kernels)?);
            continue;
        }
        if let Some(kernel) = record.name.strip_prefix(BLOCK_PREFIX) {
            out.push(required_block(record, *line, kernel, kernels)?);
            continue;
        }
        let Some(kernel) = record.name.strip_prefix(LAUNCH_BOUNDS_PREFIX) else {
            continue;
        };
        if !kernels.iter().any(|k| k == kernel) {
            return Err(err(
                *line,
                &record.name,
                format!("launch bounds name `{kernel}`, which is not a kernel in this module"),
            ));
        }
        let (maxntid, minctasm) = match record.values[..] {
            [t] => (t, 0),
            [t, m] => (t, m),
            _ => return Err(err(*line, &record.name, "launch bounds must be [maxntid, minctasm]")),
        };
        if !(1..=1024).contains(&maxntid) {
            return Err(err(*line, &record.name, format!("max threads per block {maxntid} is outside 1..=1024")));
        }
        let mut attrs = vec![format!("\"nvvm.maxntid\"=\"{maxntid},1,1\"")];
        if required.contains(&kernel) {
            attrs.clear();
        }
        if minctasm != 0 {
            attrs.push(format!("\"nvvm.minctasm\"=\"{minctasm}\""));
        }
        out.push((kernel.to_string(), attrs));
    }
    Ok(out)
}

/// `#[kernel(cluster(x, y, z))]`: `.reqnctapercluster x, y, z` (and `.explicitcluster`), so
/// every launch forms clusters of that shape.
fn cluster(
    record: &MetaRecord,
    line: usize,
    kernel: &str,
    kernels: &[String],
) -> Result<(String, Vec<String>), IrError> {
    let shape = Extents { what: "a cluster shape", most: "8 blocks", limit: 8, attr: "nvvm.cluster_dim" };
    shape.attribute(record, line, kernel, kernels)
}

/// `#[kernel(block(x, y, z))]`: `.reqntid x, y, z` (instead of `.maxntid`, which PTX does not
/// allow beside it); ptxas then allocates registers for exactly that many threads.
fn required_block(
    record: &MetaRecord,
    line: usize,
    kernel: &str,
    kernels: &[String],
) -> Result<(String, Vec<String>), IrError> {
    let shape = Extents { what: "a required block", most: "1024 threads", limit: 1024, attr: "nvvm.reqntid" };
    shape.attribute(record, line, kernel, kernels)
}

/// A meta record of three extents `[x, y, z]` for one kernel, turned into the NVVM attribute
/// `attr="x,y,z"`: each at least 1, their product at most `limit`.
struct Extents {
    what: &'static str,
    most: &'static str,
    limit: u64,
    attr: &'static str,
}

impl Extents {
    fn attribute(
        &self,
        record: &MetaRecord,
        line: usize,
        kernel: &str,
        kernels: &[String],
    ) -> Result<(String, Vec<String>), IrError> {
        if !kernels.iter().any(|k| k == kernel) {
            return Err(err(
                line,
                &record.name,
                format!("{} names `{kernel}`, which is not a kernel in this module", self.what),
            ));
        }
        match record.values[..] {
            [x, y, z] if x >= 1 && y >= 1 && z >= 1 && x * y * z <= self.limit => {
                Ok((kernel.to_string(), vec![format!("\"{}\"=\"{x},{y},{z}\"", self.attr)]))
            }
            _ => Err(err(
                line,
                &record.name,
                format!("{} must be [x, y, z] with at most {}, found {:?}", self.what, self.most, record.values),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::process;
    use crate::ir::tests::{line_of, run};

    #[test]
    fn launch_bounds_become_nvvm_attributes() {
        let ir = "@__oxide_launch_bounds_k = constant [2 x i32] [i32 128, i32 0], section \"oxide.meta\", align 4\n\
                  define ptx_kernel void @k(ptr %p) unnamed_addr #0 {\n  ret void\n}\n\
                  @__oxide_launch_bounds_j = constant [2 x i32] [i32 64, i32 3], section \"oxide.meta\", align 4\n\
                  define ptx_kernel void @j(ptr %p) local_unnamed_addr convergent {\n  ret void\n}\n";
        let out = run(ir).ir;
        assert_eq!(
            line_of(&out, "define ptx_kernel void @k"),
            "define ptx_kernel void @k(ptr %p) unnamed_addr convergent \"nvvm.maxntid\"=\"128,1,1\" #0 {"
        );
        assert_eq!(
            line_of(&out, "define ptx_kernel void @j"),
            "define ptx_kernel void @j(ptr %p) local_unnamed_addr \"nvvm.maxntid\"=\"64,1,1\" \"nvvm.minctasm\"=\"3\" convergent {"
        );
    }

    #[test]
    fn a_required_block_keeps_only_the_minimum_of_the_launch_bounds() {
        let ir = "@__oxide_block_k = constant [3 x i32] [i32 16, i32 16, i32 1], section \"oxide.meta\", align 4\n\
                  @__oxide_launch_bounds_k = constant [2 x i32] [i32 256, i32 2], section \"oxide.meta\", align 4\n\
                  define ptx_kernel void @k(ptr %p) unnamed_addr #0 {\n  ret void\n}\n";
        let out = run(ir).ir;
        let line = line_of(&out, "define ptx_kernel void @k");
        assert!(line.contains("\"nvvm.reqntid\"=\"16,16,1\"") && line.contains("\"nvvm.minctasm\"=\"2\""), "{line}");
        assert!(!line.contains("maxntid"), "{line}");
    }

    #[test]
    fn a_cluster_shape_becomes_the_cluster_attribute() {
        let ir = "@__oxide_cluster_k = constant [3 x i32] [i32 2, i32 2, i32 1], section \"oxide.meta\", align 4\n\
                  @__oxide_block_k = constant [3 x i32] [i32 128, i32 1, i32 1], section \"oxide.meta\", align 4\n\
                  define ptx_kernel void @k(ptr %p) unnamed_addr #0 {\n  ret void\n}\n";
        let line = run(ir).ir;
        let line = line_of(&line, "define ptx_kernel void @k");
        assert!(
            line.contains("\"nvvm.cluster_dim\"=\"2,2,1\"") && line.contains("\"nvvm.reqntid\"=\"128,1,1\""),
            "{line}"
        );
        let big = ir.replace("[i32 2, i32 2, i32 1]", "[i32 4, i32 4, i32 1]");
        assert!(process(&big).unwrap_err().to_string().contains("at most 8 blocks"));
    }

    #[test]
    fn launch_bounds_for_unknown_kernel_is_an_error() {
        let ir = "define ptx_kernel void @k() {\n  ret void\n}\n\
                  @__oxide_launch_bounds_nope = constant [2 x i32] [i32 128, i32 0], section \"oxide.meta\", align 4\n";
        let e = process(ir).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("line 4") && e.contains("@__oxide_launch_bounds_nope") && e.contains("`nope`"), "{e}");
    }

    #[test]
    fn launch_bounds_out_of_range_is_an_error() {
        let ir = "define ptx_kernel void @k() {\n  ret void\n}\n\
                  @__oxide_launch_bounds_k = constant [2 x i32] [i32 2048, i32 0], section \"oxide.meta\", align 4\n";
        assert!(process(ir).is_err());
    }
}
