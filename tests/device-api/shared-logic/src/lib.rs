//! Logic shared between host code and kernels: plain `no_std` Rust, nothing GPU-specific.
#![no_std]

/// Steps of the Collatz sequence from `n` down to 1 (0 for `n <= 1`), capped at 1000.
pub fn collatz_steps(mut n: u64) -> u32 {
    let mut steps = 0;
    while n > 1 && steps < 1000 {
        n = if n & 1 == 0 { n / 2 } else { 3 * n + 1 };
        steps += 1;
    }
    steps
}
