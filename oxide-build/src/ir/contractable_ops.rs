//! The kernels' own float multiplies and adds marked `contract`, so llc fuses them into `fma`
//! as nvcc's default `--fmad=true` does — and nothing else.
//!
//! `llc --fp-contract=fast` fused every `fmul` + `fadd` pair of the module, libdevice's
//! included; libdevice keeps some products and sums apart on purpose, and fusing them cost
//! accuracy: `__nv_powf` was 11 ulp from the exact value at x = 1.5707963, y = 157.07962 on
//! the H200, where nvcc's `powf` is 1 ulp (`fast` made 21 `fma` of its code, nvcc makes 19).
//! So the flag goes on the instructions rustc wrote for the kernels (before libdevice is
//! linked) and llc runs with `--fp-contract=on`, which fuses only what is marked.
//!
//! One step more after `opt` has inlined libdevice ([`mark_results`]): a product libdevice
//! returns (`expf` ends in `2^k * ex2(f)`) that only the kernels' own marked adds use is
//! marked too, so `s += exp(v - m)` is one `FFMA` as under nvcc, whose `--fmad=true` fuses
//! across the inlined call; libdevice's own adds stay unmarked, so nothing inside it fuses
//! (xent_rows: `FMUL` + `FADD` for each element where nvcc has one `FFMA`).

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

/// Adds `contract` to every `fmul` whose uses are all marked `fadd`/`fsub`s of its function;
/// returns how many it marked. Runs on `opt`'s output, where libdevice's code is inlined.
pub(super) fn mark_results(lines: &mut Vec<Line>) -> usize {
    super::each_function(lines, |body| mark_results_in(body))
}

fn mark_results_in(body: &mut [Line]) -> usize {
    let mut products: Vec<(usize, String)> = Vec::new();
    for (i, line) in body.iter().enumerate() {
        let Some((lhs, rhs)) = line.text.split_once(" = ") else { continue };
        let Some(rest) = rhs.strip_prefix("fmul ") else { continue };
        if rest.split_whitespace().take_while(|w| is_flag(w)).any(|f| f == "contract" || f == "fast") {
            continue;
        }
        products.push((i, lhs.trim().to_string()));
    }
    let mut count = 0;
    for (i, name) in products {
        let uses: Vec<&str> = body
            .iter()
            .enumerate()
            .filter(|(j, l)| *j != i && super::uses_value(&l.text, &name))
            .map(|(_, l)| l.text.as_str())
            .collect();
        let marked_add = |text: &str| {
            let Some((_, rhs)) = text.split_once(" = ") else { return false };
            let Some(rest) = rhs.strip_prefix("fadd ").or_else(|| rhs.strip_prefix("fsub ")) else { return false };
            rest.split_whitespace().take_while(|w| is_flag(w)).any(|f| f == "contract" || f == "fast")
        };
        if uses.is_empty() || !uses.iter().all(|u| marked_add(u)) {
            continue;
        }
        let Some((lhs, rhs)) = body[i].text.split_once(" = ") else { continue };
        body[i].text = format!("{lhs} = fmul contract {}", &rhs["fmul ".len()..]);
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

    #[test]
    fn a_product_only_marked_adds_use_becomes_contractable() {
        let ir = "define float @k(float %a, float %b, float %c) {\n  %e = fmul float %a, %b\n  %s = fadd contract float %e, %c\n  %t = fsub contract float %c, %e\n  %p = fmul float %a, %c\n  %q = fadd float %p, %c\n  %r = fmul float %b, %c\n  %u = fadd contract float %r, %c\n  %w = fmul float %r, %c\n  ret float %u\n}\ndefine float @j(float %a) {\n  %e = fmul float %a, %a\n  ret float %e\n}";
        let mut lines: Vec<Line> =
            ir.lines().enumerate().map(|(i, t)| Line { no: i + 1, text: t.to_string() }).collect();
        let n = mark_results(&mut lines);
        let out: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        // Only `%e` of `@k`: `%p` feeds an unmarked add (libdevice's own), `%r` also a multiply,
        // and `@j`'s `%e` is returned.
        assert_eq!(n, 1, "{out:?}");
        assert_eq!(out[1], "  %e = fmul contract float %a, %b");
        assert_eq!(out[4], "  %p = fmul float %a, %c");
        assert_eq!(out[6], "  %r = fmul float %b, %c");
        assert_eq!(out[12], "  %e = fmul float %a, %a");
    }
}
