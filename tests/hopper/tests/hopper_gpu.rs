//! mbarrier and TMA on the GPU: the multi-stage mbarrier kernel against the CPU executor and
//! the values written; a TMA load of every rank (1-D to 5-D, padded strides, boxes partly or
//! wholly outside the tensor) against the box the host computes; every swizzle mode against
//! its XOR pattern; a TMA store round trip; and the tensor maps oxide refuses. Skips (printing
//! why) without a GPU, unless OXIDE_REQUIRE_GPU=1.
use hopper_ops::check::{box_of, swizzle, values_u16, values_u32};
use hopper_ops::kernels::{self, ROUNDS, THREADS};
use oxide_rt::host::{synchronize, Gpu, Swizzle, TensorMap, TensorMapDesc};
use oxide_rt::{Error, LaunchConfig, Slice2d};
use std::sync::OnceLock;

fn gpu() -> Option<&'static Gpu> {
    static GPU: OnceLock<Option<Gpu>> = OnceLock::new();
    GPU.get_or_init(hopper_ops::gpu_or_skip).as_ref()
}

#[test]
fn mbarrier_phases_over_several_stages() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let blocks = 264;
    let mut dout = s.alloc_zeros::<u32>(blocks * THREADS * ROUNDS).unwrap();
    kernels::launch_mbar_rounds(s, blocks as u32, THREADS as u32, &mut dout).unwrap();
    synchronize(s).unwrap();
    let gpu = s.clone_dtoh(&dout).unwrap();
    let mut want = Vec::new();
    for b in 0..blocks {
        for t in 0..THREADS {
            for r in 0..ROUNDS {
                want.push((b * 100_000 + (t + r + 1) % THREADS * 1000 + r) as u32);
            }
        }
    }
    assert_eq!(gpu, want);
    let mut cpu = vec![0u32; 4 * THREADS * ROUNDS];
    kernels::cpu_mbar_rounds(4, THREADS as u32, &mut cpu).unwrap();
    assert_eq!(cpu[..], gpu[..cpu.len()]);
}

/// One rank's case: the tensor, the box, and each block's box coordinates.
struct Case<const D: usize> {
    desc: TensorMapDesc<D>,
    coords: Vec<[i32; D]>,
}

/// Buffer length covering the tensor.
fn extent<const D: usize>(d: &TensorMapDesc<D>) -> usize {
    (0..D).map(|i| (d.dims[i] - 1) * d.strides[i]).sum::<u64>() as usize + 1
}

/// Loads every box of `case` with the rank's kernel and compares each block's tile.
fn check_rank<const D: usize>(
    g: &Gpu,
    case: Case<D>,
    launch: impl Fn(
        u32,
        &TensorMap<'_, u32, D>,
        &oxide_rt::cuda::CudaSlice<i32>,
        Slice2d<'_, oxide_rt::cuda::CudaSlice<u32>>,
    ),
) {
    let s = &g.stream;
    let data = values_u32(extent(&case.desc));
    let ddata = s.clone_htod(&data).unwrap();
    let map = TensorMap::new(&ddata, case.desc).unwrap();
    let n: usize = case.desc.box_dims.iter().map(|&b| b as usize).product();
    assert_eq!(map.box_bytes() as usize, 4 * n);
    let flat: Vec<i32> = case.coords.iter().flatten().copied().collect();
    let dcoords = s.clone_htod(&flat).unwrap();
    let mut dout = s.alloc_zeros::<u32>(case.coords.len() * n).unwrap();
    launch(case.coords.len() as u32, &map, &dcoords, Slice2d::new(&mut dout, n));
    synchronize(s).unwrap();
    let out = s.clone_dtoh(&dout).unwrap();
    for (b, c) in case.coords.iter().enumerate() {
        let want = box_of(&data, &case.desc.dims, &case.desc.strides, &case.desc.box_dims, c, 0);
        assert_eq!(out[b * n..(b + 1) * n], want[..], "{D}-D box at {c:?}");
    }
}

// Boxes inside, across the upper and lower edges, and wholly outside (all zeros).
#[test]
fn tma_load_1d() {
    let Some(g) = gpu() else { return };
    check_rank(
        g,
        Case { desc: TensorMapDesc::row_major([1000], [256]), coords: vec![[0], [256], [900], [-100], [5000]] },
        |n, m, c, o| kernels::launch_tma_load_1d(&g.stream, n, 128, m, c, o).unwrap(),
    );
}

