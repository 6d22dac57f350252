//! The kernels run on the CPU executor everywhere and on the GPU when one is present.

use oxide_e2e::kernels;
use oxide_rt::{Error, LaunchConfig};

fn inputs(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i as f32 * 0.37).sin()).collect()
}

#[test]
fn affine_on_the_cpu_matches_the_formula() {
    let n = 10_007; // not a multiple of the block
    let x = inputs(n);
    let mut y = vec![0.0f32; n];
    kernels::cpu_affine_with(LaunchConfig::for_num_elems(n as u32, 128), 1.5, -2.0, &x, &mut y).unwrap();
    for i in 0..n {
        assert_eq!(y[i], 1.5 * x[i] - 2.0, "element {i}");
    }
}

#[test]
fn linear_ids_are_unique_for_a_3d_geometry_on_the_cpu() {
    let (grid, block) = ((3u32, 2u32, 2u32), (4u32, 2u32, 3u32));
    let n = 3 * 2 * 2 * 4 * 2 * 3;
    let mut out = vec![u32::MAX; n];
    kernels::cpu_linear_ids(grid, block, &mut out).unwrap();
    assert_eq!(out, (0..n as u32).collect::<Vec<_>>());
}

fn quads_reference(x: &[u32], len: usize) -> Vec<u32> {
    (0..len).map(|j| x[j / 4] * (j as u32 % 4 + 1)).collect()
}

#[test]
fn disjoint_chunks_give_each_thread_its_own_four_outputs_on_the_cpu() {
    let x: Vec<u32> = (0..1003).map(|i| i * 7 + 1).collect();
    let len = 4 * x.len() - 2; // a short last chunk
    let mut out = vec![0u32; len];
    kernels::cpu_quads_with(LaunchConfig::for_num_elems(x.len() as u32, 128), &x, &mut out).unwrap();
    assert_eq!(out, quads_reference(&x, len));
}

fn gather_inputs(x_len: usize) -> (Vec<f32>, Vec<u32>, Vec<f32>) {
    let x: Vec<f32> = (0..x_len).map(|i| i as f32 * 0.5).collect();
    // In range, at the end, just past it and far past it.
    let idx: Vec<u32> = (0..4099u32).map(|i| (i * 37) % (x_len as u32 + 9)).chain([x_len as u32, u32::MAX]).collect();
    let want = idx.iter().map(|&j| x.get(j as usize).copied().unwrap_or(-1.0)).collect();
    (x, idx, want)
}

#[test]
fn guarded_loads_give_the_fallback_past_the_end_on_the_cpu() {
    for x_len in [0, 1, 1000] {
        let (x, idx, want) = gather_inputs(x_len);
        let mut y = vec![0.0f32; idx.len()];
        kernels::cpu_gather_or_minus_one_with(LaunchConfig::for_num_elems(idx.len() as u32, 128), &x, &idx, &mut y)
            .unwrap();
        assert_eq!(y, want, "x of {x_len} elements");
    }
}

/// What `fixed_block` writes on a (3, 2) grid of 16 x 4 blocks, sorted: each block's 64 threads.
fn fixed_block_reference() -> Vec<u32> {
    let one_block: Vec<u32> =
        (0..4).flat_map(|ty| (0..16).map(move |tx| 16 * 1_000_000 + 4 * 10_000 + ty * 100 + tx)).collect();
    let mut all = one_block.repeat(3 * 2);
    all.sort_unstable();
    all
}

#[test]
fn a_fixed_block_kernel_runs_with_its_block_and_refuses_others_on_the_cpu() {
    let mut out = vec![0u32; 3 * 2 * 64];
    kernels::cpu_fixed_block((3u32, 2u32), (16u32, 4u32), &mut out).unwrap();
    let mut got = out.clone();
    got.sort_unstable();
    assert_eq!(got, fixed_block_reference());
    let err = kernels::cpu_fixed_block((3u32, 2u32), (8u32, 8u32), &mut out).unwrap_err();
    assert!(matches!(err, Error::InvalidLaunch { kernel: "fixed_block", .. }), "{err}");
    assert!(err.to_string().contains("block(16, 4, 1)") && err.to_string().contains("8x8x1"), "{err}");
}

