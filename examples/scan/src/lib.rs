//! Inclusive prefix sum of `u32` as a library: the kernels plus the uniform example API (random
//! problem, scalar reference, CPU and GPU runs, comparison) shared by main.rs, the differential
//! tests and the benchmarks.
pub mod kernels;

use example_common::{driver_err as err, Rng};
use oxide_rt::cuda::{CudaSlice, CudaStream};
use oxide_rt::host::Graph;
use oxide_rt::LaunchConfig;
use std::sync::Arc;

pub use kernels::BLOCK;
/// Default element count (main.rs) and the bench size: 2^28 (1 GiB in, 1 GiB out).
pub const DEFAULT_SIZE: usize = 1 << 28;
/// Largest supported `n` (2^32 - 1 keeps every launch's grid within limits and the indices in
/// range; the bench uses 2^28).
pub const MAX_N: usize = u32::MAX as usize;
/// Differential-test sizes: one element, around one block, two levels, and the smallest
/// three-level size plus one (1025 * 1024 + 1).
pub const SIZES: &[usize] = &[1, 1023, 1024, 1025, 4099, 65_537, 1_049_601];

pub struct Problem {
    pub x: Vec<u32>,
}

pub type Output = Vec<u32>;

/// Full-range `u32`s, so sums wrap many times.
pub fn problem(seed: u64, size: usize) -> Problem {
    Problem { x: Rng::new(seed).vec_u32(size) }
}

/// The scalar reference: a running wrapping sum.
pub fn reference(p: &Problem) -> Output {
    let mut acc = 0u32;
    p.x.iter()
        .map(|&v| {
            acc = acc.wrapping_add(v);
            acc
        })
        .collect()
}

/// Logical element counts per level: `n`, then the number of full blocks of the level below,
/// until one block holds a level.
pub fn levels(n: usize) -> Vec<usize> {
    let b = BLOCK as usize;
    let mut l = vec![n];
    while let Some(&last) = l.last() {
        if last <= b {
            break;
        }
        l.push(last / b);
    }
    l
}

/// The launches of a scan of `n` elements, in order: `(kernel, level)` with kernel `Totals`
/// (`scan_block_totals`) or `Scan` (`scan_blocks`). Level `k` reads the data (k = 0, stride 1)
/// or level `k-1`'s output (stride `BLOCK`), writes its own output buffer of `levels[k]`
/// elements, and `Scan` at `k` reads level `k+1`'s output as offsets.
pub fn schedule(n: usize) -> Vec<(Step, usize)> {
    let depth = levels(n).len();
    let mut s: Vec<(Step, usize)> = (0..depth - 1).map(|k| (Step::Totals, k)).collect();
    s.extend((0..depth).rev().map(|k| (Step::Scan, k)));
    s
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Totals,
    Scan,
}

/// `n` elements, one per thread.
pub fn config(n: usize) -> LaunchConfig {
    LaunchConfig::new((n.div_ceil(BLOCK as usize).max(1)) as u32, BLOCK)
}

/// The stride at which level `k` reads its input.
pub fn stride(k: usize) -> usize {
    if k == 0 {
        1
    } else {
        BLOCK as usize
    }
}

fn check(n: usize) -> Result<(), oxide_rt::Error> {
    if n > MAX_N {
        return Err(oxide_rt::Error::Config(format!(
            "scan: {n} elements exceed the supported {MAX_N}; scan in chunks"
        )));
    }
    Ok(())
}

pub fn run_cpu(p: &Problem) -> Result<Output, oxide_rt::Error> {
    let n = p.x.len();
    check(n)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let sizes = levels(n);
    let mut outs: Vec<Vec<u32>> = sizes.iter().map(|&m| vec![0u32; m]).collect();
    let dummy = [0u32];
    for (step, k) in schedule(n) {
        let (below, rest) = outs.split_at_mut(k);
        let (cur, above) = rest.split_at_mut(1);
        let input: &[u32] = if k == 0 { &p.x } else { &below[k - 1] };
        let cfg = config(sizes[k]);
        match step {
            Step::Totals => kernels::cpu_scan_block_totals_with(cfg, input, stride(k), sizes[k], &mut cur[0])?,
            Step::Scan => {
                let offsets: &[u32] = above.first().map_or(&dummy[..], |v| &v[..]);
                kernels::cpu_scan_blocks_with(cfg, input, stride(k), sizes[k], offsets, &mut cur[0])?
            }
        }
    }
    Ok(outs.swap_remove(0))
}

