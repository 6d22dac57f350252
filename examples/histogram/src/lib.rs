//! Byte histogram as a library: the kernel plus the uniform example API (random problem,
//! scalar reference, CPU and GPU runs, comparison) shared by main.rs, the differential tests
//! and the benchmarks.
pub mod kernels;

use example_common::{driver_err as err, Rng};
use oxide_rt::cuda::CudaStream;
use oxide_rt::device::atomic::AtomicU32;
use oxide_rt::LaunchConfig;
use std::sync::Arc;

pub use kernels::BINS;

pub const BLOCK: u32 = 256;
/// Enough blocks to fill an H200; more would only add 256 global atomics each.
pub const MAX_BLOCKS: u32 = 1024;
pub const DEFAULT_SIZE: usize = 1 << 28;
/// Byte counts: not multiples of 4 (a partial last word) nor of the block, small and large.
pub const SIZES: &[usize] = &[0, 1, 3, 255, 1023, 1025, 4099, 65_537, 1_000_003, 4_194_319];

pub struct Problem {
    pub bytes: Vec<u8>,
}

pub type Output = Vec<u32>;

/// Random bytes, skewed so some bins are hot (as in real data): half the bytes are uniform,
/// half come from only 16 values.
pub fn problem(seed: u64, size: usize) -> Problem {
    let mut rng = Rng::new(seed);
    let bytes = (0..size)
        .map(|_| {
            let r = rng.next_u64();
            if r & 1 == 0 {
                (r >> 8) as u8
            } else {
                ((r >> 8) as u8) & 0xf0
            }
        })
        .collect();
    Problem { bytes }
}

/// Packs bytes little-endian into u32 words (the kernel's input), zero-padding the last one.
pub fn pack(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks(4).map(|c| c.iter().rev().fold(0u32, |w, &b| w << 8 | b as u32)).collect()
}

pub fn reference(p: &Problem) -> Output {
    let mut h = vec![0u32; BINS];
    for &b in &p.bytes {
        h[b as usize] += 1;
    }
    h
}

/// One block per `BLOCK * 16` bytes (4 words per thread), capped at [`MAX_BLOCKS`].
pub fn config_for(n: usize, block: u32) -> LaunchConfig {
    let blocks = n.div_ceil(block as usize * 16).clamp(1, MAX_BLOCKS as usize) as u32;
    LaunchConfig::new(blocks, block)
}

pub fn run_cpu_with_block(p: &Problem, block: u32) -> Result<Output, oxide_rt::Error> {
    let words = pack(&p.bytes);
    let hist: Vec<AtomicU32> = (0..BINS).map(|_| AtomicU32::new(0)).collect();
    kernels::cpu_histogram256_with(config_for(p.bytes.len(), block), &words, p.bytes.len(), &hist)?;
    Ok(hist.into_iter().map(AtomicU32::into_inner).collect())
}

pub fn run_cpu(p: &Problem) -> Result<Output, oxide_rt::Error> {
    run_cpu_with_block(p, BLOCK)
}

pub fn run_gpu(stream: &Arc<CudaStream>, p: &Problem) -> Result<Output, oxide_rt::Error> {
    let mut words = pack(&p.bytes);
    if words.is_empty() {
        words.push(0); // cudarc cannot copy an empty slice; n = 0 still counts nothing
    }
    let words = stream.clone_htod(&words).map_err(err("copying the bytes to the GPU"))?;
    let mut hist = stream.alloc_zeros::<u32>(BINS).map_err(err("allocating the histogram"))?;
    kernels::launch_histogram256_with(stream, config_for(p.bytes.len(), BLOCK), &words, p.bytes.len(), &mut hist)?;
    stream.clone_dtoh(&hist).map_err(err("copying the histogram back"))
}

/// Counts are exact.
pub fn compare(got: &Output, want: &Output) -> Result<(), String> {
    example_common::compare_exact(got, want, "bin", |g, w| g == w)
}
