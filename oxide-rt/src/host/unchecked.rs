//! The launch-wide test of a kernel's unchecked copy (release builds; oxide-build's
//! `ir/versioned_checks.rs` writes it into the copy's PTX as `// oxide.vc <test>`).
//!
//! The test is `lt(bound, len)&lt(bound, len)...`: each bound is at least the index of every
//! bounds check the copy dropped, for every thread of a launch, written over the kernel's
//! integer parameters (by name), the launch's extents (`ntid.x`, `nctaid.y-1`, ...), numbers
//! and saturating operations. Where every bound is below its length, each dropped check would
//! have passed in every thread, so the copy computes what the kernel computes. Two operations
//! are conditional: `ifle(x,y,v,w)` is `v` where `x <= y` and `w` elsewhere (a bound that holds
//! only where a subtraction cannot wrap, `w` then the largest number); `ne(u,lo,hi)` is `u - 1`
//! where `lo >= u >= hi` (the value it bounds differs from one that is exactly `u`), else `u`. Anything the
//! test names that the launcher did not supply, or cannot read, makes it fail: the kernel runs.

use crate::LaunchConfig;

/// The PTX comment that starts a copy's test (the same string as oxide-build's `TEST_MARK`).
pub(crate) const TEST_MARK: &str = "// oxide.vc ";

/// One parsed test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Test(Vec<(Expr, Expr)>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Expr {
    Number(u64),
    Param(String),
    /// `ntid` / `nctaid` on an axis (0, 1, 2), less one when `true`.
    Extent {
        grid: bool,
        axis: usize,
        minus_one: bool,
    },
    Op {
        op: Op,
        args: Vec<Expr>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    AddSat,
    MulSat,
    Min,
    Max,
    SubSat(u64),
    Sub(u64),
    Shr(u64),
    Div(u64),
    IfLe,
    Ne,
}

impl Test {
    /// The test written into the copy `symbol` of `ptx`, if the copy is there and has one.
    pub(crate) fn find(ptx: &str, symbol: &str) -> Option<Test> {
        let at = ptx.find(&format!(".entry {symbol}("))?;
        let rest = &ptx[at..];
        let end = rest[1..].find(".entry ").map_or(rest.len(), |e| e + 1);
        let line = rest[..end].lines().find_map(|l| l.trim().strip_prefix(TEST_MARK))?;
        Test::parse(line.trim())
    }

    pub(crate) fn parse(text: &str) -> Option<Test> {
        let mut checks = Vec::new();
        for part in text.split('&') {
            let mut p = Parser { s: part.as_bytes(), at: 0 };
            if p.word() != "lt" {
                return None;
            }
            p.eat(b'(')?;
            let bound = p.expr()?;
            p.eat(b',')?;
            let len = p.expr()?;
            p.eat(b')')?;
            if p.at != part.len() {
                return None;
            }
            checks.push((bound, len));
        }
        Some(Test(checks))
    }

    /// Whether every bound is below its length for this launch and these parameter values.
    #[cfg(test)]
    pub(crate) fn passes(&self, cfg: &LaunchConfig, values: &[(&str, Option<u64>)]) -> bool {
        self.failure(cfg, values).is_none()
    }

    /// The first bound not below its length, as `term N: bound >= len` (`?` for a value the
    /// launch did not supply), or None where the test passes.
    pub(crate) fn failure(&self, cfg: &LaunchConfig, values: &[(&str, Option<u64>)]) -> Option<String> {
        self.0.iter().enumerate().find_map(|(i, (bound, len))| {
            let (b, l) = (eval(bound, cfg, values), eval(len, cfg, values));
            let show = |v: Option<u64>| v.map_or("?".to_string(), |v| v.to_string());
            match (b, l) {
                (Some(b), Some(l)) if b < l => None,
                _ => Some(format!("term {}: {} >= {}", i + 1, show(b), show(l))),
            }
        })
    }
}