/// Rows padded to 112 elements (448 bytes), 100 used.
#[test]
fn tma_load_2d() {
    let Some(g) = gpu() else { return };
    check_rank(
        g,
        Case {
            desc: TensorMapDesc::row_major([100, 37], [32, 8]).strides([1, 112]),
            coords: vec![[0, 0], [32, 8], [96, 32], [-8, -4], [64, 29], [200, 0]],
        },
        |n, m, c, o| kernels::launch_tma_load_2d(&g.stream, n, 128, m, c, o).unwrap(),
    );
}

#[test]
fn tma_load_3d() {
    let Some(g) = gpu() else { return };
    check_rank(
        g,
        Case {
            desc: TensorMapDesc::row_major([20, 7, 9], [8, 4, 4]).strides([1, 24, 24 * 8]),
            coords: vec![[0, 0, 0], [16, 4, 6], [-4, -2, -2], [8, 3, 5]],
        },
        |n, m, c, o| kernels::launch_tma_load_3d(&g.stream, n, 128, m, c, o).unwrap(),
    );
}

#[test]
fn tma_load_4d() {
    let Some(g) = gpu() else { return };
    check_rank(
        g,
        Case {
            desc: TensorMapDesc::row_major([12, 5, 4, 6], [4, 3, 2, 5]),
            coords: vec![[0, 0, 0, 0], [8, 3, 3, 2], [-4, -1, 1, -3], [4, 2, 0, 5]],
        },
        |n, m, c, o| kernels::launch_tma_load_4d(&g.stream, n, 128, m, c, o).unwrap(),
    );
}

#[test]
fn tma_load_5d() {
    let Some(g) = gpu() else { return };
    check_rank(
        g,
        Case {
            desc: TensorMapDesc::row_major([8, 3, 4, 2, 5], [4, 2, 3, 2, 2]),
            coords: vec![[0, 0, 0, 0, 0], [4, 2, 2, 1, 4], [-4, -1, 3, 0, -1], [8, 0, 0, 0, 0]],
        },
        |n, m, c, o| kernels::launch_tma_load_5d(&g.stream, n, 128, m, c, o).unwrap(),
    );
}

#[test]
fn tma_swizzle_modes_permute_16_byte_chunks() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    // 200 u16 per row (400 bytes), 40 rows.
    let (dims, strides) = ([200u64, 40], [1u64, 200]);
    let data = values_u16(200 * 40);
    let ddata = s.clone_htod(&data).unwrap();
    let coords = [[0i32, 0], [64, 8], [160, 30], [-16, -3]];
    let flat: Vec<i32> = coords.iter().flatten().copied().collect();
    let dcoords = s.clone_htod(&flat).unwrap();
    for (swz, inner) in [(Swizzle::None, 64u32), (Swizzle::B32, 16), (Swizzle::B64, 32), (Swizzle::B128, 64)] {
        let desc = TensorMapDesc::row_major(dims, [inner, 16]).swizzle(swz);
        let map = TensorMap::new(&ddata, desc).unwrap();
        let n = inner as usize * 16;
        let mut dout = s.alloc_zeros::<u16>(coords.len() * n).unwrap();
        kernels::launch_tma_load_u16(s, coords.len() as u32, 128, &map, &dcoords, Slice2d::new(&mut dout, n)).unwrap();
        synchronize(s).unwrap();
        let out = s.clone_dtoh(&dout).unwrap();
        for (b, c) in coords.iter().enumerate() {
            let packed = box_of(&data, &dims, &strides, &[inner, 16], c, 0);
            let want = swizzle(&packed, 2, swz.bytes() as usize);
            assert_eq!(out[b * n..(b + 1) * n], want[..], "{swz:?} box at {c:?}");
            if swz != Swizzle::None && c[0] >= 0 && c[1] >= 0 {
                assert_ne!(want, packed, "{swz:?} must permute");
            }
        }
    }
}

