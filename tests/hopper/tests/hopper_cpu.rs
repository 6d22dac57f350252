//! The Hopper kernels on the CPU executor (no GPU needed), with the race check on: mbarrier
//! phases and parities over several stages (a phase that cannot complete is a reported
//! deadlock, not a hang or a wrong answer), thread-block clusters (distributed shared memory,
//! early-returning blocks, a race across blocks), and TMA copies of host tensor maps against
//! the boxes the GPU tests check.
use hopper_ops::kernels::{self, ROUNDS, STAGES, THREADS};
use oxide_rt::LaunchConfig;

/// What thread `t` of block `b` reads in round `r` of `mbar_rounds`.
pub fn expected_rounds(blocks: usize) -> Vec<u32> {
    let mut want = Vec::new();
    for b in 0..blocks {
        for t in 0..THREADS {
            for r in 0..ROUNDS {
                let n = (t + r + 1) % THREADS;
                want.push((b * 100_000 + n * 1000 + r) as u32);
            }
        }
    }
    want
}

#[test]
fn mbarrier_phases_over_several_stages() {
    const { assert!(STAGES >= 2 && ROUNDS > 2 * STAGES, "every barrier must go through phases of both parities") };
    oxide_rt::host::set_cpu_checks(true);
    let blocks = 3;
    let mut out = vec![0u32; blocks * THREADS * ROUNDS];
    kernels::cpu_mbar_rounds_with(LaunchConfig::new(blocks as u32, THREADS as u32), &mut out).unwrap();
    assert_eq!(out, expected_rounds(blocks));
}

#[test]
fn a_phase_that_cannot_complete_is_a_deadlock_error() {
    let mut out = vec![0u32; THREADS];
    let e = kernels::cpu_mbar_never(1, THREADS as u32, &mut out).unwrap_err().to_string();
    assert!(e.contains("mbarrier wait for parity 0"), "{e}");
    assert_eq!(out, vec![0; THREADS], "no thread passed the wait");
}

#[test]
fn expected_transaction_bytes_keep_the_phase_open() {
    for (bytes, delivered) in [(16, 0), (16, 8)] {
        let mut out = vec![0u32; 32];
        let e = kernels::cpu_mbar_tx_pending(1, 32, bytes, delivered, &mut out).unwrap_err().to_string();
        assert!(e.contains("mbarrier wait for parity 0"), "{bytes} {delivered}: {e}");
        assert_eq!(out, vec![0; 32]);
    }
    // Once every expected byte is done (or none was expected) the phase completes.
    for (bytes, delivered) in [(0, 0), (16, 16)] {
        let mut out = vec![0u32; 32];
        kernels::cpu_mbar_tx_pending(1, 32, bytes, delivered, &mut out).unwrap();
        assert_eq!(out, vec![1; 32], "{bytes} {delivered}");
    }
}

/// The cluster functions in a kernel without `cluster(..)`: every block is a cluster of one
/// (rank 0 of 1, cluster index = block index), the cluster barrier a block barrier, and rank 0
/// of `map_shared` the block's own array.
#[test]
fn a_block_is_a_cluster_of_one() {
    use hopper_ops::kernels::{CLUSTER_THREADS as N, REGS};
    oxide_rt::host::set_cpu_checks(true);
    let blocks = 3;
    let cols = REGS + 2 * N;
    let mut out = vec![0u32; blocks * cols];
    kernels::cpu_cluster_solo(blocks as u32, N as u32, oxide_rt::Slice2d::new(&mut out[..], cols)).unwrap();
    for b in 0..blocks {
        let row = &out[b * cols..(b + 1) * cols];
        assert_eq!(row[..REGS], [0, 1, b as u32, 0, 1, blocks as u32], "block {b}");
        for t in 0..N {
            let read = (b * 1000 + (t + 1) % N) as u32;
            assert_eq!(row[REGS + t], read, "block {b} thread {t}");
            assert_eq!(row[REGS + N + t], read + 7, "block {b} thread {t}");
        }
    }
}

