//! Differential testing of the example kernels: each runs on the GPU and on the CPU executor
//! with random inputs (every size in the example's `SIZES`, several seeds per size), and the
//! two results are compared with each other and with the example's scalar reference using the
//! example's own `compare`.
//!
//! Seeds derive from one master seed ([`MASTER_SEED`], or `OXIDE_DIFF_SEED`), so a run is
//! reproducible; every mismatch prints its kernel, size and case seed, and
//! `OXIDE_DIFF_SEED=<master>` replays the whole run. `OXIDE_DIFF_SEEDS=<k>` sets the seeds per
//! size.

use std::fmt;

/// The default master seed.
pub const MASTER_SEED: u64 = 0x0dd5_eed5_2026_1130;

/// `OXIDE_DIFF_SEED` (decimal or 0x-hex) when set, else [`MASTER_SEED`].
pub fn master_seed() -> Result<u64, String> {
    match std::env::var("OXIDE_DIFF_SEED") {
        Ok(v) => {
            let parsed = match v.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => v.parse(),
            };
            parsed.map_err(|_| format!("OXIDE_DIFF_SEED={v:?} is not a number; use e.g. OXIDE_DIFF_SEED=0x1234"))
        }
        Err(_) => Ok(MASTER_SEED),
    }
}

/// `OXIDE_DIFF_SEEDS` when set, else `default`.
pub fn seeds_per_size(default: usize) -> Result<usize, String> {
    match std::env::var("OXIDE_DIFF_SEEDS") {
        Ok(v) => v.parse().map_err(|_| format!("OXIDE_DIFF_SEEDS={v:?} is not a count; use e.g. OXIDE_DIFF_SEEDS=3")),
        Err(_) => Ok(default),
    }
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seed of case (`kernel`, `size`, `rep`) under `master`: independent streams per kernel,
/// size and repetition.
pub fn case_seed(master: u64, kernel: &str, size: usize, rep: usize) -> u64 {
    let name = kernel.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    mix(mix(mix(master ^ name) ^ size as u64) ^ rep as u64)
}

/// One failed case.
pub struct Mismatch {
    pub kernel: &'static str,
    pub size: usize,
    pub seed: u64,
    pub what: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} size {} seed {:#x}: {}", self.kernel, self.size, self.seed, self.what)
    }
}

/// Per-kernel totals.
pub struct Tally {
    pub kernel: &'static str,
    pub cases: usize,
    pub mismatches: Vec<Mismatch>,
}

impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:<10} cases run: {:>3}, mismatches: {}", self.kernel, self.cases, self.mismatches.len())
    }
}

/// One example's uniform API, borrowed as functions.
pub struct Example<'a, P, O> {
    pub name: &'static str,
    pub sizes: &'a [usize],
    pub problem: fn(u64, usize) -> P,
    pub reference: fn(&P) -> O,
    pub run_cpu: fn(&P) -> Result<O, oxide_rt::Error>,
    pub compare: fn(&O, &O) -> Result<(), String>,
}

/// A GPU run of one example (its `run_gpu` bound to a stream).
pub type GpuRun<'a, P, O> = dyn Fn(&P) -> Result<O, oxide_rt::Error> + 'a;

/// Runs every size x `seeds` case: CPU vs reference, and with `gpu`, GPU vs reference and GPU
/// vs CPU. A failed run counts as a mismatch. Prints one line per mismatch as it happens.
pub fn check<P, O>(ex: &Example<'_, P, O>, master: u64, seeds: usize, gpu: Option<&GpuRun<'_, P, O>>) -> Tally {
    let mut tally = Tally { kernel: ex.name, cases: 0, mismatches: Vec::new() };
    for &size in ex.sizes {
        for rep in 0..seeds {
            let seed = case_seed(master, ex.name, size, rep);
            let p = (ex.problem)(seed, size);
            let want = (ex.reference)(&p);
            let mut fail = |what: String| {
                let m = Mismatch { kernel: ex.name, size, seed, what };
                println!("MISMATCH {m}");
                tally.mismatches.push(m);
            };
            tally.cases += 1;
            let cpu = match (ex.run_cpu)(&p) {
                Ok(out) => {
                    if let Err(e) = (ex.compare)(&out, &want) {
                        fail(format!("CPU executor vs reference: {e}"));
                    }
                    Some(out)
                }
                Err(e) => {
                    fail(format!("CPU executor run failed: {e}"));
                    None
                }
            };
            if let Some(gpu) = gpu {
                match gpu(&p) {
                    Ok(out) => {
                        if let Err(e) = (ex.compare)(&out, &want) {
                            fail(format!("GPU vs reference: {e}"));
                        }
                        if let Some(cpu) = &cpu {
                            if let Err(e) = (ex.compare)(&out, cpu) {
                                fail(format!("GPU vs CPU executor: {e}"));
                            }
                        }
                    }
                    Err(e) => fail(format!("GPU run failed: {e}")),
                }
            }
        }
    }
    tally
}

/// Prints the tallies and returns the total number of mismatches.
pub fn report(title: &str, master: u64, seeds: usize, tallies: &[Tally]) -> usize {
    println!("{title}: master seed {master:#x}, {seeds} seed(s) per size (replay: OXIDE_DIFF_SEED={master:#x} OXIDE_DIFF_SEEDS={seeds})");
    for t in tallies {
        println!("  {t}");
    }
    let bad: usize = tallies.iter().map(|t| t.mismatches.len()).sum();
    for m in tallies.iter().flat_map(|t| &t.mismatches) {
        println!("  failed: {m}");
    }
    bad
}

/// Expands to an [`Example`] for an example crate with the uniform API.
#[macro_export]
macro_rules! example {
    ($krate:ident) => {
        $crate::Example {
            name: stringify!($krate),
            sizes: $krate::SIZES,
            problem: $krate::problem,
            reference: $krate::reference,
            run_cpu: $krate::run_cpu,
            compare: $krate::compare,
        }
    };
}

/// Calls `$m!(crate)` for every example crate.
#[macro_export]
macro_rules! for_each_example {
    ($m:ident) => {
        $m!(saxpy);
        $m!(reduction);
        $m!(sgemm);
        $m!(histogram);
        $m!(transpose);
        $m!(softmax);
        $m!(stencil);
        $m!(scan);
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_seeds_differ_by_kernel_size_and_rep_and_are_stable() {
        let a = case_seed(1, "scan", 10, 0);
        assert_eq!(a, case_seed(1, "scan", 10, 0));
        assert_ne!(a, case_seed(1, "scan", 10, 1));
        assert_ne!(a, case_seed(1, "scan", 11, 0));
        assert_ne!(a, case_seed(1, "stencil", 10, 0));
        assert_ne!(a, case_seed(2, "scan", 10, 0));
    }
}
