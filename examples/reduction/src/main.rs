//! Sums 2^26 random f32s (or the count given as the first argument) on the GPU when one is
//! present, else on the CPU executor (`OXIDE_BACKEND=cpu|cuda` forces one), checked against an
//! f64 sum.

use example_common::{differs, run_main, run_timed, size_arg};
use std::process::ExitCode;

fn main() -> ExitCode {
    run_main(|_, gpu| {
        let n = size_arg(1, reduction::DEFAULT_SIZE, "element count")?;
        let p = reduction::problem(42, n);
        let (got, ms) = run_timed(gpu, &p, reduction::run_gpu, reduction::run_cpu)?;
        let want = reduction::reference(&p);
        println!("reduction: n = {n}, sum = {} (exact {}), {ms:.1} ms including transfers", got.sum, want.sum);
        reduction::compare(&got, &want).map_err(differs)?;
        println!(
            "reduction: OK, within {:.2e} of the exact sum (tolerance {:.2e})",
            (got.sum - want.sum).abs(),
            want.tolerance
        );
        Ok(())
    })
}
