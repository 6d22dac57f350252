//! Per kernel: the llc flags whose code ptxas fits into the registers best.
//!
//! llc's machine sinking moves an instruction into the successor block that uses it. Into a
//! block that runs only sometimes, that saves work. Down into the block where two paths join,
//! it only pulls values away from the loads that feed them: sgemm's 512 FMAs moved below the
//! `if` that stores the next tile, leaving all 32 shared loads of the k-tile above them. ptxas
//! keeps PTX's load order, needs 128 registers for the loads alone, and spills (112 bytes;
//! H200: 1.266 of nvcc's time, 1.152 without sinking). Turned off everywhere, other kernels get
//! slower instead (conv1d_15 1.66 -> 1.83, nbody_tile 1.15 -> 1.35; BENCHMARKS.md). So a module
//! with a kernel that spills, or keeps fewer warps resident than the GPU could, is compiled
//! again with each of [`ALTERNATIVES`], and each kernel takes the first one ptxas reports better
//! for it (fewer spilled bytes, or as many and more resident warps) on some target architecture
//! and worse on none.

use crate::ptxas::KernelResources;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// llc flags tried after the default, in order of preference. The machine scheduler, off by
/// default for NVPTX, orders a block's loads next to their uses as nvcc does.
pub(crate) const ALTERNATIVES: &[&[&str]] =
    &[&["-disable-machine-sink"], &["-disable-machine-sink", "-enable-misched"]];

/// ptxas's per-kernel resources of one PTX text, one map per target architecture.
pub(crate) type Reports = Vec<(String, BTreeMap<String, KernelResources>)>;

/// Whether some kernel could gain from other flags: it spills, or its registers cap the warps
/// an SM keeps resident.
pub(crate) fn worth_trying(reports: &Reports) -> bool {
    reports.iter().any(|(arch, kernels)| kernels.values().any(|r| spilled(r) > 0 || warps(arch, r) < max_warps(arch)))
}

/// For each kernel, the index into `variants` (0: the default) of the code to keep. A variant
/// replaces the one chosen so far when it is better on some architecture and worse on none.
pub(crate) fn choose(variants: &[Reports]) -> BTreeMap<String, usize> {
    let Some((_, names)) = variants.first().and_then(|v| v.first()) else { return BTreeMap::new() };
    let mut chosen = BTreeMap::new();
    for name in names.keys() {
        let mut best = 0;
        for v in 1..variants.len() {
            let verdicts: Vec<Option<Ordering>> = variants[v]
                .iter()
                .zip(&variants[best])
                .map(|((arch, new), (_, old))| Some(better(arch, new.get(name)?, old.get(name)?)))
                .collect();
            if verdicts.iter().all(|o| o.is_some_and(Ordering::is_ge))
                && verdicts.iter().any(|o| o == &Some(Ordering::Greater))
            {
                best = v;
            }
        }
        chosen.insert(name.clone(), best);
    }
    chosen
}

/// How `a` compares with `b` for a kernel on `arch`: fewer spilled bytes first, then more
/// resident warps. Registers below the occupancy limit are free, so they do not count.
fn better(arch: &str, a: &KernelResources, b: &KernelResources) -> Ordering {
    spilled(b).cmp(&spilled(a)).then(warps(arch, a).cmp(&warps(arch, b)))
}

fn spilled(r: &KernelResources) -> u32 {
    r.spill_stores + r.spill_loads
}

/// Warps per SM the register file allows: 64 Ki registers, allocated per warp in units of
/// 256 (8 per thread).
fn warps(arch: &str, r: &KernelResources) -> u32 {
    let per_warp = r.registers.max(1).div_ceil(8) * 8 * 32;
    (65536 / per_warp).min(max_warps(arch))
}

/// Resident warps per SM: 32 on Turing, 48 on consumer Ampere and Ada, 64 elsewhere.
fn max_warps(arch: &str) -> u32 {
    match arch.trim_start_matches("sm_").trim_end_matches(['a', 'f']) {
        "75" => 32,
        "86" | "87" | "89" => 48,
        _ => 64,
    }
}

