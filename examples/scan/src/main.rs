//! Inclusive prefix sum of 2^28 `u32`s (or the count given as the first argument) on the GPU
//! when one is present, else on the CPU executor (`OXIDE_BACKEND=cpu|cuda` forces one), checked
//! against a plain running sum.

use example_common::{differs, run_main, run_timed, size_arg};
use std::process::ExitCode;

fn main() -> ExitCode {
    run_main(|_, gpu| {
        // The CPU executor is far slower: a smaller default there.
        let n = size_arg(1, if gpu.is_some() { scan::DEFAULT_SIZE } else { 1 << 22 }, "element count")?;
        let p = scan::problem(42, n);
        let (y, ms) = run_timed(gpu, &p, scan::run_gpu, scan::run_cpu)?;
        let checked = scan::compare(&y, &scan::reference(&p));
        println!(
            "scan: n = {n} ({} levels), last = {:?}, {ms:.1} ms including transfers",
            scan::levels(n).len(),
            y.last()
        );
        checked.map_err(differs)?;
        println!("scan: OK, all {n} elements match the CPU reference");
        Ok(())
    })
}
