//! Release builds give each kernel that reads a thread position a copy with 32-bit index
//! arithmetic, taken only by launches of at most 2^30 threads whose slices are all shorter than
//! 2^31 elements (`oxide-build/src/ir/narrow_copies.rs`). The differential tests run the narrow
//! copy; these launches are past either limit, so they run the 64-bit copy, which must compute
//! the same. Built with `--release` (ci/gpu-build.sh), where the copies exist.

use oxide_rt::cuda::CudaStream;
use oxide_rt::host::{gpu_available, Gpu};
use oxide_rt::LaunchConfig;
use std::sync::Arc;

fn gpu() -> Option<Gpu> {
    let require = std::env::var("OXIDE_REQUIRE_GPU").is_ok_and(|v| v == "1");
    if !gpu_available() {
        assert!(!require, "OXIDE_REQUIRE_GPU=1 but no CUDA driver or device was found");
        println!("skipped: no CUDA driver or GPU found (set OXIDE_REQUIRE_GPU=1 to make this a failure)");
        return None;
    }
    Some(Gpu::new(0).unwrap_or_else(|e| panic!("a GPU was detected but could not be opened: {e}")))
}

fn saxpy_on(stream: &Arc<CudaStream>, cfg: LaunchConfig, p: &saxpy::Problem) -> Vec<f32> {
    let x = stream.clone_htod(&p.x).expect("copying x");
    let mut y = stream.clone_htod(&p.y).expect("copying y");
    saxpy::kernels::launch_saxpy_with(stream, cfg, p.a, &x, &mut y).expect("launching saxpy");
    stream.clone_dtoh(&y).expect("copying y back")
}

#[test]
fn more_than_2_pow_30_threads_take_the_64_bit_copy() {
    let Some(gpu) = gpu() else { return };
    let p = saxpy::problem(0x1d7, 4099);
    let want = saxpy::reference(&p);
    // 2^30 + 256 threads: one block past the narrow copy's limit; all but the first few idle.
    let blocks = (1u32 << 30) / saxpy::BLOCK + 1;
    let wide = saxpy_on(&gpu.stream, LaunchConfig::new(blocks, saxpy::BLOCK), &p);
    saxpy::compare(&wide, &want).unwrap_or_else(|e| panic!("2^30 + 256 threads: {e}"));
    let narrow = saxpy_on(&gpu.stream, saxpy::config(p.x.len()), &p);
    saxpy::compare(&narrow, &want).unwrap_or_else(|e| panic!("the usual launch: {e}"));
}

#[test]
fn a_slice_of_2_pow_31_elements_takes_the_64_bit_copy() {
    let Some(gpu) = gpu() else { return };
    // 2^31 + 4099 floats (8 GiB per buffer): elements past 2^31 are written too.
    let n = (1usize << 31) + 4099;
    let p = saxpy::Problem {
        a: 1.5,
        x: (0..n).map(|i| (i % 1021) as f32 * 0.25).collect(),
        y: (0..n).map(|i| (i % 7) as f32).collect(),
    };
    let got = saxpy_on(&gpu.stream, saxpy::config(n), &p);
    saxpy::compare(&got, &saxpy::reference(&p)).unwrap_or_else(|e| panic!("2^31 + 4099 elements: {e}"));
}