/// `texts[0]` with the `.entry` of each kernel taken from the text `chosen` names for it, or
/// `None` when the texts differ anywhere outside their functions (then they cannot be mixed
/// safely). Other functions (`.func`) stay as in `texts[0]`: every text holds the same ones,
/// compiled alike but for block placement.
pub(crate) fn splice(texts: &[&str], chosen: &BTreeMap<String, usize>) -> Option<String> {
    let items: Vec<Vec<Item<'_>>> = texts.iter().map(|t| items(t)).collect();
    let base = items.first()?;
    if items.iter().any(|i| i.len() != base.len()) {
        return None;
    }
    let mut out = String::with_capacity(texts[0].len());
    for (at, item) in base.iter().enumerate() {
        match item {
            Item::Function(name, _) => {
                if !items.iter().all(|i| matches!(&i[at], Item::Function(n, _) if n == name)) {
                    return None;
                }
                let from = name.and_then(|n| chosen.get(n)).copied().unwrap_or(0);
                let Item::Function(_, text) = &items.get(from)?[at] else { return None };
                out.push_str(text);
            }
            Item::Other(text) => {
                if !items.iter().all(|i| matches!(&i[at], Item::Other(t) if same_code(t, text))) {
                    return None;
                }
                out.push_str(text);
            }
        }
    }
    Some(out)
}

enum Item<'a> {
    /// A function definition from its first line to its closing brace, with the name when it
    /// is an entry.
    Function(Option<&'a str>, &'a str),
    Other(&'a str),
}

/// The text cut into function definitions and what lies between them.
fn items(text: &str) -> Vec<Item<'_>> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut offsets = Vec::with_capacity(lines.len() + 1);
    offsets.push(0);
    for l in &lines {
        offsets.push(offsets[offsets.len() - 1] + l.len());
    }
    let mut out = Vec::new();
    let (mut other_from, mut i) = (0, 0);
    while i < lines.len() {
        let head = lines[i].trim_start();
        let is_head = [".visible .entry ", ".entry ", ".weak .entry ", ".func ", ".visible .func ", ".weak .func "]
            .iter()
            .any(|p| head.starts_with(p));
        if !is_head {
            i += 1;
            continue;
        }
        // A definition's signature ends at a `{` line, a declaration's at a `;`.
        let decided = lines[i..].iter().position(|l| l.trim() == "{" || l.trim_end().ends_with(';')).map(|p| i + p);
        let body = decided.filter(|&d| lines[d].trim() == "{");
        let close = body.and_then(|d| lines[d..].iter().position(|l| l.trim_end() == "}").map(|p| d + p));
        let Some(close) = close else {
            i += 1;
            continue;
        };
        let name = head.split_once(".entry ").map(|(_, rest)| rest.split(['(', ' ', '\n']).next().unwrap_or(rest));
        out.push(Item::Other(&text[other_from..offsets[i]]));
        out.push(Item::Function(name, &text[offsets[i]..offsets[close + 1]]));
        other_from = offsets[close + 1];
        i = close + 1;
    }
    out.push(Item::Other(&text[other_from..]));
    out
}

