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

/// `histogram256` (examples/histogram) keeps both copies: its grid-stride loop compares and
/// indexes in 32 bits in the narrow one.
fn histogram_on(stream: &Arc<CudaStream>, cfg: LaunchConfig, words: &[u32], n: usize) -> Vec<u32> {
    let words = stream.clone_htod(words).expect("copying the words");
    let hist = stream.alloc_zeros::<u32>(histogram::kernels::BINS).expect("allocating the histogram");
    histogram::kernels::launch_histogram256_with(stream, cfg, &words, n, &hist).expect("launching histogram256");
    stream.clone_dtoh(&hist).expect("copying the histogram back")
}

#[test]
fn more_than_2_pow_30_threads_take_the_64_bit_copy() {
    let Some(gpu) = gpu() else { return };
    let p = histogram::problem(0x1d7, 1_000_003);
    let (words, want) = (histogram::pack(&p.bytes), histogram::reference(&p));
    // 2^30 + 256 threads: one block past the narrow copy's limit; most of them idle.
    let blocks = (1u32 << 30) / histogram::BLOCK + 1;
    let wide = histogram_on(&gpu.stream, LaunchConfig::new(blocks, histogram::BLOCK), &words, p.bytes.len());
    histogram::compare(&wide, &want).unwrap_or_else(|e| panic!("2^30 + 256 threads: {e}"));
    let narrow =
        histogram_on(&gpu.stream, histogram::config_for(p.bytes.len(), histogram::BLOCK), &words, p.bytes.len());
    histogram::compare(&narrow, &want).unwrap_or_else(|e| panic!("the usual launch: {e}"));
}

#[test]
fn a_slice_of_2_pow_31_elements_takes_the_64_bit_copy() {
    let Some(gpu) = gpu() else { return };
    // 2^31 + 5 words (8 GiB): words past index 2^31 are counted too.
    let len = (1usize << 31) + 5;
    let words: Vec<u32> = (0..len).map(|i| (i as u32).wrapping_mul(0x9e37_79b9) ^ (i >> 31) as u32).collect();
    let mut want = vec![0u32; histogram::kernels::BINS];
    for w in &words {
        for byte in w.to_le_bytes() {
            want[byte as usize] += 1;
        }
    }
    let n = 4 * len;
    let got = histogram_on(&gpu.stream, histogram::config_for(n, histogram::BLOCK), &words, n);
    histogram::compare(&got, &want).unwrap_or_else(|e| panic!("2^31 + 5 words: {e}"));
}
