//! Byte histogram of 2^28 random bytes (or the count given as the first argument) on the GPU
//! when one is present, else on the CPU executor (`OXIDE_BACKEND=cpu|cuda` forces one), checked
//! exactly against a scalar count.

use example_common::{differs, run_main, run_timed, size_arg};
use std::process::ExitCode;

fn main() -> ExitCode {
    run_main(|_, gpu| {
        let n = size_arg(1, histogram::DEFAULT_SIZE, "byte count")?;
        let p = histogram::problem(42, n);
        let (got, ms) = run_timed(gpu, &p, histogram::run_gpu, histogram::run_cpu)?;
        let peak = got.iter().enumerate().max_by_key(|(_, &c)| c).map_or(0, |(b, _)| b);
        println!(
            "histogram: n = {n} bytes, fullest bin {peak} ({} bytes), {ms:.1} ms including transfers",
            got.get(peak).copied().unwrap_or(0)
        );
        histogram::compare(&got, &histogram::reference(&p)).map_err(differs)?;
        println!("histogram: OK, all 256 bins match the CPU count exactly");
        Ok(())
    })
}
