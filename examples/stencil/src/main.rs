//! A 5-point stencil over a `rows x cols` grid (default 4096 x 4096; `stencil [cols] [rows]`)
//! on the GPU when one is present, else on the CPU executor (`OXIDE_BACKEND=cpu|cuda` forces
//! one), checked bit for bit against a plain loop.

use example_common::{differs, run_main, run_timed, size_arg};
use std::process::ExitCode;

fn main() -> ExitCode {
    run_main(|_, gpu| {
        let cols = size_arg(1, stencil::DEFAULT_SIZE, "column count")?;
        let rows = size_arg(2, cols, "row count")?;
        let p = stencil::problem_with(42, rows, cols);
        let (out, ms) = run_timed(gpu, &p, stencil::run_gpu, stencil::run_cpu)?;
        let checked = stencil::compare(&out, &stencil::reference(&p));
        println!("stencil: {rows} x {cols}, weights {:?}, {ms:.1} ms including transfers", p.w);
        checked.map_err(differs)?;
        println!("stencil: OK, all {} cells match the CPU reference exactly", rows * cols);
        Ok(())
    })
}