#[test]
fn tma_store_round_trip() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let (w, h) = (100usize, 50usize);
    let src: Vec<u32> = values_u32(w * h);
    let dsrc = s.clone_htod(&src).unwrap();
    let mut ddst = s.alloc_zeros::<u32>(w * h).unwrap();
    let coords: Vec<[i32; 2]> = (0..4).flat_map(|x| (0..7).map(move |y| [32 * x, 8 * y])).collect();
    let flat: Vec<i32> = coords.iter().flatten().copied().collect();
    let dcoords = s.clone_htod(&flat).unwrap();
    let n = 32 * 8;
    let mut dout = s.alloc_zeros::<u32>(coords.len() * n).unwrap();
    {
        let smap = TensorMap::new(&dsrc, TensorMapDesc::row_major([w as u64, h as u64], [32, 8])).unwrap();
        let dmap = TensorMap::new_mut(&mut ddst, TensorMapDesc::row_major([w as u64, h as u64], [32, 8])).unwrap();
        kernels::launch_tma_store_2d(s, coords.len() as u32, 128, &smap, &dmap, &dcoords, Slice2d::new(&mut dout, n))
            .unwrap();
        synchronize(s).unwrap();
    }
    let dst = s.clone_dtoh(&ddst).unwrap();
    let plus1: Vec<u32> = src.iter().map(|v| v + 1).collect();
    assert_eq!(dst, plus1, "the boxes cover the whole tensor");
    // The launch records the writable map's buffer as written: a copy on another stream, with
    // no synchronisation of ours, waits for the stores.
    let other = g.ctx.new_stream().unwrap();
    for round in 0..3u32 {
        let mut fresh = s.alloc_zeros::<u32>(w * h).unwrap();
        {
            let dmap = TensorMap::new_mut(&mut fresh, TensorMapDesc::row_major([w as u64, h as u64], [32, 8])).unwrap();
            let smap = TensorMap::new(&dsrc, TensorMapDesc::row_major([w as u64, h as u64], [32, 8])).unwrap();
            kernels::launch_tma_store_2d(
                s,
                coords.len() as u32,
                128,
                &smap,
                &dmap,
                &dcoords,
                Slice2d::new(&mut dout, n),
            )
            .unwrap();
        }
        assert_eq!(other.clone_dtoh(&fresh).unwrap(), plus1, "round {round}: read before the stores landed");
    }
    let out = s.clone_dtoh(&dout).unwrap();
    for (b, c) in coords.iter().enumerate() {
        let want = box_of(&plus1, &[w as u64, h as u64], &[1, w as u64], &[32, 8], c, 0);
        assert_eq!(out[b * n..(b + 1) * n], want[..], "reloaded box at {c:?}");
    }
}

#[test]
fn bad_tensor_maps_are_refused() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let buf = s.alloc_zeros::<oxide_rt::Bf16>(4096).unwrap();
    let refused = |r: Result<TensorMap<'_, oxide_rt::Bf16, 2>, Error>, want: &str| match r {
        Err(Error::TensorMap(m)) => assert!(m.contains(want), "{m}"),
        Err(e) => panic!("expected Error::TensorMap ({want}), got {e}"),
        Ok(_) => panic!("expected Error::TensorMap ({want}), got a map"),
    };
    // 10 bf16 per row = 20 bytes: not a multiple of 16.
    refused(TensorMap::new(&buf, TensorMapDesc::row_major([10, 64], [8, 8])), "not a multiple of 16");
    refused(TensorMap::new(&buf, TensorMapDesc::row_major([64, 80], [64, 8])), "but the buffer has 4096");
    refused(TensorMap::new(&buf, TensorMapDesc::row_major([512, 8], [512, 8])), "box_dims[0] is 512");
    refused(
        TensorMap::new(&buf, TensorMapDesc::row_major([64, 64], [64, 8]).swizzle(Swizzle::B64)),
        "more than the 64-byte swizzle span",
    );
    let ok = TensorMap::new(&buf, TensorMapDesc::row_major([64, 64], [64, 8]).swizzle(Swizzle::B128)).unwrap();
    assert_eq!(ok.box_bytes(), 64 * 8 * 2);
    // A map of device memory on the CPU executor, and one of host memory on the GPU: errors
    // naming the argument, not a wrong answer.
    let data = s.clone_htod(&values_u32(1024)).unwrap();
    let map = TensorMap::new(&data, TensorMapDesc::row_major([32, 32], [32, 8])).unwrap();
    let mut out = vec![0u32; 256];
    let e = kernels::cpu_tma_load_2d(1, 128, &map, &[0, 0], Slice2d::new(&mut out[..], 256)).unwrap_err();
    assert!(
        matches!(e, Error::InvalidLaunch { .. })
            && e.to_string().contains("argument `map` is a TMA tensor map of device memory"),
        "{e}"
    );
    let host = values_u32(1024);
    let host_map = TensorMap::host(&host, TensorMapDesc::row_major([32, 32], [32, 8])).unwrap();
    let coords = s.clone_htod(&[0i32, 0]).unwrap();
    let mut dout = s.alloc_zeros::<u32>(256).unwrap();
    let e = kernels::launch_tma_load_2d(s, 1, 128, &host_map, &coords, Slice2d::new(&mut dout, 256)).unwrap_err();
    assert!(e.to_string().contains("argument `map` is a tensor map of host memory"), "{e}");
}

