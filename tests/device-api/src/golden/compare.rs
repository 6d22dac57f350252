//! Comparing two executors' results of one operation, and the agreement table.

use super::{Nan, Op};
use std::fmt::Write as _;

/// The ulp distance of two floats of `bits` bits given as raw bits: their positions on the
/// line of all floats, ordered, with -0 and +0 one apart.
pub fn ulp_distance(a: u64, b: u64, bits: u32) -> u64 {
    let key = |x: u64| -> i128 {
        let sign = x >> (bits - 1) & 1;
        let mag = (x & ((1u128 << (bits - 1)) - 1) as u64) as i128;
        if sign == 1 {
            -mag - 1
        } else {
            mag
        }
    };
    (key(a) - key(b)).unsigned_abs().min(u64::MAX as u128) as u64
}

/// One line of the agreement table.
#[derive(Clone, Debug, Default)]
pub struct Row {
    pub op: String,
    pub inputs: usize,
    pub exact: usize,
    /// Over results that are not both NaN; `u64::MAX` when one side is NaN and the other not.
    /// For integer results, the largest difference.
    pub max_ulp: u64,
    /// NaN against NaN with other bits.
    pub nan_payload: usize,
    pub bound: String,
    /// Results outside the bound (NaN payloads count when the operation says [`Nan::Same`]).
    pub violations: usize,
    /// The first few violations, for the failure message.
    pub examples: Vec<String>,
}

impl Row {
    fn new(op: String, bound: String) -> Row {
        Row { op, bound, ..Row::default() }
    }

    fn violation(&mut self, what: String) {
        self.violations += 1;
        if self.examples.len() < 5 {
            self.examples.push(what);
        }
    }
}

/// Compares float results (raw bits of a `bits`-bit float) of one operation: `got` against
/// `want` (GPU against CPU, or CPU against a reference), `x` the first inputs.
pub fn compare_floats(name: String, op: Op, bits: u32, x: &[f64], got: &[u64], want: &[u64]) -> Row {
    assert_eq!(got.len(), want.len(), "{name}: result counts differ");
    let mut row = Row::new(name, op.describe());
    let to_f64 = |b: u64| if bits == 32 { f32::from_bits(b as u32) as f64 } else { f64::from_bits(b) };
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        row.inputs += 1;
        let (gf, wf) = (to_f64(g), to_f64(w));
        if g == w {
            row.exact += 1;
            continue;
        }
        if gf.is_nan() && wf.is_nan() {
            row.nan_payload += 1;
            if op.nan == Nan::Same {
                row.violation(format!("x = {:e} (#{i}): NaN bits {g:#x} against {w:#x}", x[i]));
            }
            continue;
        }
        let ulp = if gf.is_nan() || wf.is_nan() { u64::MAX } else { ulp_distance(g, w, bits) };
        row.max_ulp = row.max_ulp.max(ulp);
        if ulp == u64::MAX || !op.admits(x[i], wf, gf, ulp) {
            row.violation(format!("x = {:e} (#{i}): {gf:e} ({g:#x}) against {wf:e} ({w:#x}), {ulp} ulp", x[i]));
        }
    }
    row
}

/// Compares integer (or raw-bit) results that must agree exactly.
pub fn compare_exact(name: String, got: &[u64], want: &[u64], input: impl Fn(usize) -> String) -> Row {
    assert_eq!(got.len(), want.len(), "{name}: result counts differ");
    let mut row = Row::new(name, "exact".into());
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        row.inputs += 1;
        if g == w {
            row.exact += 1;
        } else {
            // For integers the distance is the difference itself.
            row.max_ulp = row.max_ulp.max(g.abs_diff(w).min(u64::MAX - 1));
            row.violation(format!("{} (#{i}): {g:#x} against {w:#x}", input(i)));
        }
    }
    row
}

/// Compares float sums that may differ by `tol` (absolute).
pub fn compare_sums(name: String, bits: u32, got: &[u64], want: &[u64], tol: &[f64]) -> Row {
    let mut row = Row::new(name, "2(n-1)·eps·Σ\\|x\\| (any order)".into());
    let to_f64 = |b: u64| if bits == 32 { f32::from_bits(b as u32) as f64 } else { f64::from_bits(b) };
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        row.inputs += 1;
        if g == w {
            row.exact += 1;
            continue;
        }
        let ulp = ulp_distance(g, w, bits);
        row.max_ulp = row.max_ulp.max(ulp);
        if (to_f64(g) - to_f64(w)).abs() > tol[i] || to_f64(g).is_nan() {
            row.violation(format!("round {i}: {} against {} (tolerance {:e})", to_f64(g), to_f64(w), tol[i]));
        }
    }
    row
}

/// The agreement table as markdown, with a title line saying what was compared.
pub fn table(title: &str, rows: &[Row]) -> String {
    let mut s =
        format!("{title}\n\n| operation | inputs | bit-exact | max ulp | NaN payload differs | bound | within |\n");
    s.push_str("| --- | ---: | ---: | ---: | ---: | --- | --- |\n");
    for r in rows {
        let ulp = if r.max_ulp == u64::MAX { "NaN vs number".into() } else { r.max_ulp.to_string() };
        let within = if r.violations == 0 { "yes".into() } else { format!("**no: {}**", r.violations) };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {ulp} | {} | {} | {within} |",
            r.op, r.inputs, r.exact, r.nan_payload, r.bound
        );
    }
    let (inputs, exact): (usize, usize) = rows.iter().fold((0, 0), |(i, e), r| (i + r.inputs, e + r.exact));
    let _ = writeln!(s, "\n{} operations, {inputs} results, {exact} bit-exact.", rows.len());
    s
}

/// Every violation of every row, for an assertion message (empty when all rows are in bound).
pub fn violations(rows: &[Row]) -> String {
    rows.iter()
        .filter(|r| r.violations > 0)
        .map(|r| format!("{}: {} outside {}:\n  {}\n", r.op, r.violations, r.bound, r.examples.join("\n  ")))
        .collect()
}

/// Writes the table to the file `OXIDE_GOLDEN_TABLE` names, if set, and to stdout.
pub fn publish(table: &str) {
    println!("{table}");
    if let Ok(path) = std::env::var("OXIDE_GOLDEN_TABLE") {
        if let Err(e) = std::fs::write(&path, table) {
            panic!("cannot write the golden table to OXIDE_GOLDEN_TABLE={path}: {e}");
        }
    }
}
