//! Batch 1 of the corpus: each kernel on the CPU executor against a plain-Rust reference.
// The references mirror the kernels' own style (index loops, checked arithmetic, `%`).
#![allow(clippy::needless_range_loop, clippy::manual_saturating_arithmetic, clippy::manual_is_multiple_of)]
use oxide_rt::device::atomic::AtomicU32;
use oxide_rt::device::AtomicF32;
use oxide_rt::{Append, LaunchConfig, Matrix, Pairs, Slice2d, Slice3d};
use std::sync::atomic::Ordering;
use unseen::check::*;
use unseen::kernels::*;

#[test]
fn t01_warp_prefix_max() {
    let mut r = Rng(1);
    let n: usize = 200;
    let x: Vec<i32> = (0..n).map(|_| (r.next() % 1000) as i32 - 500).collect();
    let mut out = vec![0i32; n];
    cpu_warp_prefix_max((n as u32).div_ceil(64), 64, &x, &mut out).unwrap();
    for w in 0..n.div_ceil(32) {
        let mut m = i32::MIN;
        for l in 0..32 {
            let i = w * 32 + l;
            if i >= n {
                break;
            }
            m = m.max(x[i]);
            assert_eq!(out[i], m, "i={i}");
        }
    }
}

#[test]
fn t02_transpose_padded() {
    let mut r = Rng(2);
    let (rows, cols) = (70usize, 45usize);
    let a: Vec<f32> = (0..rows * cols).map(|_| r.f32()).collect();
    let mut out = vec![-7.0f32; rows * cols]; // cols x rows
    let grid = ((rows as u32).div_ceil(32), (cols as u32).div_ceil(32));
    cpu_transpose_padded(grid, (32, 32), Matrix::new(&a[..], rows, cols), Slice2d::new(&mut out, rows)).unwrap();
    for i in 0..cols {
        for j in 0..rows {
            assert_eq!(out[i * rows + j], a[j * cols + i], "({i},{j})");
        }
    }
}

#[test]
fn t03_hist_u8() {
    let mut r = Rng(3);
    let n = 10007;
    let data: Vec<u8> = (0..n).map(|_| r.next() as u8).collect();
    let hist: Vec<AtomicU32> = (0..HBINS).map(|_| AtomicU32::new(0)).collect();
    cpu_hist_u8(7, 96, &data, &hist).unwrap();
    let mut expect = vec![0u32; HBINS];
    for &b in &data {
        expect[(b >> 2) as usize] += 1;
    }
    let got: Vec<u32> = hist.iter().map(|h| h.load(Ordering::Relaxed)).collect();
    assert_eq!(got, expect);
}

#[test]
fn t04_power_sums() {
    let mut r = Rng(4);
    let n = 50;
    let x: Vec<f32> = (0..n).map(|_| r.f32()).collect();
    let window = 7u32;
    let mut out = vec![0f32; n * 4];
    cpu_power_sums(2, 32, &x, window, &mut out).unwrap();
    for i in 0..n {
        let mut acc = [0f32; 4];
        for j in 0..window as usize {
            let Some(&v) = x.get(i + j) else { break };
            let mut p = 1.0f32;
            for k in 0..4 {
                p *= v;
                acc[k] += p;
            }
            acc[j % 4] += 0.5;
        }
        for k in 0..4 {
            assert!(close32(out[i * 4 + k], acc[k], 1e-5), "i={i} k={k} {} {}", out[i * 4 + k], acc[k]);
        }
    }
}

