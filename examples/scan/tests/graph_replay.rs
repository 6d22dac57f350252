//! The scan's levels captured once into a CUDA graph (`scan::capture_graph`) and replayed on
//! new inputs: every replay matches the CPU reference, for every test size. Skips without a GPU
//! (fails with OXIDE_REQUIRE_GPU=1).

use oxide_rt::host::Gpu;

#[test]
fn a_replayed_scan_matches_the_reference_on_new_inputs() {
    let g = match Gpu::new(0) {
        Ok(g) => g,
        Err(e) if std::env::var("OXIDE_REQUIRE_GPU").as_deref() == Ok("1") => {
            panic!("OXIDE_REQUIRE_GPU=1 but no GPU: {e}")
        }
        Err(e) => return eprintln!("skipped: no GPU ({e})"),
    };
    let s = &g.stream;
    for &n in scan::SIZES {
        let mut graph = scan::capture_graph(s, n).unwrap();
        assert_eq!(graph.kernel_launches(), scan::schedule(n).len(), "n = {n}");
        for seed in 0..2 {
            let p = scan::problem(seed, n);
            s.memcpy_htod(&p.x, &mut graph.buffers_mut().0).unwrap();
            graph.launch().unwrap();
            graph.synchronize().unwrap();
            let got = s.clone_dtoh(&graph.buffers().1[0]).unwrap();
            scan::compare(&got, &scan::reference(&p)).unwrap_or_else(|e| panic!("n = {n}, seed {seed}: {e}"));
        }
    }
}
