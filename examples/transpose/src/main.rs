//! Transposes a 16384 x 16384 f32 matrix (or `size` from the first argument: size x size*3/2+1)
//! on the GPU when one is present, else on the CPU executor (`OXIDE_BACKEND=cpu|cuda` forces
//! one), checked exactly against a scalar transpose.

use example_common::{differs, run_main, run_timed, size_arg};
use std::process::ExitCode;

fn main() -> ExitCode {
    run_main(|_, gpu| {
        let p = transpose::problem(42, size_arg(1, transpose::DEFAULT_SIZE, "size")?);
        let (got, ms) = run_timed(gpu, &p, transpose::run_gpu, transpose::run_cpu)?;
        println!("transpose: {} x {} -> {} x {}, {ms:.1} ms including transfers", p.rows, p.cols, p.cols, p.rows);
        transpose::compare(&got, &transpose::reference(&p)).map_err(differs)?;
        println!("transpose: OK, all {} elements match the CPU transpose exactly", got.len());
        Ok(())
    })
}