/// Device buffers for a scan of `n` elements: the output (level 0) and one buffer per level
/// above it, plus a one-element dummy for the top level's unused offsets. Reusable across runs
/// (the bench times [`GpuScan::launch`] alone).
pub struct GpuScan {
    pub n: usize,
    pub sizes: Vec<usize>,
    /// `outs[0]` is the result.
    pub outs: Vec<CudaSlice<u32>>,
    pub dummy: CudaSlice<u32>,
}

impl GpuScan {
    pub fn new(stream: &Arc<CudaStream>, n: usize) -> Result<GpuScan, oxide_rt::Error> {
        check(n)?;
        let sizes = levels(n);
        let what = "allocating scan buffers on the GPU";
        let outs = sizes
            .iter()
            .map(|&m| stream.alloc_zeros::<u32>(m.max(1)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(err(what))?;
        let dummy = stream.alloc_zeros::<u32>(1).map_err(err(what))?;
        Ok(GpuScan { n, sizes, outs, dummy })
    }

    /// Enqueues the whole scan of `x` (`n` elements) into `outs[0]`.
    pub fn launch(&mut self, stream: &Arc<CudaStream>, x: &CudaSlice<u32>) -> Result<(), oxide_rt::Error> {
        launch_levels(stream, &self.sizes, x, &mut self.outs, &self.dummy)
    }
}

/// The launches of a scan of `x` into `outs[0]`, level by level (`sizes`: [`levels`] of its
/// length; `outs` and `dummy` as in [`GpuScan`]).
pub fn launch_levels(
    stream: &Arc<CudaStream>,
    sizes: &[usize],
    x: &CudaSlice<u32>,
    outs: &mut [CudaSlice<u32>],
    dummy: &CudaSlice<u32>,
) -> Result<(), oxide_rt::Error> {
    let n = sizes.first().copied().unwrap_or(0);
    for (step, k) in schedule(n) {
        let (below, rest) = outs.split_at_mut(k);
        let (cur, above) = rest.split_at_mut(1);
        let input = if k == 0 { x } else { &below[k - 1] };
        let cfg = config(sizes[k]);
        match step {
            Step::Totals => {
                kernels::launch_scan_block_totals_with(stream, cfg, input, stride(k), sizes[k], &mut cur[0])?
            }
            Step::Scan => {
                let offsets = above.first().unwrap_or(dummy);
                kernels::launch_scan_blocks_with(stream, cfg, input, stride(k), sizes[k], offsets, &mut cur[0])?
            }
        }
    }
    Ok(())
}

/// A scan of `n` elements captured once into a CUDA graph that owns its buffers: the input
/// (`.0`, write it through `graph.buffers_mut()`), the level outputs (`.1`, the result in
/// `.1[0]`) and the dummy offsets (`.2`). Each `graph.launch()` replays every level's launches.
pub type ScanGraph = Graph<(CudaSlice<u32>, Vec<CudaSlice<u32>>, CudaSlice<u32>)>;

pub fn capture_graph(stream: &Arc<CudaStream>, n: usize) -> Result<ScanGraph, oxide_rt::Error> {
    let GpuScan { sizes, outs, dummy, .. } = GpuScan::new(stream, n.max(1))?;
    let x = stream.alloc_zeros::<u32>(n.max(1)).map_err(err("allocating the scan's input on the GPU"))?;
    Graph::capture(stream, (x, outs, dummy), |s, (x, outs, dummy)| launch_levels(s, &sizes, x, outs, dummy))
}

pub fn run_gpu(stream: &Arc<CudaStream>, p: &Problem) -> Result<Output, oxide_rt::Error> {
    if p.x.is_empty() {
        return Ok(Vec::new());
    }
    let x = stream.clone_htod(&p.x).map_err(err("copying x to the GPU"))?;
    let mut plan = GpuScan::new(stream, p.x.len())?;
    plan.launch(stream, &x)?;
    stream.clone_dtoh(&plan.outs[0]).map_err(err("copying the result back"))
}

/// Exact (integer arithmetic, wrapping).
pub fn compare(got: &Output, want: &Output) -> Result<(), String> {
    example_common::compare_exact(got, want, "element", |g, w| g == w)
}
