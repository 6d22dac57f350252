//! Inputs and expected outputs of the kernels, computed with plain host code.

/// Deterministic pseudo-random `u32`s below `bound`.
pub fn inputs_u32(n: usize, bound: u32) -> Vec<u32> {
    (0..n).map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 7) % bound).collect()
}

pub fn indices_2d(width: u32, height: u32) -> Vec<u32> {
    (0..height).flat_map(|y| (0..width).map(move |x| x + 1000 * y)).collect()
}

pub fn indices_3d(width: u32, height: u32, depth: u32) -> Vec<u32> {
    (0..depth).flat_map(|z| (0..height).flat_map(move |y| (0..width).map(move |x| x + 100 * y + 10000 * z))).collect()
}

/// `lane_warp` for a 1D launch of `blocks` × `block` threads.
pub fn lane_warp(blocks: u32, block: u32) -> Vec<u32> {
    (0..blocks * block)
        .map(|g| {
            let t = g % block;
            (t % 32) | (t / 32) << 8 | t << 16
        })
        .collect()
}

pub fn barrier_after_branch(mode: u32, x: &[u32], block: usize) -> Vec<u32> {
    (0..x.len())
        .map(|i| {
            let (b, t) = (i / block, i % block);
            let m = x[b * block + block - 1 - t];
            if mode & 1 == 1 {
                m * 2
            } else {
                m
            }
        })
        .collect()
}

pub fn barrier_reductions(x: &[u32], block: usize) -> Vec<u32> {
    x.chunks(block)
        .flat_map(|c| {
            let count = c.iter().filter(|&&v| v != 0).count() as u32;
            let all = c.iter().all(|&v| v != 0) as u32;
            let any = c.iter().any(|&v| v != 0) as u32;
            std::iter::repeat_n(count | all << 16 | any << 17, c.len())
        })
        .collect()
}

pub fn shared_reverse(x: &[f32]) -> Vec<f32> {
    x.chunks(256).flat_map(|c| c.iter().rev().copied().collect::<Vec<_>>()).collect()
}

pub fn shared_transpose(x: &[u32]) -> Vec<u32> {
    (0..256).map(|i| x[(i % 16) * 16 + i / 16]).collect()
}

/// `dynamic_shared_sum` with `block` threads and `bytes` of dynamic shared memory per block.
pub fn dynamic_shared_sum(x: &[u32], block: usize, bytes: usize) -> Vec<u32> {
    x.chunks(block)
        .flat_map(|c| {
            let mut r = vec![(bytes / 4) as u32; c.len()];
            r[0] = c.iter().sum();
            r
        })
        .collect()
}

/// The 16 values `atomics_shared` writes for each block (then zeros for the other threads).
pub fn atomics_shared(x: &[u32], block: usize) -> Vec<u64> {
    x.chunks(block)
        .flat_map(|c| {
            let n = c.len() as u32;
            let mut and = 0xffff_ffffu32;
            let mut or = 0u32;
            for t in 0..n {
                and &= !(1 << (t % 32));
                or |= 1 << (t % 32);
            }
            let vals: [u64; 16] = [
                c.iter().fold(0u32, |a, &v| a.wrapping_add(v)) as u64,
                *c.iter().min().unwrap() as u64,
                *c.iter().max().unwrap() as u64,
                and as u64,
                or as u64,
                c.iter().fold(0, |a, &v| a ^ v) as u64,
                n as u64,
                1,
                c.iter().map(|&v| v as i32 - 500).min().unwrap() as i64 as u64,
                c.iter().map(|&v| v as i32 - 500).max().unwrap() as i64 as u64,
                c.iter().map(|&v| v as u64 * 1_000_000_000).sum(),
                u64::MAX - c.iter().map(|&v| v as u64).sum::<u64>(),
                c.iter().map(|&v| v as u64 * 1_000_000_000).max().unwrap(),
                (-c.iter().map(|&v| v as i64).sum::<i64>()) as u64,
                c.iter().map(|&v| -(v as i64) * 1_000_000_000).min().unwrap().min(0) as u64,
                0,
            ];
            let mut r = vec![0u64; c.len()];
            let k = 16.min(c.len());
            r[..k].copy_from_slice(&vals[..k]);
            r
        })
        .collect()
}

pub fn core_atomics(x: &[u32], block: usize) -> Vec<u64> {
    x.chunks(block)
        .flat_map(|c| {
            let mut r = vec![0u64; c.len()];
            r[0] = c.len() as u64 | (*c.iter().max().unwrap() as u64) << 32;
            r
        })
        .collect()
}

