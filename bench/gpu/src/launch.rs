//! Host time per launch: the typed launcher (`launch_saxpy_with`: cached module and function,
//! launch checks, argument marshalling) against raw cudarc `launch_builder` on the very same
//! PTX kernel with the same arguments. Batches of launches are timed on the host and the
//! stream is drained between batches, so the driver's launch queue never fills up.

use crate::harness::{Bench, Res};
use cudarc::driver::PushKernelArg;
use oxide_rt::LaunchConfig;
use std::time::Instant;

pub struct Overhead {
    pub oxide_us: f64,
    pub raw_us: f64,
}

pub fn measure(b: &Bench) -> Res<Overhead> {
    const BATCH: usize = 1000;
    const ROUNDS: usize = 21;
    let s = &b.stream;
    let n = 256usize;
    let x = s.clone_htod(&vec![1.0f32; n])?;
    let mut y = s.alloc_zeros::<f32>(n)?;
    let cfg = LaunchConfig::for_num_elems(n as u32, 256);
    let raw_cfg = crate::cases::saxpy::cfg_raw(cfg);
    let module = b.ctx.load_module(cudarc::nvrtc::Ptx::from_src(saxpy::PTX))?;
    let f = module.load_function("saxpy")?;
    let n64 = n as u64;

    let mut oxide = Vec::new();
    let mut raw = Vec::new();
    for round in 0..ROUNDS + 1 {
        let t = Instant::now();
        for _ in 0..BATCH {
            saxpy::kernels::launch_saxpy_with(s, cfg, 1.0, &x, &mut y)?;
        }
        let o = t.elapsed().as_secs_f64();
        s.synchronize()?;
        let t = Instant::now();
        for _ in 0..BATCH {
            let mut l = s.launch_builder(&f);
            l.arg(&1.0f32).arg(&x).arg(&n64).arg(&mut y).arg(&n64);
            // SAFETY: oxide's saxpy entry takes (f32, ptr, len, ptr, len), exactly these.
            unsafe { l.launch(raw_cfg) }?;
        }
        let r = t.elapsed().as_secs_f64();
        s.synchronize()?;
        if round > 0 {
            // Round 0 is warm-up (module load, first-launch costs).
            oxide.push(o / BATCH as f64 * 1e6);
            raw.push(r / BATCH as f64 * 1e6);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    Ok(Overhead { oxide_us: median(&mut oxide), raw_us: median(&mut raw) })
}