#[test]
fn t05_interp() {
    // factorial-ish: acc = 1; loop x times: acc *= x; x -= 1
    // stack: [x] ; program computes x*(x-1)*... via loop
    // prog: PUSH 1, LOADX, (loop:) DUP, JZ end, DUP, ... keep simple: computes sum 1..x
    // stack layout [acc, cnt]
    let prog: Vec<u8> = vec![
        OP_PUSH, 0,        // acc=0          pc 0..2
        OP_LOADX, // cnt=x             pc 2
        // loop (pc 3):
        OP_DUP, // acc cnt cnt         pc 3
        OP_JZ, 14,      // if cnt==0 -> end pc 4..6 (JZ peeks)
        OP_DROP, // acc cnt            pc 6
        OP_SWAP, // cnt acc            pc 7
        OP_LOADX, OP_ADD,  // cnt acc+x pc 8,9
        OP_SWAP, // acc cnt            pc 10
        OP_DEC,  // acc cnt-1           pc 11
        OP_JMP, 3, //                  pc 12..14
        // end (pc 14):
        OP_DROP, OP_DROP, OP_HALT,
    ];
    let xs: Vec<i32> = (0..40).map(|v| v - 3).collect();
    let mut out = vec![0i32; xs.len()];
    cpu_interp(2, 32, &prog, &xs, 1000, &mut out).unwrap();
    for (i, &x) in xs.iter().enumerate() {
        assert_eq!(out[i], interpret(&prog, x, 1000), "x={x}");
    }
    // sanity of the reference itself for small positive x: acc = x*x
    assert_eq!(interpret(&prog, 5, 1000), 25);
    // bad programs
    for bad in [vec![OP_ADD], vec![OP_PUSH], vec![77u8], vec![OP_JMP, 0]] {
        let mut out = vec![0i32; 3];
        cpu_interp(1, 32, &bad, &xs[..3], 1000, &mut out).unwrap();
        for (k, &o) in out.iter().enumerate() {
            assert_eq!(o, interpret(&bad, xs[k], 1000));
        }
    }
}

#[test]
fn t06_iter_chains() {
    let mut r = Rng(6);
    let n = 37;
    let a: Vec<f32> = (0..n).map(|_| r.f32()).collect();
    let b: Vec<f32> = (0..n).map(|_| r.f32()).collect();
    let mut corr = vec![0f32; n];
    let mut win = vec![0f32; n];
    cpu_iter_chains(2, 32, &a, &b, &mut corr, &mut win).unwrap();
    for i in 0..n {
        let c: f32 = a.iter().zip(b.iter().cycle().skip(i % n)).map(|(x, y)| x * y).fold(0.0, |s, v| s + v);
        assert!(close32(corr[i], c, 1e-5), "corr {i}: {} {}", corr[i], c);
        let w = a.windows(3).nth(i).map(|w| w.iter().copied().fold(f32::MIN, f32::max)).unwrap_or(-1.0);
        let cs: f32 =
            a.chunks(4).enumerate().filter(|(k, _)| k % 2 == i % 2).map(|(_, ch)| ch.iter().sum::<f32>()).sum();
        assert!(close32(win[i], w + cs, 1e-5), "win {i}: {} {}", win[i], w + cs);
    }
}

#[test]
fn t07_lerp() {
    let mut r = Rng(7);
    let n = 70;
    let a: Vec<f32> = (0..n).map(|_| r.f32()).collect();
    let b: Vec<f32> = (0..n).map(|_| r.f32()).collect();
    let t: Vec<f32> = (0..n).map(|_| r.f32() * 2.0).collect();
    let mut out = vec![0f32; n];
    cpu_lerp_f32(3, 32, &a, &b, &t, 0.0, 1.0, &mut out).unwrap();
    for i in 0..n {
        let tt = t[i].clamp(0.0, 1.0);
        assert!(close32(out[i], a[i] + (b[i] - a[i]) * tt, 1e-6));
    }
    let a: Vec<f64> = a.iter().map(|&v| v as f64).collect();
    let b: Vec<f64> = b.iter().map(|&v| v as f64).collect();
    let t: Vec<f64> = t.iter().map(|&v| v as f64).collect();
    let mut out = vec![0f64; n];
    cpu_lerp_f64(3, 32, &a, &b, &t, -0.5, 0.5, &mut out).unwrap();
    for i in 0..n {
        let tt = t[i].clamp(-0.5, 0.5);
        assert_eq!(out[i], a[i] + (b[i] - a[i]) * tt);
    }
}

