//! The launch's extents (`%ntid`, `%nctaid`) read before the block index in each block.
//!
//! ptxas puts one operand of `ctaid * ntid + tid` in a uniform register and the other in a
//! thread register, and which one depends on the order of the two reads in the PTX: with
//! `%ctaid` read first (as Rust's `block_idx().x * block_dim().x` reads them) it loads
//! `%ntid` per thread with `LDC`, with `%ntid` first (as nvcc's PTX has them) it reads `%ntid`
//! once per warp with `ULDC` and `%ctaid` with `S2R`. An `LDC` issues to the memory pipes
//! like a global load: rgb_to_gray (three byte loads and one store per thread) made 6 of them
//! to nvcc's 1, and ncu on the H200 showed its memory pipes 73 % busy against the twin's 30 %
//! (1.09x the twin's time). Read first, every extent is a `ULDC` where its uses allow one
//! (ptxas 13, the whole frozen suite: 538 `LDC` -> 496, none more in any kernel; the hot
//! paths of the copies the benchmarks run keep only the stack pointer's and 64-bit pointers'
//! `LDC`s).
//!
//! So in each block, the extent reads after its first block-index read move up to just before
//! it. The reads take no operands and have no effects, so they may go anywhere above their
//! uses; they stay in their block, because a read moved up into the entry block from a later
//! one (a panic path's report reads all six extents) is live across the whole kernel (sgemm:
//! 0.970 -> 1.012 of nvcc's time with every read moved to the kernel's start). Runs on `opt`'s
//! output (`opt` would sink them again).

use super::Line;

/// Moves, in every block, the extent reads that follow its first block-index read up to just
/// before that read; returns how many moved.
pub(super) fn hoist(lines: &mut [Line]) -> usize {
    let mut moved = 0;
    let mut i = 0;
    while i < lines.len() {
        // A block runs from a label (or a function's start) to the next label or `}`.
        let end = (i + 1..lines.len()).find(|&j| starts_block(&lines[j].text)).unwrap_or(lines.len());
        let first_index = (i..end).find(|&j| reads(&lines[j].text, &["ctaid"]));
        if let Some(first) = first_index {
            let extents: Vec<usize> =
                (first + 1..end).filter(|&j| reads(&lines[j].text, &["ntid", "nctaid"])).collect();
            for (k, &j) in extents.iter().enumerate() {
                // Each read goes to the slot after the ones moved before it.
                lines[first + k..=j].rotate_right(1);
            }
            moved += extents.len();
        }
        i = end;
    }
    moved
}

/// Whether `text` opens a block: a label, a `define`, or a function's closing `}`.
fn starts_block(text: &str) -> bool {
    let label = !text.starts_with(char::is_whitespace)
        && text
            .split_once(':')
            .is_some_and(|(l, _)| !l.is_empty() && !l.contains(' ') && !l.starts_with([';', '!', '@', '#']));
    text.starts_with("define ") || text.starts_with('}') || label
}

/// `%r = [tail] call [range(..)] i32 @llvm.nvvm.read.ptx.sreg.<register>.{x,y,z}()` of one of
/// `registers`.
fn reads(text: &str, registers: &[&str]) -> bool {
    let Some((lhs, rhs)) = text.split_once(" = ") else { return false };
    lhs.trim().starts_with('%')
        && rhs.contains("call ")
        && registers.iter().any(|r| {
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
    fn extents_are_read_before_the_block_index_in_their_block() {
        let (out, n) = transformed(KERNEL, |lines| super::hoist(lines));
        assert_valid_ir("extents_first", &out);
        assert_eq!(n, 1, "{out}");
        let want = "start:\n  call void asm sideeffect \"// oxide.vc lt(x,y)\", \"\"()\n  \
            %n = tail call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()\n  \
            %b = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n  %t = tail call";
        assert!(out.contains(want), "{out}");
        // A read in a later block (a panic path's report) stays there: moved up, it would be
        // live across the kernel.
        assert!(out.contains("more:\n  %g = tail call i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()\n"), "{out}");
        // Run again, nothing moves.
        let (again, n) = transformed(&out, |lines| super::hoist(lines));
        assert_eq!((n, &again), (0, &out));
    }
}