fn eval(e: &Expr, cfg: &LaunchConfig, values: &[(&str, Option<u64>)]) -> Option<u64> {
    Some(match e {
        Expr::Number(n) => *n,
        Expr::Param(name) => values.iter().find(|(n, _)| n == name)?.1?,
        Expr::Extent { grid, axis, minus_one } => {
            let d = if *grid { cfg.grid } else { cfg.block };
            let v = u64::from([d.x, d.y, d.z][*axis]);
            // A launch has no zero extent (the launchers refuse it), so `- 1` cannot wrap.
            if *minus_one {
                v.checked_sub(1)?
            } else {
                v
            }
        }
        Expr::Op { op, args } => {
            let v: Option<Vec<u64>> = args.iter().map(|a| eval(a, cfg, values)).collect();
            let v = v?;
            match (op, v.as_slice()) {
                (Op::AddSat, [a, b]) => a.saturating_add(*b),
                (Op::MulSat, [a, b]) => a.saturating_mul(*b),
                (Op::Min, [a, b]) => *a.min(b),
                (Op::Max, [first, ..]) => v.iter().copied().fold(*first, u64::max),
                (Op::SubSat(c), [a]) => a.saturating_sub(*c),
                (Op::Sub(c), [a]) => a.checked_sub(*c)?,
                (Op::Shr(c), [a]) => a.checked_shr(u32::try_from(*c).ok()?)?,
                (Op::Div(c), [a]) => a.checked_div(*c)?,
                (Op::IfLe, [x, y, v, w]) => {
                    if x <= y {
                        *v
                    } else {
                        *w
                    }
                }
                (Op::Ne, [u, lo, hi]) if lo >= u && hi <= u => u.checked_sub(1)?,
                (Op::Ne, [u, _, _]) => *u,
                _ => return None,
            }
        }
    })
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn word(&mut self) -> &str {
        let start = self.at;
        while self.at < self.s.len() && !matches!(self.s[self.at], b'(' | b')' | b',') {
            self.at += 1;
        }
        std::str::from_utf8(&self.s[start..self.at]).unwrap_or("")
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.s.get(self.at) == Some(&c)).then(|| self.at += 1)
    }

    fn expr(&mut self) -> Option<Expr> {
        let word = self.word().to_string();
        if self.eat(b'(').is_none() {
            return leaf(&word);
        }
        let mut args = vec![self.expr()?];
        while self.eat(b',').is_some() {
            args.push(self.expr()?);
        }
        self.eat(b')')?;
        let (name, constant) = match word.split_once(':') {
            Some((n, c)) => (n, Some(c.parse::<u64>().ok()?)),
            None => (word.as_str(), None),
        };
        let op = match (name, constant) {
            ("uadd.sat", None) => Op::AddSat,
            ("mul.sat", None) => Op::MulSat,
            ("umin", None) => Op::Min,
            ("umax", None) => Op::Max,
            ("usub.sat", Some(c)) => Op::SubSat(c),
            ("sub", Some(c)) => Op::Sub(c),
            ("lshr", Some(c)) => Op::Shr(c),
            ("udiv", Some(c)) => Op::Div(c),
            ("ifle", None) => Op::IfLe,
            ("ne", None) => Op::Ne,
            _ => return None,
        };
        Some(Expr::Op { op, args })
    }
}