/// The 2-D case with the map in global memory instead of parameter space (TMA takes either):
/// tells a wrong map from a wrong parameter address.
#[test]
fn tma_load_2d_map_in_global_memory() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let desc = TensorMapDesc::row_major([100, 37], [32, 8]).strides([1, 112]);
    let data = values_u32(extent(&desc));
    let ddata = s.clone_htod(&data).unwrap();
    let map = TensorMap::new(&ddata, desc).unwrap();
    let (raw, info) = map.parts();
    let dmap = s.clone_htod(&raw.0).unwrap();
    let words = [
        info.box_dims[0],
        info.box_dims[1],
        info.box_dims[2],
        info.box_dims[3],
        info.box_dims[4],
        info.box_bytes,
        info.swizzle,
        info.rank,
        info.writable,
    ];
    let coords = [[0i32, 0], [32, 8], [96, 32], [-8, -4]];
    let flat: Vec<i32> = coords.iter().flatten().copied().collect();
    let dcoords = s.clone_htod(&flat).unwrap();
    let n = 256;
    let mut dout = s.alloc_zeros::<u32>(coords.len() * n).unwrap();
    kernels::launch_tma_load_2d_global(s, coords.len() as u32, 128, &dmap, words, &dcoords, Slice2d::new(&mut dout, n))
        .unwrap();
    synchronize(s).unwrap();
    let out = s.clone_dtoh(&dout).unwrap();
    for (b, c) in coords.iter().enumerate() {
        let want = box_of(&data, &desc.dims, &desc.strides, &desc.box_dims, c, 0);
        assert_eq!(out[b * n..(b + 1) * n], want[..], "box at {c:?}");
    }
}

/// An innermost coordinate that is not a multiple of 16 bytes makes the GPU fault (an illegal
/// instruction that ends the context); oxide's check turns it into a kernel panic, the block's
/// waiters are released, and the context stays usable.
#[test]
fn tma_misaligned_inner_coordinate_is_a_panic() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let desc = TensorMapDesc::row_major([64, 16], [32, 8]);
    let data = s.clone_htod(&values_u32(64 * 16)).unwrap();
    let map = TensorMap::new(&data, desc).unwrap();
    let mut dout = s.alloc_zeros::<u32>(256).unwrap();
    let bad = s.clone_htod(&[2i32, 0]).unwrap();
    let r =
        kernels::launch_tma_load_2d(s, 1, 128, &map, &bad, Slice2d::new(&mut dout, 256)).and_then(|_| synchronize(s));
    match r {
        Err(Error::KernelPanic { message, .. }) => assert!(message.contains("multiple of 16 bytes"), "{message}"),
        other => panic!("expected a kernel panic, got {other:?}"),
    }
    let good = s.clone_htod(&[4i32, 0]).unwrap();
    kernels::launch_tma_load_2d(s, 1, 128, &map, &good, Slice2d::new(&mut dout, 256)).unwrap();
    synchronize(s).unwrap();
    let want = box_of(&values_u32(64 * 16), &[64, 16], &[1, 64], &[32, 8], &[4, 0], 0);
    assert_eq!(s.clone_dtoh(&dout).unwrap(), want);
}

/// Distributed shared memory in clusters of 4: remote reads and writes land in the right
/// block, and the cluster registers say where each block is.
#[test]
fn cluster_distributed_shared_memory() {
    use hopper_ops::kernels::{CLUSTER, CLUSTER_THREADS as N, REGS};
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let blocks = 8 * CLUSTER;
    let cols = REGS + 2 * N;
    let mut dout = s.alloc_zeros::<u32>(blocks * cols).unwrap();
    kernels::launch_cluster_dsmem(s, blocks as u32, N as u32, Slice2d::new(&mut dout, cols)).unwrap();
    synchronize(s).unwrap();
    assert_eq!(s.clone_dtoh(&dout).unwrap(), hopper_ops::check::cluster_dsmem_rows(blocks));
    // A grid that is not a whole number of clusters is refused before launching.
    let e = kernels::launch_cluster_dsmem(s, 6, N as u32, Slice2d::new(&mut dout, cols)).unwrap_err();
    assert!(e.to_string().contains("not a whole number of clusters"), "{e}");
}