/// Clusters of 4 on the CPU executor: the blocks of a cluster run together, read and write
/// each other's shared memory after cluster barriers, and see the cluster registers the GPU
/// gives them (the GPU test checks the same rows).
#[test]
fn distributed_shared_memory_of_clusters() {
    use hopper_ops::kernels::{CLUSTER_THREADS as N, REGS};
    oxide_rt::host::set_cpu_checks(true);
    let (blocks, cols) = (24, REGS + 2 * N);
    let mut out = vec![0u32; blocks * cols];
    kernels::cpu_cluster_dsmem(blocks as u32, N as u32, oxide_rt::Slice2d::new(&mut out[..], cols)).unwrap();
    assert_eq!(out, hopper_ops::check::cluster_dsmem_rows(blocks));
    // A grid that is not a whole number of clusters is refused, as on the GPU.
    let e = kernels::cpu_cluster_dsmem(6, N as u32, oxide_rt::Slice2d::new(&mut out[..], cols)).unwrap_err();
    assert!(e.to_string().contains("not a whole number of clusters"), "{e}");
}

/// A block that returns at once and warps that return early: the others' cluster barriers
/// complete without them, and the early block's memory is still there for their writes.
#[test]
fn cluster_blocks_that_return_early() {
    use hopper_ops::kernels::CLUSTER_THREADS as N;
    oxide_rt::host::set_cpu_checks(true);
    let blocks = 16;
    let mut out = vec![7u32; blocks * 2 * N];
    kernels::cpu_cluster_early_exit(blocks as u32, N as u32, oxide_rt::Slice2d::new(&mut out[..], 2 * N)).unwrap();
    assert_eq!(out, hopper_ops::check::cluster_early_exit_rows(blocks, 7));
}

/// A write into another block's shared memory and that block's read of it with no cluster
/// barrier between are a race the checks report with both threads and lines; with the barrier
/// the read gets the value.
#[test]
fn a_race_on_distributed_shared_memory_is_reported() {
    oxide_rt::host::set_cpu_checks(true);
    let mut out = vec![0u32; 128];
    let e = kernels::cpu_cluster_race(2, 64, 0, &mut out).unwrap_err().to_string();
    assert!(e.contains("hazard") && e.contains("(distributed shared memory)"), "{e}");
    assert!(e.contains("of cluster rank 0") && e.contains("of cluster rank 1"), "{e}");
    assert!(e.contains("with no cluster barrier between them"), "{e}");
    kernels::cpu_cluster_race(2, 64, 1, &mut out).unwrap();
    let want: Vec<u32> = (0..128).map(|i| if i < 64 { 0 } else { 100 + (i - 64) as u32 }).collect();
    assert_eq!(out, want);
}

/// `elect_sync` picks lane 0 of each full warp; the `asm!` helpers fall back to the device API
/// and wrapping arithmetic on the CPU.
#[test]
fn elect_and_the_asm_fallbacks() {
    let mut out = vec![0u32; 2 * 96 * 3];
    kernels::cpu_elect_and_asm(2, 96, &mut out).unwrap();
    for (i, v) in out.chunks(3).enumerate() {
        assert_eq!(v, [(i % 32 == 0) as u32, (i % 32) as u32, 3 * i as u32 + 1], "thread {i}");
    }
}

