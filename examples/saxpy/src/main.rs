//! saxpy over 2^26 elements (or the count given as the first argument) on the GPU when one is
//! present, else on the CPU executor (`OXIDE_BACKEND=cpu|cuda` forces one), checked against a
//! plain loop.

use example_common::{differs, run_main, run_timed, size_arg};
use std::process::ExitCode;

fn main() -> ExitCode {
    run_main(|_, gpu| {
        let n = size_arg(1, saxpy::DEFAULT_SIZE, "element count")?;
        if n > u32::MAX as usize {
            return Err(format!("{n} elements do not fit one 1D launch").into());
        }
        let p = saxpy::problem(42, n);
        let (y, ms) = run_timed(gpu, &p, saxpy::run_gpu, saxpy::run_cpu)?;
        let checked = saxpy::compare(&y, &saxpy::reference(&p));
        println!("saxpy: n = {n}, a = {}, {ms:.1} ms including transfers", p.a);
        checked.map_err(differs)?;
        println!("saxpy: OK, all {n} elements match the CPU reference");
        Ok(())
    })
}
