//! Timing and reporting shared by every case: CUDA events around each launch, warm-up, the
//! median of many runs; the CUDA C++ twins loaded from nvcc's PTX.

use cudarc::driver::sys::{CUevent_flags, CUfunction_attribute};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

pub type Res<T> = Result<T, Box<dyn std::error::Error>>;

pub struct Bench {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub twins: PathBuf,
    pub warmup: usize,
    pub iters: usize,
    /// Runs of `f` between one pair of events (`--batch N`, default 1): with more than one, the
    /// host's work for the next launch overlaps the GPU's run of the last, so the time per run is
    /// the kernels' own, without the host-side launch cost the GPU waits for after the first
    /// event (oxide's launchers check every buffer; the twins' bare launches do not).
    pub batch: usize,
    /// The suite's kernels as oxide launches them (its sm_90 cubin), for register counts.
    pub suite: OnceLock<Arc<CudaModule>>,
}

impl Bench {
    /// Median time in ms of `f` (one launch or launch sequence), each run timed with events.
    pub fn time(&self, mut f: impl FnMut() -> Res<()>) -> Res<f64> {
        for _ in 0..self.warmup {
            f()?;
        }
        self.stream.synchronize()?;
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let mut samples = Vec::with_capacity(self.iters);
        for _ in 0..self.iters {
            let (start, end) = (self.ctx.new_event(flags)?, self.ctx.new_event(flags)?);
            start.record(&self.stream)?;
            for _ in 0..self.batch {
                f()?;
            }
            end.record(&self.stream)?;
            end.synchronize()?;
            samples.push(start.elapsed_ms(&end)? as f64 / self.batch as f64);
        }
        samples.sort_by(|a, b| a.total_cmp(b));
        Ok(samples[samples.len() / 2])
    }

    /// A `extern "C" __global__` function of the nvcc-compiled twin `<name>.ptx`.
    pub fn twin(&self, file: &str, function: &str) -> Res<(Arc<CudaModule>, CudaFunction)> {
        let path = self.twins.join(format!("{file}.ptx"));
        let ptx = std::fs::read_to_string(&path)
            .map_err(|e| format!("reading twin {}: {e} (run bench/gpu/run.sh)", path.display()))?;
        let module = self.ctx.load_module(cudarc::nvrtc::Ptx::from_src(ptx))?;
        let f = module.load_function(function)?;
        Ok((module, f))
    }

    /// Registers per thread of a suite kernel as oxide builds it, and of its CUDA C++ twin.
    pub fn regs(&self, oxide_kernel: &str, twin: &CudaFunction) -> Res<(u32, u32)> {
        let module = match self.suite.get() {
            Some(m) => m.clone(),
            None => {
                let image = oxide_suite::CUBINS.iter().find(|(arch, _)| *arch == "sm_90");
                let ptx = match image {
                    Some((_, bytes)) => cudarc::nvrtc::Ptx::from_binary(bytes.to_vec()),
                    None => cudarc::nvrtc::Ptx::from_src(oxide_suite::PTX),
                };
                let loaded = self.ctx.load_module(ptx)?;
                self.suite.get_or_init(|| loaded).clone()
            }
        };
        let ours = module.load_function(oxide_kernel)?;
        let count = |f: &CudaFunction| f.get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS);
        Ok((count(&ours)? as u32, count(twin)? as u32))
    }
}

/// What a case reports: its work per run, so throughput can be derived.
pub enum Work {
    /// Bytes read + written by one run.
    Bytes(f64),
    /// Floating-point operations of one run.
    Flops(f64),
}

pub struct Row {
    pub kernel: String,
    pub size: String,
    pub oxide_ms: f64,
    pub cuda_ms: f64,
    pub work: Work,
    /// Extra reference (e.g. cuBLAS) as (name, ms).
    pub reference: Option<(String, f64)>,
    /// Registers per thread, (oxide, CUDA C++), where known.
    pub regs: Option<(u32, u32)>,
    pub max_error: f64,
}

impl Row {
    pub fn ratio(&self) -> f64 {
        self.oxide_ms / self.cuda_ms
    }

    /// GB/s or TFLOP/s of the oxide kernel.
    pub fn throughput(&self) -> (f64, &'static str) {
        match self.work {
            Work::Bytes(b) => (b / (self.oxide_ms * 1e-3) / 1e9, "GB/s"),
            Work::Flops(f) => (f / (self.oxide_ms * 1e-3) / 1e12, "TFLOP/s"),
        }
    }
}

/// Deterministic pseudo-random numbers (splitmix64), the same generator as the examples' inputs.
pub use example_common::Rng;