/// `strided_ids` over a 2D grid of 2D blocks: block `b` (linear) of `B` threads owns elements
/// `b*3*B ..`, its thread `t` every `B`-th of them from `t`; `len` cuts the last block short.
fn strided_reference(blocks: usize, per_block: usize, len: usize) -> Vec<u32> {
    let mut want = vec![u32::MAX; len];
    for b in 0..blocks {
        for t in 0..per_block {
            for k in 0..3 {
                let i = b * 3 * per_block + k * per_block + t;
                if i < len {
                    want[i] = ((b * per_block + t) * 4 + k) as u32;
                }
            }
        }
    }
    want
}

#[test]
fn disjoint_strided_gives_each_thread_its_interleaved_elements_on_the_cpu() {
    let (grid, block) = ((3u32, 2u32), (8u32, 2u32));
    let len = 6 * 16 * 3 - 5;
    let mut out = vec![u32::MAX; len];
    kernels::cpu_strided_ids(grid, block, &mut out).unwrap();
    assert_eq!(out, strided_reference(6, 16, len));
}

#[test]
fn a_dims_1_kernel_refuses_a_2d_launch() {
    let x = inputs(64);
    let mut y = vec![0.0f32; 64];
    let err = kernels::cpu_affine(1u32, (8u32, 8u32), 1.0, 0.0, &x, &mut y).unwrap_err();
    assert!(matches!(err, Error::InvalidLaunch { kernel: "affine", .. }), "{err}");
    assert!(err.to_string().contains("dims = 1"), "{err}");
}

#[test]
fn the_cpu_rejects_a_block_of_2048_threads() {
    let mut out = vec![0u32; 4096];
    let err = kernels::cpu_linear_ids(2u32, 2048u32, &mut out).unwrap_err();
    assert!(matches!(err, Error::InvalidLaunch { kernel: "linear_ids", .. }), "{err}");
    assert!(err.to_string().contains("2048"), "{err}");
}

fn gpu() -> Option<oxide_rt::host::Gpu> {
    match oxide_rt::host::Gpu::new(0) {
        Ok(g) => Some(g),
        Err(e) if std::env::var("OXIDE_REQUIRE_GPU").as_deref() == Ok("1") => {
            panic!("OXIDE_REQUIRE_GPU=1 but no GPU: {e}")
        }
        Err(e) => {
            eprintln!("skipped: no GPU ({e})");
            None
        }
    }
}

#[test]
fn gpu_results_match_the_cpu() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let n = 1_000_003;
    let x = inputs(n);
    let dx = s.clone_htod(&x).unwrap();
    let mut dy = s.alloc_zeros::<f32>(n).unwrap();
    kernels::launch_affine_with(s, LaunchConfig::for_num_elems(n as u32, 256), 1.5, -2.0, &dx, &mut dy).unwrap();
    let gpu_y = s.clone_dtoh(&dy).unwrap();
    let mut cpu_y = vec![0.0f32; n];
    kernels::cpu_affine_with(LaunchConfig::for_num_elems(n as u32, 256), 1.5, -2.0, &x, &mut cpu_y).unwrap();
    // a*x+b: the GPU contracts to one fma (one rounding), the CPU rounds twice: within 1 ulp.
    for i in 0..n {
        assert!(
            (gpu_y[i] - cpu_y[i]).abs() <= f32::EPSILON * cpu_y[i].abs().max(1.0),
            "element {i}: {} vs {}",
            gpu_y[i],
            cpu_y[i]
        );
    }

    let (grid, block) = ((3u32, 2u32, 2u32), (4u32, 2u32, 3u32));
    let m = 3 * 2 * 2 * 4 * 2 * 3;
    let mut d = s.alloc_zeros::<u32>(m).unwrap();
    kernels::launch_linear_ids(s, grid, block, &mut d).unwrap();
    assert_eq!(s.clone_dtoh(&d).unwrap(), (0..m as u32).collect::<Vec<_>>());
}

#[test]
fn disjoint_chunks_on_the_gpu() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let x: Vec<u32> = (0..100_003).map(|i| i * 7 + 1).collect();
    let len = 4 * x.len() - 3;
    let dx = s.clone_htod(&x).unwrap();
    let mut d = s.alloc_zeros::<u32>(len).unwrap();
    kernels::launch_quads_with(s, LaunchConfig::for_num_elems(x.len() as u32, 256), &dx, &mut d).unwrap();
    assert_eq!(s.clone_dtoh(&d).unwrap(), quads_reference(&x, len));
}