/// `warp_ops` for one warp-aligned launch of `n` threads.
pub fn warp_ops(n: usize) -> Vec<[u64; 8]> {
    (0..n)
        .map(|g| {
            let lane = (g % 32) as u32;
            let v = |l: u32| l * 10 + 1;
            let bcast = v(3);
            let up = if lane == 0 { v(0) } else { v(lane - 1) };
            let seg = lane / 16 * 16;
            let down = if lane + 2 < seg + 16 { v(lane + 2) } else { v(lane) };
            let xor = v(lane ^ 1);
            let f = (31 - lane) as f64 + 0.5;
            let big = (((lane ^ 5) as i64) - 16) << 40;
            let fsum = (0..32).sum::<u32>() as f32;
            let ballot = (0..32).filter(|l| l % 3 == 0).fold(0u32, |m, l| m | 1 << l);
            let even =
                if lane & 1 == 0 { (0..32).filter(|l| l & 3 == 0).fold(0u32, |m, l| m | 1 << l) as u64 } else { 0 };
            [
                bcast as u64 | (up as u64) << 32,
                down as u64 | (xor as u64) << 32,
                f.to_bits(),
                big as u64,
                fsum.to_bits() as u64 | ((0..32).sum::<u32>() as u64) << 32,
                0b011,
                ballot as u64 | (0xffff_ffffu64) << 32,
                even,
            ]
        })
        .collect()
}

pub fn bit_ops(x: &[u32]) -> Vec<[u32; 8]> {
    x.iter()
        .map(|&v| {
            let w = (v as u64) << 20;
            let ffs32 = if v == 0 { 0 } else { v.trailing_zeros() + 1 };
            let ffs64 = if w == 0 { 0 } else { w.trailing_zeros() + 1 };
            [
                v.count_ones(),
                v.leading_zeros(),
                v.reverse_bits(),
                ffs32,
                w.count_ones(),
                w.leading_zeros(),
                (w.reverse_bits() >> 32) as u32,
                ffs64,
            ]
        })
        .collect()
}

pub fn collatz(x: &[u64]) -> Vec<u32> {
    x.iter()
        .map(|&n| {
            let (mut n, mut s) = (n, 0);
            while n > 1 && s < 1000 {
                n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
                s += 1;
            }
            s
        })
        .collect()
}

/// `big_static_shared` with blocks of `block` threads.
pub fn big_static_shared(x: &[f32], block: usize) -> Vec<f32> {
    let tile = crate::kernels::BIG_TILE;
    (0..x.len())
        .map(|i| {
            let (b, t) = (i / block, i % block);
            // Slot `tile - 1 - t` was written by thread `(tile - 1 - t) % block` of the same block.
            let k = tile - 1 - t;
            let writer = b * block + k % block;
            x[writer] + k as f32
        })
        .collect()
}

/// `busy` on `x` with `rounds` steps.
pub fn busy(rounds: u32, x: &[u32]) -> Vec<u32> {
    x.iter().map(|&v0| (0..rounds).fold(v0, |v, _| v.wrapping_mul(1_664_525).wrapping_add(1_013_904_223))).collect()
}

/// `warp_sums` for `blocks` blocks of `block` threads (warps of 32 by rank).
pub fn warp_sums(x: &[u32], blocks: usize, block: usize) -> Vec<u32> {
    let warps = block.div_ceil(32);
    (0..blocks * warps)
        .map(|w| {
            let (b, k) = (w / warps, w % warps);
            let lanes = (k * 32)..((k + 1) * 32).min(block);
            lanes.map(|t| x.get(b * block + t).copied().unwrap_or(0)).fold(0u32, u32::wrapping_add)
        })
        .collect()
}

pub fn block_max(x: &[u32], blocks: usize, block: usize) -> Vec<u32> {
    (0..blocks).map(|b| (0..block).map(|t| x.get(b * block + t).copied().unwrap_or(0)).max().unwrap_or(0)).collect()
}

/// `normalize_rows` for a block of `block` threads per row: the same partial sums in the same
/// order as the kernel (thread `t` sums columns `t, t + block, …`, then the partials in order).
pub fn normalize_rows(x: &[f32], cols: usize, block: usize) -> Vec<f32> {
    x.chunks(cols)
        .flat_map(|row| {
            let total: f32 =
                (0..block).map(|t| row.iter().skip(t).step_by(block).fold(0.0, |a, v| a + v)).fold(0.0, |a, p| a + p);
            row.iter().map(move |v| v / total)
        })
        .collect()
}

