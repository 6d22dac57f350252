//! Launch overhead, host and device together: `N` small launches (saxpy on 256 elements, one
//! block) made one by one through the typed launcher, against the same `N` launches captured
//! once into an `oxide_rt::host::Graph` and replayed. Each round times the enqueueing and the
//! stream's completion (wall clock), so the figure per launch is what a loop of tiny kernels
//! costs end to end.

use crate::harness::{Bench, Res};
use oxide_rt::cuda::{CudaSlice, CudaStream};
use oxide_rt::host::Graph;
use oxide_rt::LaunchConfig;
use std::sync::Arc;
use std::time::Instant;

pub struct GraphOverhead {
    pub launches: usize,
    pub direct_us: f64,
    pub graph_us: f64,
    pub capture_ms: f64,
}

pub fn measure(b: &Bench, launches: usize) -> Res<GraphOverhead> {
    const ROUNDS: usize = 21;
    let s = &b.stream;
    let n = 256usize;
    let cfg = LaunchConfig::for_num_elems(n as u32, 256);
    let x = s.clone_htod(&vec![1.0f32; n])?;
    let mut y = s.alloc_zeros::<f32>(n)?;
    let record = |cs: &Arc<CudaStream>, x: &CudaSlice<f32>, y: &mut CudaSlice<f32>| -> Result<(), oxide_rt::Error> {
        for _ in 0..launches {
            saxpy::kernels::launch_saxpy_with(cs, cfg, 1.0, x, y)?;
        }
        Ok(())
    };
    // Warm-up: loads the module and the function in this context.
    record(s, &x, &mut y)?;
    s.synchronize()?;
    let t = Instant::now();
    let mut graph = Graph::capture(s, (x, y), |cs, (x, y)| record(cs, x, y))?;
    let capture_ms = t.elapsed().as_secs_f64() * 1e3;
    graph.launch()?;
    graph.synchronize()?;

    let (mut direct, mut replay) = (Vec::new(), Vec::new());
    let mut check = s.clone_dtoh(&graph.buffers().1)?;
    for _ in 0..ROUNDS {
        let t = Instant::now();
        {
            let mut bufs = graph.buffers_mut();
            let (x, y) = &mut *bufs;
            record(s, x, y)?;
        }
        s.synchronize()?;
        direct.push(t.elapsed().as_secs_f64() * 1e6 / launches as f64);
        let t = Instant::now();
        graph.launch()?;
        graph.synchronize()?;
        replay.push(t.elapsed().as_secs_f64() * 1e6 / launches as f64);
    }
    // y = 1.0 * x + y with x = 1: every launch adds one, direct or replayed.
    let want = check[0] + (2 * ROUNDS * launches) as f32;
    check = s.clone_dtoh(&graph.buffers().1)?;
    if check.iter().any(|&v| v != want) {
        return Err(format!("graph bench: y = {} after the rounds, want {want}", check[0]).into());
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    Ok(GraphOverhead { launches, direct_us: median(&mut direct), graph_us: median(&mut replay), capture_ms })
}
