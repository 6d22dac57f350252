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
    assert!(STAGES >= 2 && ROUNDS > 2 * STAGES, "every barrier must go through phases of both parities");
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
    let mut out = vec![0u32; 32];
    let e = kernels::cpu_mbar_tx_pending(1, 32, 16, &mut out).unwrap_err().to_string();
    assert!(e.contains("mbarrier wait for parity 0"), "{e}");
    // Without pending bytes the same kernel completes.
    kernels::cpu_mbar_tx_pending(1, 32, 0, &mut out).unwrap();
    assert_eq!(out, vec![1; 32]);
}
