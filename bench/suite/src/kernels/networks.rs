//! network kernels (device side): bitonic sort steps on xor pairs, radix-2 FFT stages on
//! butterfly pairs.
use oxide_rt::device::*;

/// One compare-exchange step of a bitonic sort of `u32` keys: the pair `(i, i ^ j)` (`j` comes
/// with `keys` from the host) ends ascending when `i & k == 0`, descending otherwise. Launch one
/// thread per key.
#[kernel(dims = 1)]
pub fn bitonic_step(k: u32, mut keys: DisjointXorPairs<u32>) {
    let i = thread::index().get();
    if let Some((a, b)) = keys.pair_mut() {
        let ascending = i & k as usize == 0;
        if (*a > *b) == ascending {
            core::mem::swap(a, b);
        }
    }
}

/// One decimation-in-frequency stage of radix-2 FFTs on interleaved complex `[re, im]` values:
/// a batch of FFTs of `n = 2 * twiddles.len()` points each, back to back. The butterfly
/// `(a, b)` at distance `h` (from the host with `data`) becomes `(a + b, (a - b) * w^j)`,
/// `j` = the position of `a` within its group of `2h`, `w^j = twiddles[j * n / 2h]`
/// (`twiddles[t] = exp(-2 pi i t / n)`). Stages `h = n/2, n/4, .., 1` give the FFT in
/// bit-reversed order. Launch `data.len() / 2` threads.
#[kernel(dims = 1)]
pub fn fft_stage(twiddles: &[[f32; 2]], mut data: DisjointButterflies<[f32; 2]>) {
    let h = data.half();
    let Some((lo, _)) = data.indices() else {
        return;
    };
    let j = lo % (2 * h);
    let w = twiddles[j * (twiddles.len() / h)];
    if let Some((a, b)) = data.pair_mut() {
        let (ar, ai, br, bi) = (a[0], a[1], b[0], b[1]);
        let (dr, di) = (ar - br, ai - bi);
        *a = [ar + br, ai + bi];
        *b = [dr * w[0] - di * w[1], dr * w[1] + di * w[0]];
    }
}
