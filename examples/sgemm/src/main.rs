//! C = alpha*A*B + beta*C for 4096^3 on the GPU when one is present, else 256-ish on the CPU
//! executor (`OXIDE_BACKEND=cpu|cuda` forces one; the first argument sets the size), checked
//! against an f64 triple loop.

use example_common::{differs, run_main, run_timed, size_arg};
use oxide_rt::Backend;
use std::process::ExitCode;

fn main() -> ExitCode {
    run_main(|backend, gpu| {
        let default = match backend {
            Backend::Cuda => sgemm::DEFAULT_SIZE,
            Backend::Cpu => sgemm::CPU_DEFAULT_SIZE,
        };
        let size = size_arg(1, default, "size")?;
        let p = sgemm::problem(42, size);
        let (got, ms) = run_timed(gpu, &p, sgemm::run_gpu, sgemm::run_cpu)?;
        println!("sgemm: m = {}, n = {}, k = {}, {ms:.1} ms including transfers", p.m, p.n, p.k);
        let want = sgemm::reference(&p);
        sgemm::compare(&got, &want).map_err(differs)?;
        println!(
            "sgemm: OK, all {} elements within the f32 error bound (max abs error {:.2e})",
            got.c.len(),
            sgemm::max_abs_error(&got.c, &want.c)
        );
        Ok(())
    })
}
