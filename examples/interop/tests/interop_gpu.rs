//! The CUDA C++ kernels through their generated typed launchers, and the Rust kernel taking the
//! same struct, on the GPU. Skips (printing why) without a GPU, unless OXIDE_REQUIRE_GPU=1.

use oxide_rt::host::Gpu;
use std::sync::OnceLock;

fn gpu() -> Option<&'static Gpu> {
    static GPU: OnceLock<Option<Gpu>> = OnceLock::new();
    GPU.get_or_init(|| match Gpu::new(0) {
        Ok(g) => Some(g),
        Err(e) if std::env::var("OXIDE_REQUIRE_GPU").as_deref() == Ok("1") => {
            panic!("OXIDE_REQUIRE_GPU=1 but no GPU: {e}")
        }
        Err(e) => {
            eprintln!("skipped: no GPU ({e})");
            None
        }
    })
    .as_ref()
}

#[test]
fn cuda_cpp_and_rust_box_filters_match_the_reference() {
    let Some(g) = gpu() else { return };
    for (seed, &(w, h, r)) in [(1, 1, 0), (33, 9, 1), (100, 37, 2), (1000, 517, 3)].iter().enumerate() {
        let p = interop::problem(seed as u64, w, h, r);
        let want = interop::reference(&p);
        let cpp = interop::run_cuda_cpp(&g.stream, &p).unwrap();
        interop::compare(&cpp, &want).unwrap_or_else(|e| panic!("CUDA C++, {w} x {h}, radius {r}: {e}"));
        let rust = interop::run_rust_gpu(&g.stream, &p).unwrap();
        interop::compare(&rust, &want).unwrap_or_else(|e| panic!("Rust, {w} x {h}, radius {r}: {e}"));
    }
}

#[test]
fn template_instantiations_launch_for_each_type() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let x: Vec<f32> = (0..1000).map(|i| i as f32 / 10.0).collect();
    let input = s.clone_htod(&x).unwrap();
    let mut out = s.alloc_zeros::<f32>(x.len()).unwrap();
    // SAFETY: threshold<float> touches in[i] and out[i] for i < n only, one thread each, and
    // both buffers hold n = x.len() values.
    unsafe { interop::kernels::launch_threshold_f32(s, 4u32, 256u32, &input, &mut out, 50.0, x.len() as u32) }.unwrap();
    oxide_rt::host::synchronize(s).unwrap();
    let got = s.clone_dtoh(&out).unwrap();
    assert!(got.iter().zip(&x).all(|(&g, &v)| g == if v >= 50.0 { 1.0 } else { 0.0 }), "{got:?}");

    let xd: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let input = s.clone_htod(&xd).unwrap();
    let mut out = s.alloc_zeros::<f64>(xd.len()).unwrap();
    // SAFETY: as above, n = xd.len().
    unsafe { interop::kernels::launch_threshold_f64(s, 4u32, 256u32, &input, &mut out, 25.0, xd.len() as u32) }
        .unwrap();
    oxide_rt::host::synchronize(s).unwrap();
    let got = s.clone_dtoh(&out).unwrap();
    assert!(got.iter().zip(&xd).all(|(&g, &v)| g == if v >= 25.0 { 1.0 } else { 0.0 }), "{got:?}");
}

#[test]
fn cuda_cpp_launches_are_checked_like_rust_ones() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let p = interop::problem(5, 64, 64, 1);
    let input = s.clone_htod(&p.image).unwrap();
    let mut out = s.alloc_zeros::<f32>(p.image.len()).unwrap();
    // SAFETY: refused before launching (and box_filter stays within 64 x 64 buffers anyway).
    let err = unsafe { interop::kernels::launch_box_filter(s, 1u32, 2048u32, &input, &mut out, p.params) }.unwrap_err();
    assert!(matches!(err, oxide_rt::Error::InvalidLaunch { kernel: "box_filter", .. }), "{err}");
    assert!(err.to_string().contains("2048 threads"), "{err}");
}