/// A cluster whose rank 1 returns at once, and whose other blocks lose a warp early: the live
/// threads' cluster barriers complete, their remote reads and writes land, and rank 1's block
/// lives on until they are done with it (the launch completes; memcheck finds no access to a
/// block that has exited).
#[test]
fn cluster_blocks_that_return_early() {
    use hopper_ops::kernels::{CLUSTER, CLUSTER_THREADS as N};
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let blocks = 16 * CLUSTER;
    let cols = 2 * N;
    const UNTOUCHED: u32 = 0xdead_beef;
    for round in 0..3 {
        let mut dout = s.clone_htod(&vec![UNTOUCHED; blocks * cols]).unwrap();
        kernels::launch_cluster_early_exit(s, blocks as u32, N as u32, Slice2d::new(&mut dout, cols)).unwrap();
        synchronize(s).unwrap();
        let want = hopper_ops::check::cluster_early_exit_rows(blocks, UNTOUCHED);
        assert_eq!(s.clone_dtoh(&dout).unwrap(), want, "round {round}");
    }
}

/// Without `cluster(..)` every block is a cluster of one on the GPU too: the same answers as
/// the CPU executor.
#[test]
fn a_block_is_a_cluster_of_one() {
    use hopper_ops::kernels::{CLUSTER_THREADS as N, REGS};
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let blocks = 5;
    let cols = REGS + 2 * N;
    let mut dout = s.alloc_zeros::<u32>(blocks * cols).unwrap();
    kernels::launch_cluster_solo(s, blocks as u32, N as u32, Slice2d::new(&mut dout, cols)).unwrap();
    synchronize(s).unwrap();
    let mut cpu = vec![0u32; blocks * cols];
    kernels::cpu_cluster_solo(blocks as u32, N as u32, Slice2d::new(&mut cpu[..], cols)).unwrap();
    assert_eq!(s.clone_dtoh(&dout).unwrap(), cpu);
    assert_eq!(cpu[REGS..REGS + 2], [1, 2], "read of thread 1 of block 0");
}

/// `elect.sync` and the `asm!` escape hatch on the GPU, against the CPU executor's fallbacks.
#[test]
fn elect_and_asm() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let mut dout = s.alloc_zeros::<u32>(3 * 96 * 3).unwrap();
    kernels::launch_elect_and_asm(s, 3, 96, &mut dout).unwrap();
    synchronize(s).unwrap();
    let gpu = s.clone_dtoh(&dout).unwrap();
    let mut cpu = vec![0u32; 3 * 96 * 3];
    kernels::cpu_elect_and_asm(3, 96, &mut cpu).unwrap();
    assert_eq!(gpu, cpu);
    assert_eq!(gpu.chunks(3).filter(|v| v[0] == 1).count(), 9, "one lane per warp");
}

/// A 4-stage warp-specialised TMA pipeline (full/empty mbarriers, 64 KiB of dynamic shared
/// memory): every consumer thread's sum over every box matches the host's.
#[test]
fn tma_pipeline_with_full_and_empty_barriers() {
    use hopper_ops::kernels::{CONSUMERS, PIPE_BOX, PIPE_SHARED, PIPE_THREADS};
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let (blocks, tiles) = (6u32, 11u32);
    let rows = (blocks * tiles * PIPE_BOX) as u64;
    let data: Vec<u32> = (0..rows * 64).map(|i| (i as u32).wrapping_mul(2654435761) >> 8).collect();
    let ddata = s.clone_htod(&data).unwrap();
    let map = TensorMap::new(&ddata, TensorMapDesc::row_major([64, rows], [PIPE_BOX, PIPE_BOX])).unwrap();
    let mut dout = s.alloc_zeros::<u32>(blocks as usize * PIPE_THREADS).unwrap();
    let cfg = LaunchConfig::new(blocks, PIPE_THREADS as u32).shared_mem_bytes(PIPE_SHARED);
    kernels::launch_tma_pipeline_with(s, cfg, &map, tiles, &mut dout).unwrap();
    synchronize(s).unwrap();
    let out = s.clone_dtoh(&dout).unwrap();
    let boxed = (PIPE_BOX * PIPE_BOX) as usize;
    for b in 0..blocks as usize {
        for t in 0..PIPE_THREADS {
            let want = if t < CONSUMERS {
                let first = b * tiles as usize * boxed;
                (0..tiles as usize * boxed)
                    .filter(|i| i % boxed % CONSUMERS == t)
                    .fold(0u32, |acc, i| acc.wrapping_add(data[first + i]))
            } else {
                0
            };
            assert_eq!(out[b * PIPE_THREADS + t], want, "block {b} thread {t}");
        }
    }
    let mut aligned = s.alloc_zeros::<[u32; 2]>(2).unwrap();
    let cfg = LaunchConfig::new(2, 32).shared_mem_bytes(4096 + 1024 - 16);
    kernels::launch_aligned_dynamic_with(s, cfg, &mut aligned).unwrap();
    for o in s.clone_dtoh(&aligned).unwrap() {
        assert!(o[0] == 0 && (4096 - 16) / 4 <= o[1], "{o:?}");
    }
}

