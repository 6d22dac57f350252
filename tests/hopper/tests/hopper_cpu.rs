//! The mbarrier kernels on the CPU executor (no GPU needed): phases and parities over several
//! stages against the values the threads wrote, with the race check on; a phase that cannot
//! complete is a reported deadlock, not a hang or a wrong answer.
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