/// `n` quads of distinct, exactly representable values.
pub fn quads(n: usize) -> Vec<[f32; 4]> {
    (0..n).map(|i| [i as f32, 0.5 * i as f32, 3.0 - i as f32, 0.25]).collect()
}

/// `quad_mix`'s output: `[x + y, z * w, x - y, i]`.
pub fn quad_mix(quads: &[[f32; 4]]) -> Vec<[f32; 4]> {
    quads.iter().enumerate().map(|(i, &[x, y, z, w])| [x + y, z * w, x - y, i as f32]).collect()
}

/// The unnormalised Walsh–Hadamard transform, by its definition `y[k] = Σ (-1)^popc(j & k) x[j]`.
pub fn hadamard(x: &[i32]) -> Vec<i32> {
    (0..x.len())
        .map(|k| {
            x.iter().enumerate().fold(0i32, |acc, (j, &v)| {
                if (j & k).count_ones() % 2 == 0 {
                    acc.wrapping_add(v)
                } else {
                    acc.wrapping_sub(v)
                }
            })
        })
        .collect()
}

/// Edge inputs of the float → integer casts: NaNs, infinities, zeros, fractions, both sides of
/// every 32- and 64-bit bound, denormals.
pub fn cast_inputs() -> (Vec<f32>, Vec<f64>) {
    let f: Vec<f64> = vec![
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        0.5,
        -0.5,
        0.99,
        -0.99,
        1.5,
        -1.5,
        -1.0,
        2147483520.0,
        2147483647.0,
        2147483648.0,
        -2147483648.0,
        -2147483904.0,
        -2147483649.0,
        4294967040.0,
        4294967295.0,
        4294967296.0,
        9.2233715e18,
        9223372036854775807.0,
        9.3e18,
        -9223372036854775808.0,
        -9.3e18,
        1.8446743e19,
        18446744073709551615.0,
        1.9e19,
        1e-45,
        -1e-45,
        1e-310,
        123456.789,
        -123456.789,
    ];
    (f.iter().map(|&v| v as f32).collect(), f)
}

/// `float_casts` of the given inputs, computed with Rust's own casts on the host.
pub fn float_casts(x: &[f32], y: &[f64]) -> Vec<[u64; 8]> {
    x.iter()
        .zip(y)
        .map(|(&a, &b)| {
            [
                a as i32 as u64,
                a as u32 as u64,
                a as i64 as u64,
                a as u64,
                b as i32 as u64,
                b as u32 as u64,
                b as i64 as u64,
                b as u64,
            ]
        })
        .collect()
}

/// `matrix_flip` of a row-major `rows x cols` matrix: a `cols x rows` one.
pub fn matrix_flip(input: &[u32], rows: usize, cols: usize) -> Vec<u32> {
    let sums: Vec<u32> = input.chunks(cols).map(|r| r.iter().sum()).collect();
    (0..cols)
        .flat_map(|x| (0..rows).map(move |y| (x, y)))
        .map(|(x, y)| input[y * cols + x] + input[y * cols] + sums[y])
        .collect()
}

/// `matrix_chunks` of a row-major `rows x cols` matrix, element by element.
pub fn matrix_chunks(input: &[u32], rows: usize, cols: usize) -> Vec<[u32; 9]> {
    let at = |r: usize, c: usize, fill: u32| if r < rows && c < cols { input[r * cols + c] } else { fill };
    let span = cols + 2;
    (0..(rows + 1) * span)
        .map(|i| {
            let (r, c) = (i / span, i % span);
            let x = u32::MAX;
            [
                at(r, c, x),
                at(r, c + 1, x),
                at(r, c + 2, x),
                at(r, c + 3, x),
                at(r, c, 7),
                at(r, c + 1, 7),
                at(r, c, 9),
                at(r, c + 1, 9),
                at(r, c + 2, 9),
            ]
        })
        .collect()
}

/// `tile_owners` by the ownership rule `DisjointTiles` documents: element `(r, c)` belongs to
/// block `(c / TW, r / TH)` and, in it, to thread `(((c % TW) / G) % bx, ((r % TH) / G) % by)`;
/// nobody owns anything in a launch with a z extent, nor elements of blocks the grid lacks.
pub fn tile_owners(rows: usize, cols: usize, grid: (u32, u32, u32), block: (u32, u32, u32)) -> Vec<u32> {
    use crate::kernels::{TILE_G as G, TILE_H as TH, TILE_W as TW};
    let mut out = vec![0u32; rows * cols];
    if grid.2 != 1 || block.2 != 1 {
        return out;
    }
    for r in 0..rows {
        for c in 0..cols {
            let (bx, by) = ((c / TW) as u32, (r / TH) as u32);
            if bx >= grid.0 || by >= grid.1 {
                continue;
            }
            let tx = (((c % TW) / G) as u32) % block.0;
            let ty = (((r % TH) / G) as u32) % block.1;
            out[r * cols + c] = ((bx + grid.0 * by) << 16 | (tx + block.0 * ty)) + 1;
        }
    }
    out
}