/// Blocks that exit with TMA loads in flight (8 boxes of 8 KiB each, never waited for) next to
/// blocks that reuse their shared memory and barrier: every checking block must see exactly its
/// own box, 20 us after its load completed. A late byte or `complete_tx` of a left block's copy
/// landing in the next block's memory would break safe code (`TensorMap::load` does not make
/// the block wait), so this is a soundness test of the hardware's behaviour, not of oxide's.
#[test]
fn tma_loads_in_flight_at_block_exit_stay_in_their_block() {
    use hopper_ops::kernels::{EXIT_BOX_COLS, EXIT_ROWS, TILE};
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let rows = TILE / EXIT_BOX_COLS;
    let leave: Vec<u32> = (0..EXIT_ROWS * EXIT_BOX_COLS).map(|i| 0x8000_0000 | i as u32).collect();
    let check = values_u32(EXIT_ROWS * EXIT_BOX_COLS);
    let (dleave, dcheck) = (s.clone_htod(&leave).unwrap(), s.clone_htod(&check).unwrap());
    let desc = TensorMapDesc::row_major([EXIT_BOX_COLS as u64, EXIT_ROWS as u64], [EXIT_BOX_COLS as u32, rows as u32]);
    let (mleave, mcheck) = (TensorMap::new(&dleave, desc).unwrap(), TensorMap::new(&dcheck, desc).unwrap());
    // 16 blocks of 128 threads fit on an SM at once: 20 waves over 132 SMs.
    let blocks = 132 * 16 * 20;
    let mut dout = s.alloc_zeros::<u32>(blocks * TILE).unwrap();
    for linger_ns in [0, 20_000] {
        kernels::launch_tma_exit_in_flight(
            s,
            blocks as u32,
            THREADS as u32,
            &mleave,
            &mcheck,
            linger_ns,
            Slice2d::new(&mut dout, TILE),
        )
        .unwrap();
        synchronize(s).unwrap();
        let out = s.clone_dtoh(&dout).unwrap();
        let mut bad = 0;
        for b in (1..blocks).step_by(2) {
            let first = b / 2 * rows % EXIT_ROWS * EXIT_BOX_COLS;
            let got = &out[b * TILE..(b + 1) * TILE];
            if got != &check[first..first + TILE] {
                if bad < 3 {
                    let i = (0..TILE).find(|&i| got[i] != check[first + i]).unwrap();
                    eprintln!(
                        "block {b} (linger {linger_ns} ns): element {i} is {:#x}, want {:#x}",
                        got[i],
                        check[first + i]
                    );
                }
                bad += 1;
            }
        }
        assert_eq!(
            bad,
            0,
            "{bad} of {} checking blocks saw another block's TMA copy (linger {linger_ns} ns)",
            blocks / 2
        );
    }
}

/// `cluster_race` with its second cluster barrier: rank 1 reads what rank 0 wrote into its
/// shared memory, as on the CPU executor (which reports the race without the barrier).
#[test]
fn a_write_into_another_blocks_memory_is_read_after_a_cluster_barrier() {
    let Some(g) = gpu() else { return };
    let s = &g.stream;
    let mut dout = s.alloc_zeros::<u32>(128).unwrap();
    kernels::launch_cluster_race(s, 2, 64, 1, &mut dout).unwrap();
    synchronize(s).unwrap();
    let mut cpu = vec![0u32; 128];
    kernels::cpu_cluster_race(2, 64, 1, &mut cpu).unwrap();
    assert_eq!(s.clone_dtoh(&dout).unwrap(), cpu);
}