#[test]
fn t08_hash64() {
    let mut r = Rng(8);
    let per = 5usize;
    let keys: Vec<u64> = (0..per * 33 + 2).map(|_| r.next() ^ (r.next() << 40)).collect();
    let m = 40; // more threads than full groups
    let mut out = vec![7u64; m];
    cpu_hash64(2, 32, &keys, per as u32, 0xdead_beef, &mut out).unwrap();
    for i in 0..m {
        let s = i * per;
        let expect = keys.get(s..s + per).map(|w| {
            let mut h = 0xdead_beefu64 ^ 0x9e37_79b9_7f4a_7c15;
            for (k, &w) in w.iter().enumerate() {
                h = h.rotate_left(27).wrapping_mul(5).wrapping_add(0x52dc_e729);
                let mut z = w.wrapping_add(k as u64);
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                h ^= z ^ (z >> 31);
                h = h.rotate_right((w & 63) as u32);
            }
            let mut z = h ^ per as u64;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        });
        assert_eq!(out[i], expect.unwrap_or(7), "i={i}");
    }
}

#[test]
fn t09_f64_math() {
    let mut r = Rng(9);
    let n = 64;
    let x: Vec<f64> = (0..n).map(|_| r.f64()).collect();
    let mut out = vec![0f64; n * 4];
    cpu_f64_math(2, 32, &x, &mut out).unwrap();
    for i in 0..n {
        let v = x[i];
        let a = (-v * v / 2.0).exp();
        let b = (1.0 + v.abs()).ln();
        let c = (v.abs() + 0.5).powf(1.5);
        let d = (a + b + c).sqrt();
        for (k, e) in [a, b, c, d].into_iter().enumerate() {
            let g = out[i * 4 + k];
            assert!((g - e).abs() <= 1e-14 * (1.0 + e.abs()), "i={i} k={k} {g} {e}");
        }
    }
}

#[test]
fn t10_sat_ops() {
    let px: Vec<u8> = (0..=255).collect();
    for (gain, bias) in [(3u16, -20i16), (300, 100), (1, i16::MIN), (257, i16::MAX)] {
        let mut o8 = vec![0u8; 256];
        let mut o16 = vec![0u16; 256];
        cpu_sat_ops(4, 64, &px, gain, bias, &mut o8, &mut o16).unwrap();
        for (i, &p) in px.iter().enumerate() {
            let scaled = (p as u16).checked_mul(gain).unwrap_or(u16::MAX);
            let biased =
                if bias >= 0 { scaled.saturating_add(bias as u16) } else { scaled.saturating_sub(bias.unsigned_abs()) };
            assert_eq!(o16[i], biased, "gain {gain} bias {bias} p {p}");
            let e8 = u8::try_from(biased >> 2).unwrap_or(u8::MAX).saturating_add(p / 16);
            assert_eq!(o8[i], e8, "gain {gain} bias {bias} p {p}");
        }
    }
}

#[test]
fn t11_stencil_i32() {
    let mut r = Rng(11);
    let n = 45;
    let x: Vec<f32> = (0..n).map(|_| r.f32()).collect();
    for shift in [0i32, 3, -4, i32::MAX, i32::MIN] {
        let mut out = vec![0f32; n];
        cpu_stencil_i32(2, 32, &x, shift, &mut out).unwrap();
        for i in 0..n {
            let mut s = 0.0f32;
            for &(off, w) in TAPS.iter() {
                let j = (i as i64) + off as i64 + shift as i64;
                // kernel: checked i32 arithmetic
                let Some(j32) = (i as i32).checked_add(off).and_then(|v| v.checked_add(shift)) else { continue };
                assert_eq!(j32 as i64, j);
                if j >= 0 && (j as usize) < n {
                    s += w * x[j as usize];
                }
            }
            let left = if i > 0 { x[i - 1] } else { 0.0 };
            assert!(close32(out[i], s + left * 0.01, 1e-6), "shift {shift} i {i}: {} {}", out[i], s + left * 0.01);
        }
    }
}