/// A launch geometry: (grid, block).
pub type Geometry = ((u32, u32, u32), (u32, u32, u32));

/// `tile_owners` launches on a 37 x 29 matrix: several threads per tile, more threads than the
/// tile has groups, a grid short of the matrix and one past it, and two that try to give two
/// threads one element through a z extent (grid or block), which must own nothing.
pub const TILE_LAUNCHES: [Geometry; 6] = [
    ((3, 5, 1), (3, 2, 1)),
    ((3, 5, 1), (8, 8, 1)),
    ((1, 2, 1), (3, 2, 1)),
    ((4, 6, 1), (1, 1, 1)),
    ((3, 5, 2), (3, 2, 1)),
    ((3, 5, 1), (3, 2, 2)),
];
pub const TILE_ROWS: usize = 37;
pub const TILE_COLS: usize = 29;

/// `keep_multiples`' input: 5000 distinct values (multiplication by an odd constant is a
/// bijection of u32).
pub fn append_input() -> Vec<u32> {
    (0..5000u32).map(|i| i.wrapping_mul(2_654_435_761)).collect()
}

/// Checks a `keep_multiples` result: `count` is the number of multiples of `d` in `x`; the
/// written part of `out` (from `start`, at most to its end) holds distinct multiples of `d`
/// from `x` (all of them when there was room), and everything else is untouched (`u32::MAX`).
pub fn check_append(x: &[u32], d: u32, out: &[u32], count: u64, start: usize) -> Result<(), String> {
    let mut want: Vec<u32> = x.iter().copied().filter(|v| v % d == 0).collect();
    want.sort_unstable();
    if count != (start + want.len()) as u64 {
        return Err(format!("count {count}, want {}", start + want.len()));
    }
    let end = (start + want.len()).min(out.len());
    if let Some(i) = (0..out.len()).find(|&i| (i < start || i >= end) && out[i] != u32::MAX) {
        return Err(format!("element {i} outside the claimed range was written: {}", out[i]));
    }
    let mut got = out[start.min(end)..end].to_vec();
    got.sort_unstable();
    if got.windows(2).any(|w| w[0] == w[1]) {
        return Err("a value was written twice".into());
    }
    if let Some(v) = got.iter().find(|v| want.binary_search(v).is_err()) {
        return Err(format!("{v} is not a multiple of {d} from the input"));
    }
    if end - start == want.len() && got != want {
        return Err("with room for every push, not every multiple arrived".into());
    }
    Ok(())
}

/// CPU reference of `kernels::taps3x3` (zero padding), row-major `rows x cols`.
pub fn taps3x3(input: &[f32], w: &[f32; 9], cols: usize, rows: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; cols * rows];
    for y in 0..rows {
        for x in 0..cols {
            let mut acc = 0.0f32;
            for dy in 0..3 {
                for dx in 0..3 {
                    let (xx, yy) = (x + dx, y + dy);
                    if xx >= 1 && yy >= 1 && xx - 1 < cols && yy - 1 < rows {
                        acc += w[dy * 3 + dx] * input[(yy - 1) * cols + (xx - 1)];
                    }
                }
            }
            out[y * cols + x] = acc;
        }
    }
    out
}

/// CPU reference of `kernels::gray_of_rgb`.
pub fn gray_of_rgb(rgb: &[u8]) -> Vec<u8> {
    rgb.chunks_exact(3).map(|c| ((77 * c[0] as u32 + 150 * c[1] as u32 + 29 * c[2] as u32 + 128) >> 8) as u8).collect()
}

/// The line of `kernels.rs` that reads `rgb[p + 2]` in `gray_of_rgb`: where a pixel whose blue
/// byte is past the input panics.
pub fn gray_of_rgb_blue_line() -> usize {
    let src = include_str!("kernels.rs");
    let start = src.find("pub fn gray_of_rgb").unwrap_or(0);
    src[..start].lines().count() + src[start..].lines().position(|l| l.contains("rgb[p + 2]")).unwrap_or(0) + 1
}
