//! Bounds checks of indices clamped to the last element, reduced to a test that the length is
//! not zero.
//!
//! Clamping to the edge, `i.min(n - 1)`, then reading through a checked accessor (`get`,
//! `Matrix::get`) tests `umin(n - 1, i) < n`. That holds whenever `n != 0`, but LLVM does not
//! see it: `n - 1` wraps at zero, so it keeps the compare. The kernel has usually returned
//! early for `n == 0` already, yet each clamped index keeps its own loop-invariant predicate
//! alive (sgemm: 8, past the 7 predicate registers, and 20 bytes of spills at 128 registers).
//! `umin(n - 1, i) < n` is exactly `n != 0` (for `n == 0`, `n - 1` is the largest value and
//! `umin(.., i) = i < 0` is false), which the optimiser merges into one test and folds away
//! under the kernel's early return.

use super::Line;
use std::collections::HashMap;

/// Rewrites `%c = icmp [samesign] ult iN %u, %n` into `%c = icmp ne iN %n, 0` where
/// `%u = umin(%d, %i)` (either order) and `%d = add [nsw|nuw] iN %n, -1`.
pub(super) fn clamped_checks(lines: &mut [Line]) {
    let mut start = 0;
    while let Some(offset) = lines[start..].iter().position(|l| l.text.starts_with("define ")) {
        let begin = start + offset;
        let end = lines[begin..].iter().position(|l| l.text == "}").map_or(lines.len(), |e| begin + e);
        rewrite_function(&mut lines[begin..end]);
        start = end;
    }
}

fn rewrite_function(body: &mut [Line]) {
    // `%d` -> `%n` of every `%d = add iN %n, -1`, and `%u` -> its two operands of every umin.
    let mut minus_one: HashMap<String, String> = HashMap::new();
    let mut umin: HashMap<String, (String, String)> = HashMap::new();
    for line in body.iter() {
        let Some((def, rhs)) = line.text.trim_start().split_once(" = ") else { continue };
        if let Some(n) = parse_minus_one(rhs) {
            minus_one.insert(def.to_string(), n.to_string());
        } else if let Some((a, b)) = parse_umin(rhs) {
            umin.insert(def.to_string(), (a.to_string(), b.to_string()));
        }
    }
    if umin.is_empty() {
        return;
    }
    for line in body.iter_mut() {
        let text = line.text.trim_start();
        let indent = &line.text[..line.text.len() - text.len()];
        let Some((c, ty, u, n)) = parse_ult(text) else { continue };
        let Some((a, b)) = umin.get(u) else { continue };
        if [a, b].into_iter().any(|op| minus_one.get(op).is_some_and(|m| m == n)) {
            line.text = format!("{indent}{c} = icmp ne {ty} {n}, 0");
        }
    }
}

fn local(v: &str) -> bool {
    v.starts_with('%') && !v.contains([' ', ',', ')', '('])
}

/// `%n` of `add [nuw] [nsw] iN %n, -1`.
fn parse_minus_one(rhs: &str) -> Option<&str> {
    let rest = rhs.strip_prefix("add ")?;
    let rest = rest.strip_prefix("nuw ").unwrap_or(rest);
    let rest = rest.strip_prefix("nsw ").unwrap_or(rest);
    let (_ty, ops) = rest.split_once(' ')?;
    let n = ops.strip_suffix(", -1")?;
    local(n).then_some(n)
}

/// The operands of `[tail ]call iN @llvm.umin.iN(iN %a, iN %b)`.
fn parse_umin(rhs: &str) -> Option<(&str, &str)> {
    let rest = rhs.strip_prefix("tail ").unwrap_or(rhs).strip_prefix("call ")?;
    let (_ty, rest) = rest.split_once(" @llvm.umin.i")?;
    let args = rest.split_once('(')?.1.strip_suffix(')')?;
    let (a, b) = args.split_once(", ")?;
    let (a, b) = (a.split_once(' ')?.1, b.split_once(' ')?.1);
    (local(a) && local(b)).then_some((a, b))
}

/// `(%c, iN, %u, %n)` of `%c = icmp [samesign] ult iN %u, %n`.
fn parse_ult(text: &str) -> Option<(&str, &str, &str, &str)> {
    let (c, rhs) = text.split_once(" = ")?;
    let rest = rhs.strip_prefix("icmp ")?;
    let rest = rest.strip_prefix("samesign ").unwrap_or(rest).strip_prefix("ult ")?;
    let (ty, ops) = rest.split_once(' ')?;
    let (u, n) = ops.split_once(", ")?;
    (c.starts_with('%') && ty.starts_with('i') && local(u) && local(n)).then_some((c, ty, u, n))
}

#[cfg(test)]
mod tests {
    use crate::ir::tests::run;

    const CLAMP: &str = "define ptx_kernel void @k(ptr %a, i64 %n, i64 %i) {\n\
        start:\n  %last = add nsw i64 %n, -1\n  %j = tail call i64 @llvm.umin.i64(i64 %last, i64 %i)\n\
        \x20 %ok = icmp samesign ult i64 %j, %n\n  br i1 %ok, label %read, label %done\n\
        read:\n  %p = getelementptr inbounds float, ptr %a, i64 %j\n  %v = load float, ptr %p, align 4\n  br label %done\n\
        done:\n  ret void\n}\n\ndeclare i64 @llvm.umin.i64(i64, i64)\n";

    #[test]
    fn a_check_of_an_index_clamped_to_the_last_element_tests_the_length() {
        let out = run(CLAMP).ir;
        assert!(out.contains("  %ok = icmp ne i64 %n, 0\n"), "{out}");
        let swapped = CLAMP.replace("(i64 %last, i64 %i)", "(i64 %i, i64 %last)").replace("add nsw", "add");
        assert!(run(&swapped).ir.contains("  %ok = icmp ne i64 %n, 0\n"));
    }

    #[test]
    fn other_clamps_and_compares_are_left_alone() {
        for ir in [
            CLAMP.replace("%n, -1", "%n, -2"),                 // not the last element
            CLAMP.replace("ult i64 %j, %n", "ult i64 %j, %i"), // compared with something else
            CLAMP.replace("umin", "umax"),
            CLAMP.replace("icmp samesign ult", "icmp ule"),
        ] {
            let out = run(&ir).ir;
            assert!(!out.contains("icmp ne i64 %n, 0"), "{out}");
        }
    }
}
