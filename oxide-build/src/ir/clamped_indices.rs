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
///
/// `(k + 1).min(n - 1)` with `k + 1` known not to wrap reaches here as
/// `select (%d u> %k), (add nuw %k, 1), %d`, which is that same minimum: it counts as one.
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
    // For the select form: `%a` -> `%k` of `add nuw iN %k, 1`, `%c` -> `(%d, %k)` of `%d u> %k`.
    let mut plus_one: HashMap<&str, &str> = HashMap::new();
    let mut above: HashMap<&str, (&str, &str)> = HashMap::new();
    let mut selects = Vec::new();
    for line in body.iter() {
        let Some((def, rhs)) = line.text.trim_start().split_once(" = ") else { continue };
        if let Some(n) = parse_minus_one(rhs) {
            minus_one.insert(def.to_string(), n.to_string());
        } else if let Some((a, b)) = parse_umin(rhs) {
            umin.insert(def.to_string(), (a.to_string(), b.to_string()));
        } else if let Some(k) = parse_plus_one(rhs) {
            plus_one.insert(def, k);
        } else if let Some(dk) = parse_above(rhs) {
            above.insert(def, dk);
        } else if let Some(sel) = parse_select(rhs) {
            selects.push((def, sel));
        }
    }
    for (def, (c, a, d)) in selects {
        let Some(&(cd, k)) = above.get(c) else { continue };
        if cd == d && plus_one.get(a) == Some(&k) {
            umin.insert(def.to_string(), (a.to_string(), d.to_string()));
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

/// `%k` of `add nuw [nsw] iN %k, 1`.
fn parse_plus_one(rhs: &str) -> Option<&str> {
    let rest = rhs.strip_prefix("add nuw ")?;
    let rest = rest.strip_prefix("nsw ").unwrap_or(rest);
    let k = rest.split_once(' ')?.1.strip_suffix(", 1")?;
    local(k).then_some(k)
}

/// `(%d, %k)` of `icmp [samesign] ugt iN %d, %k` or `icmp [samesign] ult iN %k, %d`.
fn parse_above(rhs: &str) -> Option<(&str, &str)> {
    let rest = rhs.strip_prefix("icmp ")?;
    let rest = rest.strip_prefix("samesign ").unwrap_or(rest);
    let (pred, rest) = rest.split_once(' ')?;
    let (a, b) = rest.split_once(' ')?.1.split_once(", ")?;
    let (d, k) = match pred {
        "ugt" => (a, b),
        "ult" => (b, a),
        _ => return None,
    };
    (local(d) && local(k)).then_some((d, k))
}

/// `(%c, %a, %b)` of `select i1 %c, iN %a, iN %b`.
fn parse_select(rhs: &str) -> Option<(&str, &str, &str)> {
    let (c, rest) = rhs.strip_prefix("select i1 ")?.split_once(", ")?;
    let (a, b) = rest.split_once(", ")?;
    let (a, b) = (a.split_once(' ')?.1, b.split_once(' ')?.1);
    (local(c) && local(a) && local(b)).then_some((c, a, b))
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

    /// `(i + 1).min(n - 1)` once LLVM knows `i + 1` does not wrap.
    const CLAMP_NEXT: &str = "define ptx_kernel void @k(ptr %a, i64 %n, i64 %i) {\n\
        start:\n  %last = add nsw i64 %n, -1\n  %next = add nuw nsw i64 %i, 1\n\
        \x20 %below = icmp samesign ugt i64 %last, %i\n  %j = select i1 %below, i64 %next, i64 %last\n\
        \x20 %ok = icmp samesign ult i64 %j, %n\n  br i1 %ok, label %read, label %done\n\
        read:\n  %p = getelementptr inbounds float, ptr %a, i64 %j\n  %v = load float, ptr %p, align 4\n  br label %done\n\
        done:\n  ret void\n}\n";

    #[test]
    fn a_check_of_the_next_index_clamped_to_the_last_element_tests_the_length() {
        assert!(run(CLAMP_NEXT).ir.contains("  %ok = icmp ne i64 %n, 0\n"));
        let ult = CLAMP_NEXT.replace("ugt i64 %last, %i", "ult i64 %i, %last");
        assert!(run(&ult).ir.contains("  %ok = icmp ne i64 %n, 0\n"));
        for ir in [
            CLAMP_NEXT.replace("add nuw nsw i64 %i, 1", "add nsw i64 %i, 1"), // may wrap
            CLAMP_NEXT.replace("add nuw nsw i64 %i, 1", "add nuw nsw i64 %i, 2"), // may pass the last
            CLAMP_NEXT.replace("ugt i64 %last, %i", "uge i64 %last, %i"),
            CLAMP_NEXT.replace("i64 %next, i64 %last", "i64 %last, i64 %next"),
        ] {
            let out = run(&ir).ir;
            assert!(!out.contains("icmp ne i64 %n, 0"), "{out}");
        }
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
