//! The launch's extents (`%ntid`, `%nctaid`) read at the start of each function.
//!
//! ptxas puts one operand of `ctaid * ntid + tid` in a uniform register and the other in a
//! thread register, and which one depends on the order of the two reads in the PTX: with
//! `%ctaid` read first (as Rust's `block_idx().x * block_dim().x` reads them) it loads
//! `%ntid` per thread with `LDC`, with `%ntid` first (as nvcc's PTX has them) it reads `%ntid`
//! once per warp with `ULDC` and `%ctaid` with `S2R`. An `LDC` issues to the memory pipes
//! like a global load: rgb_to_gray (three byte loads and one store per thread) made 6 of them
//! to nvcc's 1, and ncu on the H200 showed its memory pipes 73 % busy against the twin's 30 %
//! (1.09x the twin's time). Read first, every extent is a `ULDC` where its uses allow one
//! (ptxas 13, the whole frozen suite: 538 `LDC` -> 480, none more in any kernel).
//!
//! The reads take no operands and have no effects, so the top of the entry block dominates
//! every use and the move changes nothing else. Runs on `opt`'s output (`opt` would sink them
//! again).

use super::Line;

/// Moves every extent read of each function to the top of its entry block; returns how many
/// moved.
pub(super) fn hoist(lines: &mut Vec<Line>) -> usize {
    let mut moved = 0;
    let mut i = 0;
    while i < lines.len() {
        if !(lines[i].text.starts_with("define ") && lines[i].text.trim_end().ends_with('{')) {
            i += 1;
            continue;
        }
        let end = lines[i..].iter().position(|l| l.text == "}").map_or(lines.len(), |e| i + e);
        // The entry block's first instruction: after the `define` line and any label, past a
        // copy's test (`call void asm sideeffect "// oxide.vc ..."`), which stays first.
        let mut top = i + 1;
        while top < end && (lines[top].text.trim().is_empty() || lines[top].text.trim_end().ends_with(':')) {
            top += 1;
        }
        while top < end && lines[top].text.contains("asm sideeffect \"// oxide.") {
            top += 1;
        }
        let reads: Vec<usize> = (top..end).filter(|&j| is_extent_read(&lines[j].text)).collect();
        let already = reads.iter().enumerate().all(|(k, &j)| j == top + k);
        if !already {
            let taken: Vec<Line> = reads.iter().rev().map(|&j| lines.remove(j)).collect();
            for line in taken {
                lines.insert(top, line);
            }
            moved += reads.len();
        }
        i = end + 1;
    }
    moved
}

/// `%r = [tail] call [range(..)] i32 @llvm.nvvm.read.ptx.sreg.{ntid,nctaid}.{x,y,z}()`.
fn is_extent_read(text: &str) -> bool {
    let Some((lhs, rhs)) = text.split_once(" = ") else { return false };
    lhs.trim().starts_with('%')
        && rhs.contains("call ")
        && ["ntid", "nctaid"].iter().any(|r| {
            ["x", "y", "z"].iter().any(|d| rhs.trim_end().ends_with(&format!("@llvm.nvvm.read.ptx.sreg.{r}.{d}()")))
        })
}

#[cfg(test)]
mod tests {
    use crate::ir::tests::{assert_valid_ir, transformed};

    const KERNEL: &str = "\
define ptx_kernel void @k(ptr %out) {
start:
  call void asm sideeffect \"// oxide.vc lt(x,y)\", \"\"()
  %b = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %n = tail call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %t = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %m = mul i32 %b, %n
  %i = add i32 %m, %t
  %c = icmp eq i32 %i, 0
  br i1 %c, label %more, label %done

more:
  %g = tail call i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()
  store i32 %g, ptr %out, align 4
  br label %done

done:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()
";

    #[test]
    fn extents_are_read_first_after_a_copys_test() {
        let (out, n) = transformed(KERNEL, super::hoist);
        assert_valid_ir("extents_first", &out);
        assert_eq!(n, 2, "{out}");
        let want = "start:\n  call void asm sideeffect \"// oxide.vc lt(x,y)\", \"\"()\n  \
            %n = tail call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()\n  \
            %g = tail call i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()\n  \
            %b = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n";
        assert!(out.contains(want), "{out}");
        assert!(out.contains("more:\n  store i32 %g"), "{out}");
        // Run again, nothing moves.
        let (again, n) = transformed(&out, super::hoist);
        assert_eq!((n, &again), (0, &out));
    }
}