#[test]
fn t12_vol_grad() {
    let mut r = Rng(12);
    let (nx, ny, nz) = (9usize, 7usize, 5usize);
    let v: Vec<f32> = (0..nx * ny * nz).map(|_| r.f32()).collect();
    let mut out = vec![-1f32; nx * ny * nz];
    cpu_vol_grad((2, 2, 2), (8, 4, 4), &v, nx as u32, ny as u32, nz as u32, Slice3d::new(&mut out, nx, ny)).unwrap();
    let at = |x: usize, y: usize, z: usize| v[(z * ny + y) * nx + x];
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                let c = at(x, y, z);
                let gx = if x + 1 < nx { at(x + 1, y, z) - c } else { 0.0 };
                let gy = if y + 1 < ny { at(x, y + 1, z) - c } else { 0.0 };
                let gz = if z + 1 < nz { at(x, y, z + 1) - c } else { 0.0 };
                let e = gx * gx + gy * gy + gz * gz;
                let g = out[(z * ny + y) * nx + x];
                assert!(close32(g, e, 1e-6), "({x},{y},{z}) {g} {e}");
            }
        }
    }
}

#[test]
fn t13_unpack_u16() {
    let mut r = Rng(13);
    let n = 50;
    let w: Vec<u64> = (0..n).map(|_| r.next() ^ (r.next() << 33)).collect();
    let mut out = vec![0u16; n * 4];
    cpu_unpack_u16(2, 32, &w, &mut out).unwrap();
    for i in 0..n {
        for k in 0..4 {
            assert_eq!(out[i * 4 + k], ((w[i] >> (16 * k)) as u16).swap_bytes());
        }
    }
}

#[test]
fn t14_row_norm_f64() {
    let mut r = Rng(14);
    let (rows, cols) = (5usize, 300usize);
    let mut x: Vec<f64> = (0..rows * cols).map(|_| r.f64()).collect();
    for c in 0..cols {
        x[2 * cols + c] = 0.0; // an all-zero row
    }
    let mut y = vec![0f64; rows * cols];
    cpu_row_norm_f64(rows as u32, RB, &x, Slice2d::new(&mut y, cols)).unwrap();
    for rr in 0..rows {
        let row = &x[rr * cols..(rr + 1) * cols];
        let m = row.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let inv = if m > 0.0 { 1.0 / m } else { 0.0 };
        for c in 0..cols {
            assert_eq!(y[rr * cols + c], row[c] * inv, "({rr},{c})");
        }
    }
}

#[test]
fn t15_strided_scale() {
    let mut r = Rng(15);
    let n = 64 * 4 * 2 + 10;
    let x: Vec<f32> = (0..n).map(|_| r.f32()).collect();
    let mut out = vec![0f32; n];
    // DisjointStrided<f32, 4>: element k of thread t in block b: b*B*4 + k*B + t
    let block = 64u32;
    let grid = (n as u32).div_ceil(block * 4);
    cpu_strided_scale(grid, block, &x, 2.5, &mut out).unwrap();
    let b = block as usize;
    for i in 0..n {
        let k = (i % (b * 4)) / b;
        assert_eq!(out[i], 2.5 * x[i] + k as f32, "i={i}");
    }
}

#[test]
fn t16_warp_count_neg() {
    let mut r = Rng(16);
    let n: usize = 150;
    let x: Vec<i32> = (0..n).map(|_| (r.next() % 100) as i32 - 50).collect();
    let warps = n.div_ceil(32);
    let mut out = vec![99u32; warps];
    cpu_warp_count_neg(((n as u32).div_ceil(64), 1, 1), 64, &x, &mut out).unwrap();
    for w in 0..warps {
        let e = x.iter().skip(w * 32).take(32).filter(|&&v| v < 0).count() as u32;
        assert_eq!(out[w], e, "warp {w}");
    }
}

#[test]
fn t17_block_count_even() {
    let mut r = Rng(17);
    let n: usize = 1000;
    let x: Vec<u32> = (0..n).map(|_| r.next() as u32).collect();
    let b = 96usize;
    let blocks = n.div_ceil(b);
    let mut out = vec![0u32; blocks];
    cpu_block_count_even(blocks as u32, b as u32, &x, &mut out).unwrap();
    for k in 0..blocks {
        let e = x.iter().skip(k * b).take(b).filter(|&&v| v % 2 == 0).count() as u32;
        assert_eq!(out[k], e);
    }
}

