//! KernelArg structs, generic instantiations, renamed kernels and atomics slices, on the GPU
//! when present (OXIDE_BACKEND=cpu|cuda forces one), checked against plain loops.
mod kernels;
use kernels::{Affine, Pair};
use oxide_rt::{Backend, LaunchConfig};
use std::sync::atomic::AtomicU32;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 1000usize;
    let p = Affine { scale: 2.0, bias: 0.5, shift: 3, tail: [1, 2, 7] };
    let x: Vec<Pair> = (0..n).map(|i| Pair(i as f32, (i * 3) as u32)).collect();
    let want: Vec<f64> = x.iter().map(|q| (p.scale * q.0) as f64 + p.bias + q.1 as f64 + 3.0 + 7.0).collect();
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    let xu: Vec<u32> = (0..n as u32).collect();
    let cfg = LaunchConfig::for_num_elems(n as u32, 128);
    let ramp = kernels::wide::Pair(0.5, 7);
    let (y, ys, yu, odd, yr) = match Backend::from_env()? {
        Backend::Cuda => {
            let gpu = oxide_rt::host::Gpu::new(0)?;
            let s = &gpu.stream;
            println!("backend: cuda on {}", gpu.describe());
            let (dxs, dxu) = (s.clone_htod(&xs)?, s.clone_htod(&xu)?);
            let dpairs = s.clone_htod(&x)?;
            let mut dy = s.alloc_zeros::<f64>(n)?;
            let mut dys = s.alloc_zeros::<f32>(n)?;
            let mut dyu = s.alloc_zeros::<u32>(n)?;
            let mut bins = s.alloc_zeros::<u32>(1)?;
            kernels::launch_affine_with(s, cfg, p, &dpairs, &mut dy)?;
            // launch bounds (128): a block of 256 must be refused
            assert!(kernels::launch_affine_with(s, LaunchConfig::for_num_elems(n as u32, 256), p, &dpairs, &mut dy)
                .is_err());
            kernels::launch_scale_f32_with(s, cfg, 4.0, &dxs, &mut dys)?;
            kernels::launch_scale_u32_with(s, cfg, 3, &dxu, &mut dyu)?;
            kernels::launch_count_odd_with(s, cfg, &dxu, &mut bins)?;
            let mut dyr = s.alloc_zeros::<f64>(n)?;
            kernels::wide::launch_ramp_with(s, cfg, ramp, &mut dyr)?;
            (s.clone_dtoh(&dy)?, s.clone_dtoh(&dys)?, s.clone_dtoh(&dyu)?, s.clone_dtoh(&bins)?[0], s.clone_dtoh(&dyr)?)
        }
        Backend::Cpu => {
            println!("backend: cpu");
            let (mut y, mut ys, mut yu) = (vec![0f64; n], vec![0f32; n], vec![0u32; n]);
            kernels::cpu_affine_with(cfg, p, &x, &mut y)?;
            assert!(kernels::cpu_affine_with(LaunchConfig::for_num_elems(n as u32, 256), p, &x, &mut y).is_err());
            kernels::cpu_scale_f32_with(cfg, 4.0, &xs, &mut ys)?;
            kernels::cpu_scale_u32_with(cfg, 3, &xu, &mut yu)?;
            let bins = [AtomicU32::new(0)];
            kernels::cpu_count_odd_with(cfg, &xu, &bins)?;
            let mut yr = vec![0f64; n];
            kernels::wide::cpu_ramp_with(cfg, ramp, &mut yr)?;
            (y, ys, yu, bins[0].load(std::sync::atomic::Ordering::Relaxed), yr)
        }
    };
    assert_eq!(y, want, "affine");
    assert_eq!(ys, xs.iter().map(|v| v * 4.0).collect::<Vec<_>>(), "scale_f32");
    assert_eq!(yu, xu.iter().map(|v| v * 3).collect::<Vec<_>>(), "scale_u32");
    assert_eq!(odd, (n / 2) as u32, "count_odd");
    assert_eq!(yr, (0..n).map(|i| 0.5 * i as f64 + 7.0).collect::<Vec<_>>(), "wide::ramp");
    println!("kargs: OK");
    Ok(())
}
