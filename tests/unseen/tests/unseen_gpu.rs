//! Integer kernels of the corpus on the GPU against the CPU executor, bit for bit, on inputs
//! larger than the CPU tests': the release PTX of kernels nobody tuned for, checked where it
//! runs. Skips (printing why) without a GPU unless `OXIDE_REQUIRE_GPU=1`.

use oxide_rt::cuda::{CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};
use oxide_rt::host::Gpu;
use std::sync::Arc;
use unseen::check::Rng;
use unseen::kernels::*;

fn gpu() -> Option<Gpu> {
    match Gpu::new(0) {
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

/// Runs a kernel writing `n` elements on the CPU executor and on the GPU, and compares.
fn agree<T: DeviceRepr + ValidAsZeroBits + Default + Clone + PartialEq + std::fmt::Debug>(
    s: &Arc<CudaStream>,
    what: &str,
    n: usize,
    cpu: impl FnOnce(&mut [T]) -> Result<(), oxide_rt::Error>,
    gpu: impl FnOnce(&mut CudaSlice<T>) -> Result<(), oxide_rt::Error>,
) {
    let mut want = vec![T::default(); n];
    cpu(&mut want).unwrap_or_else(|e| panic!("{what} on the CPU: {e}"));
    let mut got = s.alloc_zeros::<T>(n).unwrap();
    gpu(&mut got).unwrap_or_else(|e| panic!("{what} on the GPU: {e}"));
    let got = s.clone_dtoh(&got).unwrap();
    if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
        panic!("{what}: element {i} is {:?} on the GPU, {:?} on the CPU executor", got[i], want[i]);
    }
}

#[test]
fn integer_kernels_of_the_corpus_agree_with_the_cpu_executor() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let mut r = Rng(2026);
    let n = 100_003usize;
    let blocks = |threads: usize, per_block: u32| (threads as u32).div_ceil(per_block);

    let x: Vec<i32> = (0..n).map(|_| (r.next() % 2000) as i32 - 1000).collect();
    let dx = s.clone_htod(&x).unwrap();
    agree(
        s,
        "warp_prefix_max",
        n,
        |o| cpu_warp_prefix_max(blocks(n, 128), 128, &x, o),
        |o| launch_warp_prefix_max(s, blocks(n, 128), 128, &dx, o),
    );
    agree(
        s,
        "rev_steps",
        n / 2,
        |o| cpu_rev_steps(blocks(n / 2, 64), 64, &x, o),
        |o| launch_rev_steps(s, blocks(n / 2, 64), 64, &dx, o),
    );

    let prog: Vec<u8> = (0..64).map(|_| (r.next() % 12) as u8).collect();
    let dprog = s.clone_htod(&prog).unwrap();
    agree(
        s,
        "interp",
        n,
        |o| cpu_interp(blocks(n, 256), 256, &prog, &x, 1000, o),
        |o| launch_interp(s, blocks(n, 256), 256, &dprog, &dx, 1000, o),
    );

    let keys: Vec<u64> = (0..5 * n).map(|_| r.next() ^ (r.next() << 40)).collect();
    let dkeys = s.clone_htod(&keys).unwrap();
    agree(
        s,
        "hash64",
        n + 7,
        |o| cpu_hash64(blocks(n + 7, 128), 128, &keys, 5, 0xdead_beef, o),
        |o| launch_hash64(s, blocks(n + 7, 128), 128, &dkeys, 5, 0xdead_beef, o),
    );
    agree(
        s,
        "unpack_u16",
        4 * n,
        |o| cpu_unpack_u16(blocks(n, 128), 128, &keys[..n], o),
        |o| launch_unpack_u16(s, blocks(n, 128), 128, &dkeys.slice(..n), o),
    );
    let a: Vec<u64> = keys[..n].iter().map(|v| v % 1_000_000).collect();
    let b: Vec<u64> = keys[n..2 * n].iter().map(|v| v % 1_000_000).collect();
    let (da, db) = (s.clone_htod(&a).unwrap(), s.clone_htod(&b).unwrap());
    agree(
        s,
        "gcds",
        n,
        |o| cpu_gcds(blocks(n, 128), 128, &a, &b, o),
        |o| launch_gcds(s, blocks(n, 128), 128, &da, &db, o),
    );

    let words: Vec<u32> = keys.iter().map(|&k| k as u32).collect();
    let dwords = s.clone_htod(&words).unwrap();
    let per = 11usize;
    let m = words.len() / per;
    agree(
        s,
        "private_bins",
        8 * m,
        |o| cpu_private_bins(blocks(m, 128), 128, &words, per as u32, o),
        |o| launch_private_bins(s, blocks(m, 128), 128, &dwords, per as u32, o),
    );
    let ops: Vec<u32> = words[..30].to_vec();
    let dops = s.clone_htod(&ops).unwrap();
    agree(
        s,
        "enum_ops",
        n,
        |o| cpu_enum_ops(blocks(n, 128), 128, &ops, &words[..n], o),
        |o| launch_enum_ops(s, blocks(n, 128), 128, &dops, &dwords.slice(..n), o),
    );

    let text: Vec<u8> =
        (0..n).map(|_| if r.next().is_multiple_of(9) { 0 } else { b'a' + (r.next() % 26) as u8 }).collect();
    let dtext = s.clone_htod(&text).unwrap();
    let m = n / 17 + 3;
    agree(
        s,
        "strlens",
        m,
        |o| cpu_strlens(blocks(m, 64), 64, &text, 17, o),
        |o| launch_strlens(s, blocks(m, 64), 64, &dtext, 17, o),
    );
    let m = n / 43 + 2;
    agree(
        s,
        "crc_chunks",
        m,
        |o| cpu_crc_chunks(blocks(m, 64), 64, &text, 43, o),
        |o| launch_crc_chunks(s, blocks(m, 64), 64, &dtext, 43, o),
    );
    let m = n / 300;
    agree(
        s,
        "count_sort_u8",
        m,
        |o| cpu_count_sort_u8(blocks(m, 32), 32, &text, 300, o),
        |o| launch_count_sort_u8(s, blocks(m, 32), 32, &dtext, 300, o),
    );
}