#[test]
fn t18_bitonic_i32() {
    let mut r = Rng(18);
    let n = 256usize;
    let mut a: Vec<i32> = (0..n).map(|_| (r.next() % 1000) as i32 - 500).collect();
    let mut expect = a.clone();
    expect.sort();
    let mut k = 2;
    while k <= n {
        let mut j = k / 2;
        while j > 0 {
            cpu_bitonic_i32((n as u32).div_ceil(64), 64, k as u32, Pairs::new(&mut a, j)).unwrap();
            j /= 2;
        }
        k *= 2;
    }
    assert_eq!(a, expect);
}

#[test]
fn t19_primes() {
    let x: Vec<u32> = (0..500u32).chain([u32::MAX, 4_294_967_291, 65_521 * 65_521]).collect();
    let mut out = vec![0u32; 200];
    let mut count = vec![0u64; 1];
    cpu_primes((x.len() as u32).div_ceil(64), 64, &x, Append::new(&mut out, &mut count)).unwrap();
    let is_p = |n: u32| n >= 2 && (2..).take_while(|d: &u64| d * d <= n as u64).all(|d| n as u64 % d != 0);
    let mut expect: Vec<u32> = x.iter().copied().filter(|&v| is_p(v)).collect();
    let c = count[0] as usize;
    assert_eq!(c, expect.len());
    let mut got = out[..c].to_vec();
    got.sort();
    expect.sort();
    assert_eq!(got, expect);
}

#[test]
fn t20_mandel() {
    let (w, h) = (40usize, 23usize);
    for flags in [0u16, 1] {
        let v = View { max_iter: 60, flags, scale: 0.07, cx: -0.5, cy: 0.1 };
        let mut out = vec![0u8; w * h];
        cpu_mandel(((w as u32).div_ceil(16), (h as u32).div_ceil(8)), (16, 8), v, Slice2d::new(&mut out, w)).unwrap();
        for py in 0..h {
            for px in 0..w {
                let cr = v.cx + (px as f64 - w as f64 / 2.0) * v.scale as f64;
                let ci = v.cy + (py as f64 - h as f64 / 2.0) * v.scale as f64;
                let (mut zr, mut zi) = (0.0f64, 0.0f64);
                let mut n = 0u8;
                while n < v.max_iter {
                    let t = zr * zr - zi * zi + cr;
                    zi = 2.0 * zr * zi + ci;
                    zr = t;
                    if zr * zr + zi * zi > 4.0 {
                        break;
                    }
                    n += 1;
                }
                if flags & 1 != 0 {
                    n = v.max_iter - n;
                }
                assert_eq!(out[py * w + px], n, "({px},{py})");
            }
        }
    }
}

#[test]
fn t21_haar() {
    let mut r = Rng(21);
    let n = 64usize;
    let orig: Vec<f32> = (0..n).map(|_| r.f32()).collect();
    for h in [1usize, 4, 32] {
        let mut a = orig.clone();
        cpu_haar_step(1, 32, Pairs::new(&mut a, h)).unwrap();
        let s = std::f32::consts::FRAC_1_SQRT_2;
        for t in 0..n / 2 {
            let i0 = (t / h) * 2 * h + t % h;
            let (x, y) = (orig[i0], orig[i0 + h]);
            assert_eq!(a[i0], (x + y) * s);
            assert_eq!(a[i0 + h], (x - y) * s);
        }
    }
}

#[test]
fn t22_crc() {
    let data: Vec<u8> = b"The quick brown fox jumps over the lazy dog".iter().copied().cycle().take(1000).collect();
    let chunk = 43usize;
    let m = data.len().div_ceil(chunk);
    let mut out = vec![0u32; m + 5];
    cpu_crc_chunks(2, 32, &data, chunk as u32, &mut out).unwrap();
    assert_eq!(crc32(b"The quick brown fox jumps over the lazy dog"), 0x414fa339);
    for (i, c) in data.chunks(chunk).enumerate() {
        assert_eq!(out[i], crc32(c));
    }
    assert_eq!(out[0], 0x414fa339);
    for i in m..m + 5 {
        assert_eq!(out[i], 0);
    }
}

