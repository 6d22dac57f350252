//! Random problems for the kernels, their scalar references, and D gathered from the lanes'
//! fragments (lane `l` of problem `p` wrote `c0..c3` at `4 * (32p + l)`).
use oxide_rt::device::tensor::{FragC, M16N8K16};
use oxide_rt::{Bf16, Tf32, F16};

/// Problems per launch (one block each).
pub const PROBLEMS: usize = 6;

pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub fn bits(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [-1, 1).
    pub fn unit(&mut self) -> f32 {
        (self.bits() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// Row-major matrices of problems `0..PROBLEMS`, each `rows x cols`.
pub fn floats(rng: &mut Rng, rows: usize, cols: usize) -> Vec<f32> {
    (0..PROBLEMS * rows * cols).map(|_| rng.unit()).collect()
}

pub fn bf16s(x: &[f32]) -> Vec<Bf16> {
    x.iter().map(|&v| Bf16::from_f32(v)).collect()
}

pub fn f16s(x: &[f32]) -> Vec<F16> {
    x.iter().map(|&v| F16::from_f32(v)).collect()
}

/// The TF32 values the kernel multiplies.
pub fn tf32s(x: &[f32]) -> Vec<f32> {
    x.iter().map(|&v| Tf32::from_f32(v).to_f32()).collect()
}

/// D (16 x 8 per problem, row-major) from the lanes' outputs.
pub fn gather<T: Copy + Default>(lanes: &[T]) -> Vec<T> {
    let mut d = vec![T::default(); lanes.len()];
    for p in 0..lanes.len() / 128 {
        for lane in 0..32u32 {
            for i in 0..4 {
                let (r, c) = FragC::<f32, M16N8K16>::coord(lane, i);
                d[p * 128 + r * 8 + c] = lanes[p * 128 + lane as usize * 4 + i];
            }
        }
    }
    d
}

/// `c + a * b` per problem (`a` 16 x k, `b` k x 8) in f64, and a bound on an f32 tensor-core
/// result's error: products are exact, the sum of `k + 1` terms is accumulated in at least
/// single precision in some order.
pub fn reference(a: &[f32], b: &[f32], c: &[f32], k: usize) -> (Vec<f32>, Vec<f32>) {
    let u = f32::EPSILON as f64;
    let (mut d, mut tol) = (Vec::new(), Vec::new());
    for p in 0..c.len() / 128 {
        for e in 0..128 {
            let (i, j) = (e / 8, e % 8);
            let mut sum = c[p * 128 + e] as f64;
            let mut abs = sum.abs();
            for l in 0..k {
                let prod = a[p * 16 * k + i * k + l] as f64 * b[p * k * 8 + l * 8 + j] as f64;
                sum += prod;
                abs += prod.abs();
            }
            d.push(sum as f32);
            tol.push(((k as f64 + 2.0) * u * abs) as f32);
        }
    }
    (d, tol)
}

/// Every element within its bound; names the first that is not.
pub fn within(got: &[f32], want: &[f32], tol: &[f32]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} results, {} expected", got.len(), want.len()));
    }
    for (e, ((g, w), t)) in got.iter().zip(want).zip(tol).enumerate() {
        let err = (g - w).abs();
        if err.is_nan() || err > *t {
            return Err(format!(
                "problem {} D[{}][{}]: got {g}, want {w} (tolerance {t:e})",
                e / 128,
                e % 128 / 8,
                e % 8
            ));
        }
    }
    Ok(())
}

/// `c + a * b` (s8 inputs, wrapping s32 accumulation), `a` 16 x 32, `b` 32 x 8 per problem.
pub fn reference_s8(a: &[i8], b: &[i8], c: &[i32]) -> Vec<i32> {
    (0..c.len())
        .map(|e| {
            let (p, i, j) = (e / 128, e % 128 / 8, e % 8);
            let dot: i32 = (0..32).map(|l| a[p * 512 + i * 32 + l] as i32 * b[p * 256 + l * 8 + j] as i32).sum();
            c[e].wrapping_add(dot)
        })
        .collect()
}

/// The registers `ldmatrix_all` must write for lane `lane` (rows: element `(r, c)` is
/// `rows[r * 8 + c]`; lane `l` passed row `perm[l]`), per the PTX ISA: register `j` of lane
/// `4g + t` holds elements `2t, 2t + 1` of row `g` of matrix `j` (`.trans`: element `g` of rows
/// `2t`, `2t + 1`), matrix `j`'s row `r` being the one lane `8j + r` passed.
pub fn ldmatrix_expected(rows: &[u16], perm: &[u32], lane: usize) -> [u32; 14] {
    let (g, t) = (lane / 4, lane % 4);
    let elem = |j: usize, r: usize, c: usize| rows[perm[8 * j + r] as usize * 8 + c] as u32;
    let plain = |j: usize| elem(j, g, 2 * t) | elem(j, g, 2 * t + 1) << 16;
    let trans = |j: usize| elem(j, 2 * t, g) | elem(j, 2 * t + 1, g) << 16;
    [
        plain(0),
        plain(0),
        plain(1),
        plain(0),
        plain(1),
        plain(2),
        plain(3),
        trans(0),
        trans(0),
        trans(1),
        trans(0),
        trans(1),
        trans(2),
        trans(3),
    ]
}

/// What thread `t` of `cp_async_groups` records for `src` (`src.len() >= 10`, 10 used).
pub fn cp_async_expected(src: &[u32], t: usize) -> [u32; 8] {
    let k = 2 * (t % 3);
    let at = |i: usize| src.get(i).copied().unwrap_or(0);
    [at(8), at(9), 0, 0, src[k], src[k + 1], 0, 7777]
}

/// D (16 x 16) of the `loaders` kernel's loader `v` from lane outputs (32 per lane).
pub fn gather_loader(lanes: &[f32], v: usize) -> Vec<f32> {
    let mut d = vec![0f32; 256];
    for lane in 0..32u32 {
        for h in 0..2 {
            for i in 0..4 {
                let (r, c) = FragC::<f32, M16N8K16>::coord(lane, i);
                d[r * 16 + h * 8 + c] = lanes[lane as usize * 32 + v * 8 + h * 4 + i];
            }
        }
    }
    d
}

/// Inputs of `mma_split`: one 16 x 16 by 16 x 8 bf16 problem and 32 rows of 8 `u16`.
pub fn split_inputs(seed: u64) -> (Vec<Bf16>, Vec<Bf16>, Vec<u16>) {
    let mut rng = Rng::new(seed);
    let (a, b) = (bf16s(&floats(&mut rng, 16, 16)), bf16s(&floats(&mut rng, 16, 8)));
    (a, b, (0..256).map(|i| (i * 29 + 3) as u16).collect())
}

/// Checks what `mma_split` wrote with the whole warp: lane `l`'s D fragment of `a * b` (f32
/// bits) and its `ldmatrix_x1` register of row `l`.
pub fn split_output(out: &[u32], a: &[Bf16], b: &[Bf16], rows: &[u16]) -> Result<(), String> {
    let exact = |x: &[Bf16]| x.iter().map(|v| v.to_f32()).collect::<Vec<_>>();
    let (want, tol) = reference(&exact(a), &exact(b), &[0.0; 128], 16);
    let perm: Vec<u32> = (0..32).collect();
    for lane in 0..32 {
        let got = &out[lane * 5..][..5];
        for (i, bits) in got[..4].iter().enumerate() {
            let (r, c) = FragC::<f32, M16N8K16>::coord(lane as u32, i);
            within(&[f32::from_bits(*bits)], &want[r * 8 + c..][..1], &tol[r * 8 + c..][..1])
                .map_err(|e| format!("lane {lane} element {i}: {e}"))?;
        }
        if got[4] != ldmatrix_expected(rows, &perm, lane)[0] {
            return Err(format!("lane {lane}: ldmatrix gave {:#x}", got[4]));
        }
    }
    Ok(())
}

/// Checks what `mma_grid_split` wrote with the whole warp: lane `l`'s fragments of the tile
/// `[[a * b, a * 2b], [-a * b, -a * 2b]]` (f32 bits, tile order).
pub fn grid_output(out: &[u32], a: &[Bf16], b: &[Bf16]) -> Result<(), String> {
    let exact = |x: &[Bf16]| x.iter().map(|v| v.to_f32()).collect::<Vec<_>>();
    let (want, tol) = reference(&exact(a), &exact(b), &[0.0; 128], 16);
    for lane in 0..32 {
        for (i, bits) in out[lane * 16..][..16].iter().enumerate() {
            let scale = [1.0, 2.0, -1.0, -2.0][i / 4];
            let (r, c) = FragC::<f32, M16N8K16>::coord(lane as u32, i % 4);
            let at = r * 8 + c;
            within(&[f32::from_bits(*bits)], &[scale * want[at]], &[2.0 * tol[at]])
                .map_err(|e| format!("lane {lane} tile {} element {}: {e}", i / 4, i % 4))?;
        }
    }
    Ok(())
}