/// Text between functions must match, ignoring llc's comments.
fn same_code(a: &str, b: &str) -> bool {
    let code = |t: &str| {
        t.lines()
            .map(|l| l.split("//").next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    };
    code(a) == code(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(registers: u32, spills: u32) -> KernelResources {
        KernelResources { registers, spill_stores: spills, spill_loads: spills, ..Default::default() }
    }

    fn report(arch: &str, kernels: &[(&str, KernelResources)]) -> Reports {
        vec![(arch.to_string(), kernels.iter().map(|(n, r)| (n.to_string(), r.clone())).collect())]
    }

    fn chosen(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
        pairs.iter().map(|(n, v)| (n.to_string(), *v)).collect()
    }

    #[test]
    fn a_kernel_takes_the_first_variant_with_fewer_spills_or_more_resident_warps() {
        let default = report(
            "sm_90",
            &[("spills", res(128, 112)), ("heavy", res(70, 0)), ("light", res(32, 0)), ("worse", res(32, 0))],
        );
        let first = report(
            "sm_90",
            &[("spills", res(128, 32)), ("heavy", res(48, 0)), ("light", res(24, 0)), ("worse", res(40, 0))],
        );
        let second = report(
            "sm_90",
            &[("spills", res(128, 20)), ("heavy", res(48, 0)), ("light", res(16, 0)), ("worse", res(32, 0))],
        );
        assert!(worth_trying(&default));
        // 32 -> 24 registers keeps 64 warps either way: no reason to change; as good is not better.
        assert_eq!(
            choose(&[default, first, second]),
            chosen(&[("heavy", 1), ("light", 0), ("spills", 2), ("worse", 0)])
        );
        assert!(!worth_trying(&report("sm_90", &[("light", res(32, 0))])));
        // Turing keeps at most 32 warps: 64 registers already allow them all.
        assert!(!worth_trying(&report("sm_75", &[("k", res(64, 0))])));
    }

    #[test]
    fn a_variant_worse_on_one_architecture_is_not_taken() {
        let mut default = report("sm_80", &[("k", res(128, 8))]);
        default.extend(report("sm_90", &[("k", res(128, 8))]));
        let mut other = report("sm_80", &[("k", res(128, 0))]);
        other.extend(report("sm_90", &[("k", res(128, 16))]));
        assert_eq!(choose(&[default, other]), chosen(&[("k", 0)]));
    }

    const HEAD: &str =
        "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 8.0\n.target sm_90\n.address_size 64\n\n";

    fn module(a_body: &str, b_body: &str) -> String {
        format!(
            "{HEAD}.global .align 4 .u32 counter;\n\n.visible .entry a(\n\t.param .u64 a_param_0\n)\n{{\n{a_body}\n}}\n\
             // .globl\tb\n.visible .entry b(\n\t.param .u64 b_param_0\n)\n.reqntid 256, 1, 1\n{{\n{b_body}\n}}\n"
        )
    }

    #[test]
    fn splices_the_chosen_entries_and_keeps_the_rest() {
        let base = module("\tret; // a 0", "\tret; // b 0");
        let one = module("\tret; // a 1", "\tret; // b 1");
        let two = module("\tret; // a 2", "\tret; // b 2");
        let mixed = splice(&[&base, &one, &two], &chosen(&[("a", 2), ("b", 1)])).expect("same outside functions");
        assert_eq!(mixed, module("\tret; // a 2", "\tret; // b 1"));
        assert_eq!(splice(&[&base, &one], &chosen(&[])).as_deref(), Some(base.as_str()));
    }

    #[test]
    fn keeps_the_first_text_of_other_functions() {
        let func = |body: &str| {
            format!(
                ".func (.param .b32 func_retval0) helper(\n\t.param .b32 helper_param_0\n)\n;\n\
                 .func (.param .b32 func_retval0) helper(\n\t.param .b32 helper_param_0\n)\n{{\n{body}\n}}\n"
            )
        };
        let base = format!("{}{}", func("\tret; // helper 0"), module("\tret; // a 0", "\tret;"));
        let other = format!("{}{}", func("\tret; // helper 1"), module("\tret; // a 1", "\tret;"));
        let mixed = splice(&[&base, &other], &chosen(&[("a", 1)])).expect("same outside functions");
        assert_eq!(mixed, format!("{}{}", func("\tret; // helper 0"), module("\tret; // a 1", "\tret;")));
    }

    #[test]
    fn refuses_texts_that_differ_outside_their_functions() {
        let base = module("\tret;", "\tret;");
        let other = base.replace(".u32 counter", ".u64 counter");
        assert_eq!(splice(&[&base, &other], &chosen(&[("a", 1)])), None);
        let renamed = base.replace(".visible .entry b", ".visible .entry c");
        assert_eq!(splice(&[&base, &renamed], &chosen(&[("a", 1)])), None);
    }
}
