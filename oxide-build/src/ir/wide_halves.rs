//! 16-bit integer arithmetic computed in 32 bits (after `opt`, before `llc`).
//!
//! `(77 * r + 150 * g + 29 * b + 128) >> 8` on `u32` values read from bytes fits in 16 bits,
//! so `opt` narrows it to `i16`, and NVPTX emits `mul.lo.s16`/`add.s16`. The GPU has no 16-bit
//! ALU: ptxas computes each in a 32-bit register and re-extends it with a `PRMT` or masks it
//! with a `LOP3` before the next (H200 SASS of rgb_to_gray: 10 instructions between the reads
//! and the store where nvcc's twin, computing in `int`, needs 6). Here each `add`, `sub`,
//! `mul`, `and`, `or`, `xor`, `shl` and `lshr` on `i16` becomes the same operation on its
//! operands zero-extended to `i32`, truncated back: the low 16 bits of those are the `i16`
//! result (a shift by 16 or more is poison in `i16`, any value in the copy), and the flags that
//! make a result poison are dropped, never added. llc keeps the 32-bit form (NVPTX does not
//! narrow `i32` to `i16`), and the extensions fold into the reads and `mul.wide.u16`.

use super::Line;

const OPS: [&str; 8] = ["add", "sub", "mul", "and", "or", "xor", "shl", "lshr"];

/// Rewrites every `i16` operation of [`OPS`] in `lines`; returns how many.
pub(super) fn widen(lines: &mut Vec<Line>) -> usize {
    let mut count = 0;
    let mut out = Vec::with_capacity(lines.len());
    for line in lines.drain(..) {
        match widened(&line.text, count) {
            Some(new) => {
                count += 1;
                out.extend(new.into_iter().map(|text| Line { no: line.no, text }));
            }
            None => out.push(line),
        }
    }
    *lines = out;
    count
}

/// `%x = OP [flags] i16 A, B` as `zext`s, the 32-bit operation and a `trunc` to `%x`.
fn widened(text: &str, id: usize) -> Option<Vec<String>> {
    let (lhs, rhs) = text.split_once(" = ")?;
    let name = lhs.trim();
    if !name.starts_with('%') {
        return None;
    }
    let indent = &lhs[..lhs.len() - lhs.trim_start().len()];
    let rhs = rhs.split(", !").next()?;
    let mut words = rhs.split_whitespace();
    let op = words.next()?;
    if !OPS.contains(&op) {
        return None;
    }
    let rest: Vec<&str> = words.skip_while(|w| matches!(*w, "nuw" | "nsw" | "exact" | "disjoint")).collect();
    let [ty, a, b] = rest.as_slice() else { return None };
    if *ty != "i16" {
        return None;
    }
    let a = a.strip_suffix(',')?;
    let mut lines = Vec::new();
    let mut wide = |v: &str, tag: char| -> Option<String> {
        if v.starts_with('%') {
            let w = format!("%__oxide_w{id}{tag}");
            lines.push(format!("{indent}{w} = zext i16 {v} to i32"));
            return Some(w);
        }
        // A constant: its 16 bits, unsigned.
        let c: i64 = v.parse().ok()?;
        Some((c & 0xffff).to_string())
    };
    let (a, b) = (wide(a, 'a')?, wide(b, 'b')?);
    let w = format!("%__oxide_w{id}");
    lines.push(format!("{indent}{w} = {op} i32 {a}, {b}"));
    lines.push(format!("{indent}{name} = trunc i32 {w} to i16"));
    Some(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRAY: &str = "define ptx_kernel void @k(ptr %p, i16 %r, i16 %g, i16 %b) #0 {
start:
  %m = mul nuw nsw i16 %r, 77
  %n = mul nuw i16 %g, 150
  %s = add nuw nsw i16 %m, -128
  %t = add nuw i16 %s, %n
  %u = lshr i16 %t, 8
  %v = trunc nuw i16 %u to i8
  %d = udiv i16 %t, 9
  %q = ashr i16 %t, 2
  store i8 %v, ptr %p, align 1
  ret void
}
";

    #[test]
    fn sixteen_bit_arithmetic_is_computed_in_32_bits() {
        let (out, n) = crate::ir::tests::transformed(GRAY, widen);
        assert_eq!(n, 5, "{out}");
        for want in [
            "  %__oxide_w0a = zext i16 %r to i32\n  %__oxide_w0 = mul i32 %__oxide_w0a, 77\n  %m = trunc i32 %__oxide_w0 to i16\n",
            // A negative constant is its 16 bits.
            "  %__oxide_w2 = add i32 %__oxide_w2a, 65408\n  %s = trunc i32 %__oxide_w2 to i16\n",
            "  %__oxide_w4 = lshr i32 %__oxide_w4a, 8\n  %u = trunc i32 %__oxide_w4 to i16\n",
            // Division and arithmetic shifts stay (unsigned extension would change them).
            "  %d = udiv i16 %t, 9\n  %q = ashr i16 %t, 2\n",
        ] {
            assert!(out.contains(want), "missing\n{want}\nin\n{out}");
        }
        crate::ir::tests::assert_valid_ir("wide-halves", &out);
    }

    #[test]
    fn other_widths_and_vectors_stay() {
        for ir in ["  %a = add i32 %x, 1", "  %a = add <2 x i16> %x, %y", "  store i16 %x, ptr %p, align 2"] {
            let (out, n) = crate::ir::tests::transformed(ir, widen);
            assert_eq!((n, out.as_str()), (0, format!("{ir}\n").as_str()));
        }
    }
}
