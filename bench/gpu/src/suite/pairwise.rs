//! pairwise kernels of the suite against their CUDA C++ twins (`cuda/suite/pairwise.cu`).

use crate::cases::saxpy::cfg_raw;
use crate::cases::Case;
use crate::harness::{Bench, Res, Row, Work};
use cudarc::driver::PushKernelArg;
use oxide_suite::kernels::pairwise as k;
use oxide_suite::pairwise::*;

pub fn cases() -> Vec<(&'static str, Case)> {
    vec![("nbody_tile", nbody), ("kmeans_assign", kmeans)]
}

/// All-pairs n-body, 65536 bodies (4.3e9 interactions), blocks of 256 with a shared tile.
/// Checked on 256 bodies spread over the set (the f64 reference is O(n) per body).
fn nbody(b: &Bench) -> Res<Row> {
    let n: usize = 1 << 16;
    let s = &b.stream;
    let p = nbody_problem(1, n);
    let cfg = nbody_config(n);
    let dbodies = s.clone_htod(&p.bodies)?;
    let mut dacc = s.alloc_zeros::<[f32; 4]>(n)?;
    let oxide_ms = b.time(|| Ok(k::launch_nbody_tile_with(s, cfg, &dbodies, p.soft2, &mut dacc)?))?;

    let (_m, f) = b.twin("suite/pairwise", "nbody_tile")?;
    let mut tacc = s.alloc_zeros::<[f32; 4]>(n)?;
    let n32 = n as i32;
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&dbodies).arg(&n32).arg(&p.soft2).arg(&mut tacc);
        // SAFETY: the twin's signature is (const float4* bodies, int n, float soft2, float4* acc); both buffers hold n float4s, blockDim.x is its NBODY_BLOCK (256).
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let (got, twin) = (s.clone_dtoh(&dacc)?, s.clone_dtoh(&tacc)?);
    let mut max_error = 0.0f64;
    for i in (0..n).step_by(n / 256) {
        let want = nbody_reference_one(&p, i);
        nbody_compare_one(i, n, got[i], &want)
            .map_err(|e| format!("oxide nbody_tile differs from the reference: {e}"))?;
        nbody_compare_one(i, n, twin[i], &want).map_err(|e| format!("CUDA twin differs from the reference: {e}"))?;
        for (g, w) in got[i].iter().zip(&want.0) {
            max_error = max_error.max((*g as f64 - w).abs());
        }
    }
    Ok(Row {
        kernel: "nbody_tile".into(),
        size: format!("{n} bodies"),
        oxide_ms,
        cuda_ms,
        // 20 flops per interaction, the usual count (rsqrt as one).
        work: Work::Flops(20.0 * n as f64 * n as f64),
        reference: None,
        regs: Some(b.regs("nbody_tile", &f)?),
        max_error,
    })
}

/// k-means assignment, 2^21 points of 16 dimensions (128 MiB) against 64 centroids. Checked
/// on every 64th point.
fn kmeans(b: &Bench) -> Res<Row> {
    let (n, kc, dims): (usize, usize, usize) = (1 << 21, 64, 16);
    let s = &b.stream;
    let p = kmeans_problem(1, n, kc, dims);
    let cfg = kmeans_config(n);
    let dpoints = s.clone_htod(&p.points)?;
    let dcent = s.clone_htod(&p.centroids)?;
    let mut dlabels = s.alloc_zeros::<u32>(n)?;
    let oxide_ms = b.time(|| Ok(k::launch_kmeans_assign_with(s, cfg, &dpoints, &dcent, dims, &mut dlabels)?))?;

    let (_m, f) = b.twin("suite/pairwise", "kmeans_assign")?;
    let mut tlabels = s.alloc_zeros::<u32>(n)?;
    let (n32, k32, d32) = (n as i32, kc as i32, dims as i32);
    let cuda_ms = b.time(|| {
        let mut l = s.launch_builder(&f);
        l.arg(&dpoints).arg(&n32).arg(&dcent).arg(&k32).arg(&d32).arg(&mut tlabels);
        // SAFETY: the twin's signature is (const float* points, int n, const float* centroids, int k, int dims, unsigned* labels); points holds n * dims floats, centroids k * dims <= 4096, labels n.
        unsafe { l.launch(cfg_raw(cfg)) }?;
        Ok(())
    })?;

    let (got, twin) = (s.clone_dtoh(&dlabels)?, s.clone_dtoh(&tlabels)?);
    let step = 64;
    let sample = KmeansProblem {
        dims,
        points: p.points.chunks(dims).step_by(step).flatten().copied().collect(),
        centroids: p.centroids.clone(),
    };
    let want = kmeans_reference(&sample);
    let pick = |v: &[u32]| v.iter().step_by(step).copied().collect::<Vec<u32>>();
    kmeans_compare(&sample, &pick(&got), &want)
        .map_err(|e| format!("oxide kmeans_assign differs from the reference (every {step}th point): {e}"))?;
    kmeans_compare(&sample, &pick(&twin), &want)
        .map_err(|e| format!("CUDA twin differs from the reference (every {step}th point): {e}"))?;
    Ok(Row {
        kernel: "kmeans_assign".into(),
        size: format!("2^21 points x {dims} dims; {kc} centroids"),
        oxide_ms,
        cuda_ms,
        work: Work::Flops(3.0 * (n * kc * dims) as f64),
        reference: None,
        regs: Some(b.regs("kmeans_assign", &f)?),
        max_error: 0.0,
    })
}
