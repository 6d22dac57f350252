//! Row-wise softmax of a `rows x cols` matrix (default 65536 x 4096; `softmax [cols] [rows]`)
//! on the GPU when one is present, else on the CPU executor (`OXIDE_BACKEND=cpu|cuda` forces
//! one), checked against a plain f64 loop.

use example_common::{differs, run_main, run_timed, size_arg};
use std::process::ExitCode;

fn main() -> ExitCode {
    run_main(|_, gpu| {
        // The CPU executor is far slower: a smaller default matrix there.
        let default_rows = if gpu.is_some() { softmax::BENCH_ROWS } else { 1024 };
        let cols = size_arg(1, softmax::DEFAULT_SIZE, "column count")?;
        let rows = size_arg(2, default_rows, "row count")?;
        let p = softmax::problem_with(42, rows, cols);
        let (y, ms) = run_timed(gpu, &p, softmax::run_gpu, softmax::run_cpu)?;
        let checked = softmax::compare(&y, &softmax::reference(&p));
        let row0: f32 = y.iter().take(cols).sum();
        println!("softmax: {rows} x {cols}, row 0 sums to {row0}, {ms:.1} ms including transfers");
        checked.map_err(differs)?;
        println!("softmax: OK, all {} elements match the CPU reference", rows * cols);
        Ok(())
    })
}
