//! The kernels' own float multiplies and adds marked `contract`, so llc fuses them into `fma`
//! as nvcc's default `--fmad=true` does — and nothing else.
//!
//! `llc --fp-contract=fast` fused every `fmul` + `fadd` pair of the module, libdevice's
//! included; libdevice keeps some products and sums apart on purpose, and fusing them cost
//! accuracy: `__nv_powf` was 11 ulp from the exact value at x = 1.5707963, y = 157.07962 on
//! the H200, where nvcc's `powf` is 1 ulp (`fast` made 21 `fma` of its code, nvcc makes 19).
//! So the flag goes on the instructions rustc wrote for the kernels (before libdevice is
//! linked) and llc runs with `--fp-contract=on`, which fuses only what is marked.

use super::Line;

/// Float instructions a multiply-add is made of.
const OPS: [&str; 3] = ["fmul", "fadd", "fsub"];

/// Adds `contract` to every `fmul`/`fadd`/`fsub` that lacks it; returns how many it marked.
pub(super) fn mark(lines: &mut [Line]) -> usize {
    let mut count = 0;
    for line in lines.iter_mut() {
        let Some((lhs, rhs)) = line.text.split_once(" = ") else { continue };
        if !lhs.trim_start().starts_with('%') {
            continue;
        }
        let Some(op) = OPS.iter().find(|op| rhs.starts_with(&format!("{op} "))) else { continue };
        let rest = &rhs[op.len() + 1..];
        // Fast-math flags come first: `fmul nnan contract float ..`; `fast` implies contract.
        let flags: Vec<&str> = rest.split_whitespace().take_while(|w| is_flag(w)).collect();
        if flags.iter().any(|f| *f == "contract" || *f == "fast") {
            continue;
        }
        line.text = format!("{lhs} = {op} contract {rest}");
        count += 1;
    }
    count
}

fn is_flag(word: &str) -> bool {
    matches!(word, "nnan" | "ninf" | "nsz" | "arcp" | "contract" | "afn" | "reassoc" | "fast")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ir: &str) -> (String, usize) {
        let mut lines: Vec<Line> =
            ir.lines().enumerate().map(|(i, t)| Line { no: i + 1, text: t.to_string() }).collect();
        let n = mark(&mut lines);
        (lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join("\n"), n)
    }

    #[test]
    fn multiplies_and_adds_become_contractable() {
        let ir = "  %m = fmul float %a, %b\n  %s = fadd float %m, %c\n  %d = fsub double %x, %y\n  %v = fmul <2 x float> %p, %q";
        let (out, n) = run(ir);
        assert_eq!(n, 4);
        assert_eq!(
            out,
            "  %m = fmul contract float %a, %b\n  %s = fadd contract float %m, %c\n  %d = fsub contract double %x, %y\n  %v = fmul contract <2 x float> %p, %q"
        );
    }

    #[test]
    fn flagged_and_other_instructions_are_left_alone() {
        let ir = "  %m = fmul nnan contract float %a, %b\n  %s = fadd fast float %m, %c\n  %d = fdiv float %x, %y\n  %i = add i32 %x, %y\n  call void @fadd(float %x)\n@g = global float 0.0";
        let (out, n) = run(ir);
        assert_eq!(n, 0);
        assert_eq!(out, ir);
        let (out, n) = run("  %m = fmul nnan float %a, %b");
        assert_eq!((out.as_str(), n), ("  %m = fmul contract nnan float %a, %b", 1));
    }
}