#[test]
fn one_d_copy_and_kernel_agree_on_every_thread_index() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    // Release builds (this test's profile in ci/gpu-build.sh) carry the 1-D copy.
    let ptx = include_str!(env!("OXIDE_PTX"));
    let copy = format!(".entry index_weave{}(", oxide_rt::__private::ONE_D_SUFFIX);
    assert_eq!(ptx.contains(&copy), !cfg!(debug_assertions), "the 1-D copy in this profile's PTX");
    let mut r = Rng(7);
    let n = 3 * 65_536 + 5;
    let x: Vec<u32> = (0..n).map(|_| r.next() as u32).collect();
    let dx = s.clone_htod(&x).unwrap();
    let blocks = (n as u32).div_ceil(256);
    // 1-D: the copy. 2-D and 3-D grids and blocks of at least n threads: the kernel itself.
    for (grid, block) in [
        ((blocks, 1, 1), (256, 1, 1)),
        ((blocks.div_ceil(4), 4, 1), (64, 4, 1)),
        ((blocks.div_ceil(8), 2, 2), (32, 4, 2)),
        ((3, 5, blocks.div_ceil(15)), (16, 4, 4)),
    ] {
        agree(
            s,
            &format!("index_weave, grid {grid:?}, block {block:?}"),
            n,
            |o| cpu_index_weave(grid, block, &x, o),
            |o| launch_index_weave(s, grid, block, &dx, o),
        );
    }
}

#[test]
fn unchecked_copy_runs_only_where_every_dropped_check_passes() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    // Release builds (this test's profile in ci/gpu-build.sh) carry the copy without checks.
    let ptx = include_str!(env!("OXIDE_PTX"));
    let copy = format!(".entry clamped_mean3{}(", oxide_rt::__private::UNCHECKED_SUFFIX);
    assert_eq!(ptx.contains(&copy), !cfg!(debug_assertions), "the unchecked copy in this profile's PTX");
    let (w, h) = (1000usize, 301usize);
    let mut r = Rng(11);
    let x: Vec<f32> = (0..w * h).map(|_| (r.next() % 1000) as f32).collect();
    let dx = s.clone_htod(&x).unwrap();
    let (grid, block) = (((w as u32).div_ceil(32), (h as u32).div_ceil(8), 1), (32, 8, 1));
    // The whole image: the launch-wide test passes, the copy runs.
    agree(
        s,
        "clamped_mean3",
        w * h,
        |o| cpu_clamped_mean3(grid, block, &x, oxide_rt::Slice2d::new(o, w)),
        |o| launch_clamped_mean3(s, grid, block, &dx, oxide_rt::Slice2d::new(o, w)),
    );
    // One element short: the last pixel's reads fail their checks, so the kernel itself runs
    // and panics.
    let short = s.clone_htod(&x[..w * h - 1]).unwrap();
    let mut out = s.alloc_zeros::<f32>(w * h).unwrap();
    launch_clamped_mean3(s, grid, block, &short, oxide_rt::Slice2d::new(&mut out, w)).unwrap();
    let err = g.synchronize().unwrap_err();
    assert!(matches!(&err, oxide_rt::Error::KernelPanic { kernel: "clamped_mean3", .. }), "{err}");
}

/// The copy of a stencil whose interior reads `i - 1`, `i - w` and `i + w` (bounded only by the
/// interior's lowest index and by `y != h - 1`, both checked at launch): on the whole image and
/// on one that the grid covers only in part, it agrees with the CPU executor; one element
/// short, the kernel itself runs and panics.
#[test]
fn an_interior_stencil_copy_agrees_and_a_short_input_still_panics() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let ptx = include_str!(env!("OXIDE_PTX"));
    let copy = format!(".entry interior_mean5{}(", oxide_rt::__private::UNCHECKED_SUFFIX);
    assert_eq!(ptx.contains(&copy), !cfg!(debug_assertions), "the unchecked copy in this profile's PTX");
    let (w, h) = (1000usize, 301usize);
    let mut r = Rng(13);
    let x: Vec<f32> = (0..w * h).map(|_| (r.next() % 1000) as f32).collect();
    let dx = s.clone_htod(&x).unwrap();
    let block = (32, 8, 1);
    // The whole image, then a grid one block short in each direction (the last rows and
    // columns stay unwritten, the interior bound is then the grid's, not `h - 2`).
    for grid in [((w as u32).div_ceil(32), (h as u32).div_ceil(8), 1), ((w as u32) / 32 - 1, (h as u32) / 8 - 1, 1)] {
        agree(
            s,
            "interior_mean5",
            w * h,
            |o| cpu_interior_mean5(grid, block, &x, oxide_rt::Slice2d::new(o, w)),
            |o| launch_interior_mean5(s, grid, block, &dx, oxide_rt::Slice2d::new(o, w)),
        );
    }
    let short = s.clone_htod(&x[..w * h - 1]).unwrap();
    let mut out = s.alloc_zeros::<f32>(w * h).unwrap();
    let grid = ((w as u32).div_ceil(32), (h as u32).div_ceil(8), 1);
    launch_interior_mean5(s, grid, block, &short, oxide_rt::Slice2d::new(&mut out, w)).unwrap();
    let err = g.synchronize().unwrap_err();
    assert!(matches!(&err, oxide_rt::Error::KernelPanic { kernel: "interior_mean5", .. }), "{err}");
}