#[test]
fn aligned_dynamic_shared_memory() {
    let mut out = vec![[9u32; 2]; 2];
    let cfg = LaunchConfig::new(2, 32).shared_mem_bytes(4096 + 1024 - 16);
    kernels::cpu_aligned_dynamic_with(cfg, &mut out).unwrap();
    for o in &out {
        assert_eq!(o[0], 0, "1024-byte aligned");
        // The CPU's window is 16-byte aligned: between 0 and 1008 bytes of padding.
        assert!((4096 - 16) / 4 <= o[1] && o[1] <= (4096 + 1024 - 16) / 4, "{o:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// TMA on the CPU executor: maps of host memory, the same boxes the GPU tests check.

use hopper_ops::check::{box_of, swizzle, values_u16, values_u32};
use oxide_rt::host::{Swizzle, TensorMap, TensorMapDesc};
use oxide_rt::Slice2d;

/// Loads the box of each `coords` entry of a tensor with `desc` through `launch` and compares
/// every block's tile with the host's box (zeros outside the tensor).
fn check_boxes<const D: usize>(
    desc: TensorMapDesc<D>,
    coords: &[[i32; D]],
    launch: impl Fn(u32, &TensorMap<'_, u32, D>, &[i32], Slice2d<'_, [u32]>) -> Result<(), oxide_rt::Error>,
) {
    oxide_rt::host::set_cpu_checks(true);
    let extent = (0..D).map(|i| (desc.dims[i] - 1) * desc.strides[i]).sum::<u64>() as usize + 1;
    let data = values_u32(extent);
    let map = TensorMap::host(&data, desc).unwrap();
    let n: usize = desc.box_dims.iter().map(|&b| b as usize).product();
    assert_eq!(map.box_bytes() as usize, 4 * n);
    let flat: Vec<i32> = coords.iter().flatten().copied().collect();
    let mut out = vec![0u32; coords.len() * n];
    launch(coords.len() as u32, &map, &flat, Slice2d::new(&mut out[..], n)).unwrap();
    for (b, c) in coords.iter().enumerate() {
        let want = box_of(&data, &desc.dims, &desc.strides, &desc.box_dims, c, 0);
        assert_eq!(out[b * n..(b + 1) * n], want[..], "{D}-D box at {c:?}");
    }
}

#[test]
fn tma_loads_of_every_rank_on_the_cpu() {
    check_boxes(TensorMapDesc::row_major([1000], [256]), &[[0], [256], [900], [-100], [5000]], |n, m, c, o| {
        kernels::cpu_tma_load_1d(n, 128, m, c, o)
    });
    check_boxes(
        TensorMapDesc::row_major([100, 37], [32, 8]).strides([1, 112]),
        &[[0, 0], [32, 8], [96, 32], [-8, -4], [64, 29], [200, 0]],
        |n, m, c, o| kernels::cpu_tma_load_2d(n, 128, m, c, o),
    );
    check_boxes(
        TensorMapDesc::row_major([20, 7, 9], [8, 4, 4]).strides([1, 24, 24 * 8]),
        &[[0, 0, 0], [16, 4, 6], [-4, -2, -2], [8, 3, 5]],
        |n, m, c, o| kernels::cpu_tma_load_3d(n, 128, m, c, o),
    );
    check_boxes(
        TensorMapDesc::row_major([12, 5, 4, 6], [4, 3, 2, 5]),
        &[[0, 0, 0, 0], [8, 3, 3, 2], [-4, -1, 1, -3], [4, 2, 0, 5]],
        |n, m, c, o| kernels::cpu_tma_load_4d(n, 128, m, c, o),
    );
    check_boxes(
        TensorMapDesc::row_major([8, 3, 4, 2, 5], [4, 2, 3, 2, 2]),
        &[[0, 0, 0, 0, 0], [4, 2, 2, 1, 4], [-4, -1, 3, 0, -1], [8, 0, 0, 0, 0]],
        |n, m, c, o| kernels::cpu_tma_load_5d(n, 128, m, c, o),
    );
}

#[test]
fn tma_swizzle_modes_on_the_cpu() {
    oxide_rt::host::set_cpu_checks(true);
    let (dims, strides) = ([200u64, 40], [1u64, 200]);
    let data = values_u16(200 * 40);
    let coords = [[0i32, 0], [64, 8], [160, 30], [-16, -3]];
    let flat: Vec<i32> = coords.iter().flatten().copied().collect();
    for (swz, inner) in [(Swizzle::None, 64u32), (Swizzle::B32, 16), (Swizzle::B64, 32), (Swizzle::B128, 64)] {
        let map = TensorMap::host(&data, TensorMapDesc::row_major(dims, [inner, 16]).swizzle(swz)).unwrap();
        let n = inner as usize * 16;
        let mut out = vec![0u16; coords.len() * n];
        kernels::cpu_tma_load_u16(coords.len() as u32, 128, &map, &flat, Slice2d::new(&mut out[..], n)).unwrap();
        for (b, c) in coords.iter().enumerate() {
            let want = swizzle(&box_of(&data, &dims, &strides, &[inner, 16], c, 0), 2, swz.bytes() as usize);
            assert_eq!(out[b * n..(b + 1) * n], want[..], "{swz:?} box at {c:?}");
        }
    }
}

#[test]
fn tma_store_round_trip_on_the_cpu() {
    oxide_rt::host::set_cpu_checks(true);
    let (w, h) = (100usize, 50usize);
    let src = values_u32(w * h);
    let mut dst = vec![0u32; w * h];
    let coords: Vec<[i32; 2]> = (0..4).flat_map(|x| (0..7).map(move |y| [32 * x, 8 * y])).collect();
    let flat: Vec<i32> = coords.iter().flatten().copied().collect();
    let n = 32 * 8;
    let mut out = vec![0u32; coords.len() * n];
    {
        let desc = TensorMapDesc::row_major([w as u64, h as u64], [32, 8]);
        let (smap, dmap) = (TensorMap::host(&src, desc).unwrap(), TensorMap::host_mut(&mut dst, desc).unwrap());
        kernels::cpu_tma_store_2d(coords.len() as u32, 128, &smap, &dmap, &flat, Slice2d::new(&mut out[..], n))
            .unwrap();
        // A store through a load-only map is refused, as on the GPU.
        let e = kernels::cpu_tma_store_2d(coords.len() as u32, 128, &smap, &smap, &flat, Slice2d::new(&mut out[..], n));
        assert!(e.unwrap_err().to_string().contains("read-only tensor map"));
    }
    let plus1: Vec<u32> = src.iter().map(|v| v + 1).collect();
    assert_eq!(dst, plus1, "the boxes cover the whole tensor");
}

/// The warp-specialised pipeline (a producer warp, consumer warps, full and empty barriers over
/// 4 stages of dynamic shared memory) on the CPU: every consumer's sum over every box.
#[test]
fn tma_pipeline_with_full_and_empty_barriers_on_the_cpu() {
    use hopper_ops::kernels::{CONSUMERS, PIPE_BOX, PIPE_SHARED, PIPE_THREADS};
    oxide_rt::host::set_cpu_checks(true);
    let (blocks, tiles) = (3u32, 7u32);
    let rows = (blocks * tiles * PIPE_BOX) as u64;
    let data: Vec<u32> = (0..rows * 64).map(|i| (i as u32).wrapping_mul(2654435761) >> 8).collect();
    let map = TensorMap::host(&data, TensorMapDesc::row_major([64, rows], [PIPE_BOX, PIPE_BOX])).unwrap();
    let mut out = vec![0u32; blocks as usize * PIPE_THREADS];
    let cfg = LaunchConfig::new(blocks, PIPE_THREADS as u32).shared_mem_bytes(PIPE_SHARED);
    kernels::cpu_tma_pipeline_with(cfg, &map, tiles, &mut out).unwrap();
    let boxed = (PIPE_BOX * PIPE_BOX) as usize;
    for b in 0..blocks as usize {
        for t in 0..PIPE_THREADS {
            let first = b * tiles as usize * boxed;
            let sum = (0..tiles as usize * boxed)
                .filter(|i| i % boxed % CONSUMERS == t)
                .fold(0u32, |acc, i| acc.wrapping_add(data[first + i]));
            assert_eq!(out[b * PIPE_THREADS + t], if t < CONSUMERS { sum } else { 0 }, "block {b} thread {t}");
        }
    }
}

/// An innermost coordinate that is not a multiple of 16 bytes faults the GPU's TMA unit; oxide
/// checks it and panics, on the CPU executor too, and a bad map shape is refused on the host.
#[test]
fn tma_misaligned_coordinates_and_bad_maps_on_the_cpu() {
    let data = values_u32(64 * 16);
    let map = TensorMap::host(&data, TensorMapDesc::row_major([64, 16], [32, 8])).unwrap();
    let mut out = vec![0u32; 256];
    match kernels::cpu_tma_load_2d(1, 128, &map, &[2, 0], Slice2d::new(&mut out[..], 256)) {
        Err(oxide_rt::Error::KernelPanic { message, .. }) => {
            assert!(message.contains("multiple of 16 bytes"), "{message}")
        }
        other => panic!("expected a kernel panic, got {other:?}"),
    }
    kernels::cpu_tma_load_2d(1, 128, &map, &[4, 0], Slice2d::new(&mut out[..], 256)).unwrap();
    assert_eq!(out, box_of(&data, &[64, 16], &[1, 64], &[32, 8], &[4, 0], 0));
    let too_long = TensorMap::host(&data[..64 * 15], TensorMapDesc::row_major([64, 16], [32, 8]));
    assert!(too_long.is_err_and(|e| e.to_string().contains("but the buffer has 960")));
}
