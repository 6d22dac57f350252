//! Thread indices bounded by the block a kernel fixes.
//!
//! A kernel with a required block (`#[kernel(block(x, y, z))]`, `"nvvm.reqntid"="x,y,z"`) is
//! never launched with another (the launchers refuse it, and so does the driver); one with launch
//! bounds (`"nvvm.maxntid"`) never with more threads than their product. LLVM's own intrinsic
//! ranges only know `%tid.x < 1024`, so `opt` cannot fold what the real extents decide: a
//! shared-memory index `t / 8 + 32 * i` of a 256-thread block below its array's length, a
//! tile's arithmetic, a `% 16` of `tid.x` in a 16-wide block. Each read of `%tid` and `%ntid`
//! in such a kernel's body gets the range the launch guarantees, as a call-site `range`
//! attribute (`%ntid` of a required block becomes a constant for `opt`).

use super::{one_d_copies::required_block, Line};

/// Adds the ranges to every kernel with a required block or launch bounds; returns how many
/// reads it bounded.
pub(super) fn bound_reads(lines: &mut [Line]) -> usize {
    let mut count = 0;
    // The extents of the kernel whose body the scan is in, if it has any.
    let mut kernel = None;
    for line in lines.iter_mut() {
        if line.text.starts_with("define ") {
            kernel = if line.text.contains(" ptx_kernel ") { extents(&line.text) } else { None };
        } else if line.text.starts_with('}') {
            kernel = None;
        } else if let Some(extents) = &kernel {
            count += usize::from(bound(&mut line.text, extents));
        }
    }
    count
}

/// Per axis, `(lowest, highest)` of `%ntid`: the required block exactly, or `1..=` the launch
/// bounds' thread count (capped by CUDA's 1024 x 1024 x 64); `None` when neither is given.
fn extents(define: &str) -> Option<[(u64, u64); 3]> {
    let fixed = required_block(define);
    if let [x, y, z] = fixed[..] {
        return Some([(x, x), (y, y), (z, z)]);
    }
    let (_, rest) = define.split_once("\"nvvm.maxntid\"=\"")?;
    let most: u64 = rest.split('"').next()?.split(',').filter_map(|e| e.trim().parse::<u64>().ok()).product();
    (most >= 1).then(|| [(1, most.min(1024)), (1, most.min(1024)), (1, most.min(64))])
}

/// Puts the range on a `call i32 @llvm.nvvm.read.ptx.sreg.{tid,ntid}.{x,y,z}()` in `line`
/// that has none yet; whether it did.
fn bound(line: &mut String, extents: &[(u64, u64); 3]) -> bool {
    const CALL: &str = "call i32 @llvm.nvvm.read.ptx.sreg.";
    let Some(at) = line.find(CALL) else { return false };
    let rest = &line[at + CALL.len()..];
    let (reg, axis) = match rest.split('(').next() {
        Some("tid.x") => ("tid", 0),
        Some("tid.y") => ("tid", 1),
        Some("tid.z") => ("tid", 2),
        Some("ntid.x") => ("ntid", 0),
        Some("ntid.y") => ("ntid", 1),
        Some("ntid.z") => ("ntid", 2),
        _ => return false,
    };
    let (lo, hi) = extents[axis];
    let range = match reg {
        "tid" => format!("range(i32 0, {hi}) "),
        _ => format!("range(i32 {lo}, {}) ", hi + 1),
    };
    line.insert_str(at + "call ".len(), &range);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Line> {
        text.lines().enumerate().map(|(i, t)| Line { no: i + 1, text: t.to_string() }).collect()
    }

    fn joined(lines: &[Line]) -> String {
        lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn required_block_bounds_each_axis_and_fixes_ntid() {
        let mut l = lines(
            "define ptx_kernel void @k(ptr %p) unnamed_addr \"nvvm.reqntid\"=\"16,16,1\" #0 {\n\
             start:\n  %tx = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  \
             %ty = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.y()\n  \
             %nx = tail call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()\n  \
             %bx = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n  ret void\n}",
        );
        assert_eq!(bound_reads(&mut l), 3);
        let out = joined(&l);
        assert!(out.contains("%tx = tail call range(i32 0, 16) i32 @llvm.nvvm.read.ptx.sreg.tid.x()"), "{out}");
        assert!(out.contains("%ty = tail call range(i32 0, 16) i32 @llvm.nvvm.read.ptx.sreg.tid.y()"), "{out}");
        assert!(out.contains("%nx = tail call range(i32 16, 17) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()"), "{out}");
        assert!(out.contains("%bx = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()"), "{out}");
    }

    #[test]
    fn launch_bounds_bound_every_axis_by_the_thread_count() {
        let mut l = lines(
            "define ptx_kernel void @k() \"nvvm.maxntid\"=\"256,1,1\" {\n\
             start:\n  %tz = call i32 @llvm.nvvm.read.ptx.sreg.tid.z()\n  \
             %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()\n  ret void\n}",
        );
        assert_eq!(bound_reads(&mut l), 2);
        let out = joined(&l);
        assert!(out.contains("%tz = call range(i32 0, 64) i32"), "{out}");
        assert!(out.contains("%ny = call range(i32 1, 257) i32"), "{out}");
    }

    #[test]
    fn kernels_without_bounds_helpers_and_ranged_reads_stay() {
        let text = "define ptx_kernel void @k() {\n\
             start:\n  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  ret void\n}\n\
             define internal i32 @f() \"nvvm.reqntid\"=\"32,1,1\" {\n\
             start:\n  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  ret i32 %t\n}\n\
             define ptx_kernel void @g() \"nvvm.reqntid\"=\"32,1,1\" {\n\
             start:\n  %t = call range(i32 0, 8) i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  ret void\n}";
        let mut l = lines(text);
        assert_eq!(bound_reads(&mut l), 0);
        assert_eq!(joined(&l), text);
    }
}
