//! The prebuilt kernels run, on the CPU executor and on a GPU, where the image the driver loaded
//! is checked: the embedded sm_90 cubin on an sm_90 device, the PTX (JIT) otherwise or with
//! `OXIDE_FORCE_PTX=1`.

#[path = "../src/kernels.rs"]
mod kernels;

use oxide_rt::host::{gpu_available, loaded_image, Gpu, ImageKind};
use oxide_rt::LaunchConfig;

const N: u32 = 10_000;

fn input() -> Vec<f32> {
    (0..N).map(|i| i as f32 * 0.5 - 100.0).collect()
}

fn check(x: &[f32], out: &[f32]) {
    for (i, (x, o)) in x.iter().zip(out).enumerate() {
        assert!((1.8 * x + 32.0 - o).abs() < 1e-3, "element {i}: {o} for input {x}");
    }
}

#[test]
fn affine_on_the_cpu_executor() {
    let x = input();
    let mut out = vec![0.0; x.len()];
    kernels::cpu_affine_with(LaunchConfig::for_num_elems(N, 128), 1.8, 32.0, &x, &mut out).unwrap();
    check(&x, &out);
    assert!(!env!("OXIDE_KERNELS_ORIGIN").is_empty());
}

fn run_on(gpu: &Gpu) -> ImageKind {
    let x = input();
    let s = &gpu.stream;
    let dx = s.clone_htod(&x).unwrap();
    let mut dout = s.alloc_zeros::<f32>(x.len()).unwrap();
    kernels::launch_affine_with(s, LaunchConfig::for_num_elems(N, 128), 1.8, 32.0, &dx, &mut dout).unwrap();
    check(&x, &s.clone_dtoh(&dout).unwrap());
    loaded_image(&gpu.ctx).expect("a kernel ran, so a module was loaded")
}

#[test]
fn gpu_loads_the_cubin_for_its_arch_else_the_ptx() {
    if !gpu_available() {
        assert!(std::env::var_os("OXIDE_REQUIRE_GPU").is_none(), "OXIDE_REQUIRE_GPU is set but no GPU was found");
        eprintln!("skipped: no GPU (set OXIDE_REQUIRE_GPU=1 to fail instead)");
        return;
    }
    let gpu = Gpu::new(0).unwrap();
    let desc = gpu.describe();
    let arch = desc.rsplit('(').next().unwrap_or_default().trim_end_matches(')').to_string();
    let embedded: Vec<&str> = CUBINS.iter().map(|(a, _)| *a).collect();
    let image = run_on(&gpu);
    eprintln!("{desc}: {image}");
    if embedded.contains(&arch.as_str()) {
        assert_eq!(image, ImageKind::Cubin { arch: arch.clone() });
    } else {
        assert!(matches!(image, ImageKind::Ptx { ref device, .. } if *device == arch), "{image:?}");
    }
    // The JIT path on the same device; a second context so nothing is cached. `gpu` stays alive
    // so the new context cannot reuse its address.
    std::env::set_var("OXIDE_FORCE_PTX", "1");
    let jit = Gpu::new(0).unwrap();
    let image = run_on(&jit);
    std::env::remove_var("OXIDE_FORCE_PTX");
    eprintln!("{desc} with OXIDE_FORCE_PTX=1: {image}");
    assert_eq!(image, ImageKind::Ptx { ptx_target: "sm_90".into(), device: arch });
}

/// The cubins the build embedded, exactly as the runtime sees them.
const CUBINS: &[(&str, &[u8])] = include!(env!("OXIDE_CUBINS"));