#[test]
fn t23_smooth_dyn() {
    let mut r = Rng(23);
    let n: usize = 100;
    let x: Vec<f32> = (0..n).map(|_| r.f32()).collect();
    let b = 32usize;
    let mut out = vec![0f32; n];
    let cfg = LaunchConfig::new((n as u32).div_ceil(b as u32), b as u32).shared_mem_bytes((b * 4) as u32);
    cpu_smooth_dyn_with(cfg, &x, &mut out).unwrap();
    for i in 0..n {
        let blk = i / b;
        let t = i % b;
        let get = |k: isize| {
            let tt = (t as isize + k).clamp(0, b as isize - 1) as usize;
            x.get(blk * b + tt).copied().unwrap_or(0.0)
        };
        let weight = |k: isize| 1.0 / (1.0 + (k * k) as f32);
        let s: f32 = (-2isize..=2).map(|k| get(k) * weight(k)).sum();
        let w: f32 = (-2isize..=2).map(weight).sum();
        assert!(close32(out[i], s / w, 1e-6), "i {i}");
    }
}

#[test]
fn t24_warp_u64_stats() {
    let mut r = Rng(24);
    let n: usize = 100;
    let mut x: Vec<u64> = (0..n).map(|_| r.next() | 1).collect();
    x[40] = 1 << 50;
    let warps = n.div_ceil(32);
    let mut sum = vec![0u64; warps];
    let mut flags = vec![9u32; warps];
    cpu_warp_u64_stats(2, 64, &x, &mut sum, &mut flags).unwrap();
    for w in 0..warps {
        let vals: Vec<u64> = (0..32).map(|l| x.get(w * 32 + l).copied().unwrap_or(0)).collect();
        let s = vals.iter().fold(0u64, |a, &b| a.wrapping_add(b));
        let m = *vals.iter().max().unwrap();
        assert_eq!(sum[w], s ^ m, "warp {w}");
        let any_big = vals.iter().any(|&v| v > 1 << 40);
        let all_odd = vals.iter().all(|&v| v & 1 == 1);
        assert_eq!(flags[w], any_big as u32 | (all_odd as u32) << 1, "warp {w}");
    }
}

#[test]
fn t25_coo_scatter() {
    let mut r = Rng(25);
    let (rows, cols) = (6usize, 9usize);
    let nnz = 200;
    let ri: Vec<u32> = (0..nnz).map(|_| (r.next() % (rows as u64 + 1)) as u32).collect();
    let ci: Vec<u32> = (0..nnz).map(|_| (r.next() % cols as u64) as u32).collect();
    let v: Vec<f32> = (0..nnz).map(|_| (r.next() % 8) as f32).collect();
    let m: Vec<AtomicF32> = (0..rows * cols).map(|_| AtomicF32::new(0.0)).collect();
    cpu_coo_scatter(4, 64, &ri, &ci, &v, Matrix::new(&m[..], rows, cols)).unwrap();
    let mut e = vec![0f32; rows * cols];
    for k in 0..nnz {
        if (ri[k] as usize) < rows {
            e[ri[k] as usize * cols + ci[k] as usize] += v[k];
        }
    }
    let got: Vec<f32> = m.iter().map(|a| a.load(Ordering::Relaxed)).collect();
    assert_eq!(got, e);
}

#[test]
fn t26_tile_outer() {
    let mut r = Rng(26);
    let (rows, cols) = (37usize, 21usize);
    let a: Vec<f32> = (0..rows).map(|_| r.f32()).collect();
    let b: Vec<f32> = (0..cols).map(|_| r.f32()).collect();
    let mut c = vec![-5f32; rows * cols];
    let grid = ((cols as u32).div_ceil(16), (rows as u32).div_ceil(16));
    cpu_tile_outer(grid, (4, 4), &a, &b, Slice2d::new(&mut c, cols)).unwrap();
    for i in 0..rows {
        for j in 0..cols {
            assert_eq!(c[i * cols + j], a[i] * b[j], "({i},{j})");
        }
    }
}