fn leaf(word: &str) -> Option<Expr> {
    if word.is_empty() {
        return None;
    }
    if let Ok(n) = word.parse::<u64>() {
        return Some(Expr::Number(n));
    }
    let (reg, minus_one) = match word.strip_suffix("-1") {
        Some(r) => (r, true),
        None => (word, false),
    };
    for (prefix, grid) in [("ntid.", false), ("nctaid.", true)] {
        if let Some(axis) = reg.strip_prefix(prefix) {
            let axis = ["x", "y", "z"].iter().position(|a| *a == axis)?;
            return Some(Expr::Extent { grid, axis, minus_one });
        }
    }
    let ident = word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    ident.then(|| Expr::Param(word.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOX: &str = "lt(uadd.sat(mul.sat(umin(ntid.y-1,usub.sat:1(rows)),cols),\
                       umin(uadd.sat(mul.sat(nctaid.x-1,ntid.x),ntid.x-1),usub.sat:1(cols))),__oxide_in_input_len)";

    fn cfg(grid: (u32, u32, u32), block: (u32, u32, u32)) -> LaunchConfig {
        LaunchConfig::new(grid, block)
    }

    #[test]
    fn the_largest_index_decides() {
        let t = Test::parse(BOX).unwrap();
        let launch = cfg((4, 1, 1), (32, 8, 1));
        // rows 8, cols 100: the largest index is 7 * 100 + 99 = 799.
        let values = |len: u64| vec![("rows", Some(8)), ("cols", Some(100)), ("__oxide_in_input_len", Some(len))];
        assert!(t.passes(&launch, &values(800)));
        assert!(!t.passes(&launch, &values(799)));
        assert_eq!(t.failure(&launch, &values(799)).as_deref(), Some("term 1: 799 >= 799"));
        // A missing or unreadable value fails the test.
        assert!(!t.passes(&launch, &[("rows", Some(8)), ("__oxide_in_input_len", Some(800))]));
        assert!(!t.passes(&launch, &[("rows", Some(8)), ("cols", None), ("__oxide_in_input_len", Some(800))]));
        // Saturated products never pass.
        assert!(!t.passes(
            &launch,
            &[("rows", Some(u64::MAX)), ("cols", Some(u64::MAX)), ("__oxide_in_input_len", Some(u64::MAX))]
        ));
    }

    #[test]
    fn every_operation_and_extent_reads_back() {
        let t = Test::parse("lt(umax(lshr:2(n),udiv:3(n),sub:1(nctaid.z),5),k)&lt(0,k)").unwrap();
        let launch = cfg((1, 1, 9), (1, 1, 1));
        // max(40 >> 2, 40 / 3, 9 - 1, 5) = 13.
        assert!(t.passes(&launch, &[("n", Some(40)), ("k", Some(14))]));
        assert!(!t.passes(&launch, &[("n", Some(40)), ("k", Some(13))]));
        for bad in ["lt(n,k", "lt(n)", "frob(n,k)", "lt(n,k)x", "lt(sub(n),k)", "lt(n-2,k)", ""] {
            assert_eq!(Test::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_copy_flat_in_z_runs_only_for_launches_one_deep() {
        // oxide-build's terms for a copy that reads the z extents as 1.
        let t = Test::parse("lt(n,k)&lt(nctaid.z-1,1)&lt(ntid.z-1,1)").unwrap();
        let values = [("n", Some(3)), ("k", Some(4))];
        assert!(t.passes(&cfg((8, 8, 1), (16, 16, 1)), &values));
        assert!(!t.passes(&cfg((8, 8, 2), (16, 16, 1)), &values));
        assert!(!t.passes(&cfg((8, 8, 1), (16, 8, 2)), &values));
    }

    #[test]
    fn conditional_bounds_take_their_side() {
        // `i - n` bounded by `i`'s bound 99 only where `n` (at most 10) is at most `i`'s lower
        // bound `lo`; and `y != 7` with `y <= 7` gives `y <= 6`.
        let t = Test::parse("lt(ifle(10,lo,99,18446744073709551615),len)&lt(ne(7,e,e),k)").unwrap();
        let launch = cfg((1, 1, 1), (1, 1, 1));
        let v = |lo: u64, e: u64, k: u64| vec![("lo", Some(lo)), ("len", Some(100)), ("e", Some(e)), ("k", Some(k))];
        assert!(t.passes(&launch, &v(10, 7, 7)));
        assert!(!t.passes(&launch, &v(9, 7, 7)), "the subtraction may wrap: its bound is the largest number");
        assert!(!t.passes(&launch, &v(10, 8, 7)), "`y != 8` says nothing of `y <= 7`");
        assert!(!t.passes(&launch, &v(10, 7, 6)));
        // Zero less one does not exist: the test fails rather than wrap.
        assert!(!Test::parse("lt(ne(0,0,0),5)").unwrap().passes(&launch, &[]));
        assert_eq!(Test::parse("lt(ifle(1,2,3),4)").map(|t| t.passes(&launch, &[])), Some(false));
    }

    #[test]
    fn the_test_is_found_in_its_copy_only() {
        let ptx = ".visible .entry k(\n)\n{\n\tret;\n}\n.visible .entry k__oxide_vc(\n)\n{\n\t// begin inline asm\n\t// oxide.vc lt(n,k)\n\t// end inline asm\n}\n";
        assert_eq!(Test::find(ptx, "k__oxide_vc"), Test::parse("lt(n,k)"));
        assert_eq!(Test::find(ptx, "k"), None);
        assert_eq!(Test::find(ptx, "other__oxide_vc"), None);
    }
}