/// The device reads `x` ahead of the bounds check: an empty `x` points at the module's pad.
#[test]
fn guarded_loads_give_the_fallback_past_the_end_on_the_gpu() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    for x_len in [0, 1, 1000] {
        let (x, idx, want) = gather_inputs(x_len);
        let dx = if x.is_empty() { s.alloc_zeros::<f32>(0).unwrap() } else { s.clone_htod(&x).unwrap() };
        let didx = s.clone_htod(&idx).unwrap();
        let mut dy = s.alloc_zeros::<f32>(idx.len()).unwrap();
        kernels::launch_gather_or_minus_one_with(
            s,
            LaunchConfig::for_num_elems(idx.len() as u32, 128),
            &dx,
            &didx,
            &mut dy,
        )
        .unwrap();
        assert_eq!(s.clone_dtoh(&dy).unwrap(), want, "x of {x_len} elements");
    }
}

#[test]
fn a_fixed_block_kernel_runs_with_its_block_and_refuses_others_on_the_gpu() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let mut d = s.alloc_zeros::<u32>(3 * 2 * 64).unwrap();
    kernels::launch_fixed_block(s, (3u32, 2u32), (16u32, 4u32), &mut d).unwrap();
    let mut got = s.clone_dtoh(&d).unwrap();
    got.sort_unstable();
    assert_eq!(got, fixed_block_reference(), "block_dim() folded to (16, 4) and thread indices within it");
    let err = kernels::launch_fixed_block(s, (3u32, 2u32), (64u32, 1u32), &mut d).unwrap_err();
    assert!(matches!(err, Error::InvalidLaunch { kernel: "fixed_block", .. }), "{err}");
}

#[test]
fn disjoint_strided_on_the_gpu() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let len = 6 * 16 * 3 - 5;
    let mut d = s.clone_htod(&vec![u32::MAX; len]).unwrap();
    kernels::launch_strided_ids(s, (3u32, 2u32), (8u32, 2u32), &mut d).unwrap();
    assert_eq!(s.clone_dtoh(&d).unwrap(), strided_reference(6, 16, len));
}

#[test]
fn gpu_launch_checks_fail_before_launching() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let mut d = s.alloc_zeros::<u32>(4096).unwrap();
    let err = kernels::launch_linear_ids(s, 2u32, 2048u32, &mut d).unwrap_err();
    assert!(matches!(err, Error::InvalidLaunch { kernel: "linear_ids", .. }), "{err}");
    // launch_bounds(128): 256 threads exceed this kernel's own limit.
    let x = s.alloc_zeros::<u32>(256).unwrap();
    let mut y = s.alloc_zeros::<u32>(256).unwrap();
    let err = kernels::launch_bounded(s, 1u32, 256u32, &x, &mut y).unwrap_err();
    assert!(err.to_string().contains("exceeds this kernel's limit of 128"), "{err}");
    kernels::launch_bounded(s, 2u32, 128u32, &x, &mut y).unwrap();
    s.synchronize().unwrap();
}

#[test]
fn without_a_driver_creating_a_context_is_an_error_not_a_panic() {
    if oxide_rt::host::gpu_available() {
        eprintln!("skipped: a GPU is present, so there is no missing-driver error to see");
        return;
    }
    let err = oxide_rt::host::Gpu::new(0).unwrap_err();
    assert!(matches!(err, Error::NoDriver | Error::NoDevice), "{err}");
    assert!(err.to_string().contains("OXIDE_BACKEND=cpu"), "the message names the fix: {err}");
}

/// PTX the driver rejects surfaces the JIT compiler's own log, through the launchers' path.
#[test]
fn invalid_ptx_reports_the_jit_log() {
    let Some(g) = gpu() else { return };
    static BROKEN: oxide_rt::EmbeddedModule = oxide_rt::EmbeddedModule {
        ptx: ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry broken()\n{\n\tmov.u32 %r1, %tid.x;\n\tret;\n}\n",
        cubins: &[],
    };
    static KERNEL: oxide_rt::__private::Kernel = oxide_rt::__private::Kernel::new(&BROKEN, "broken");
    let err = KERNEL.prepare(&g.stream, &LaunchConfig::new(1u32, 32u32)).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::PtxLoad { .. }), "{msg}");
    assert!(msg.contains("%r1"), "the JIT log names the undeclared register: {msg}");
    println!("{msg}");
}
