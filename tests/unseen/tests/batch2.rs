//! Batch 2 kernels on the CPU executor against plain-Rust references.
// The references mirror the kernels' own style (index loops, checked arithmetic, `%`).
#![allow(clippy::needless_range_loop, clippy::manual_saturating_arithmetic, clippy::manual_is_multiple_of)]
use oxide_rt::device::atomic::AtomicU32;
use oxide_rt::{Matrix, Slice2d};
use std::sync::atomic::Ordering;
use unseen::check::*;
use unseen::kernels::*;

#[test]
fn t27_spmv_max() {
    let mut r = Rng(27);
    let rows = 40;
    let ncols = 300;
    let mut row_ptr = vec![0u32];
    let mut cols = vec![];
    let mut vals = vec![];
    for rr in 0..rows {
        let k = if rr % 7 == 3 { 0 } else { r.next() % 12 };
        for _ in 0..k {
            cols.push((r.next() % ncols) as u16);
            vals.push(r.f32());
        }
        row_ptr.push(cols.len() as u32);
    }
    let x: Vec<f32> = (0..ncols).map(|_| r.f32()).collect();
    let mut y = vec![0f32; rows];
    let mut ym = vec![0f32; rows];
    cpu_spmv_max(2, 32, &row_ptr, &cols, &vals, &x, &mut y, &mut ym).unwrap();
    for rr in 0..rows {
        let (s, e) = (row_ptr[rr] as usize, row_ptr[rr + 1] as usize);
        let mut acc = 0.0f32;
        let mut m = f32::NEG_INFINITY;
        for j in s..e {
            let v = vals[j] * x[cols[j] as usize];
            acc += v;
            m = m.max(v);
        }
        assert!(close32(y[rr], acc, 1e-5), "row {rr}");
        assert_eq!(ym[rr], m, "row {rr}");
    }
}

#[test]
fn t28_tiled_dot() {
    let mut r = Rng(28);
    let tiles = 3u32;
    let blocks = 4usize;
    let n = blocks * tiles as usize * PB - 17;
    let a: Vec<f32> = (0..n).map(|_| (r.next() % 5) as f32).collect();
    let b: Vec<f32> = (0..n).map(|_| (r.next() % 5) as f32).collect();
    let mut out = vec![0f32; blocks];
    cpu_tiled_dot(blocks as u32, 64, &a, &b, tiles, &mut out).unwrap();
    for blk in 0..blocks {
        let s: f32 = (0..tiles as usize * PB)
            .map(|k| blk * tiles as usize * PB + k)
            .filter(|&k| k < n)
            .map(|k| a[k] * b[k])
            .sum();
        assert_eq!(out[blk], s, "block {blk}");
    }
}

#[test]
fn t29_multi_out() {
    let mut r = Rng(29);
    let n = 50;
    let x: Vec<f32> = (0..n).map(|_| r.f32()).collect();
    let y: Vec<f32> = (0..n - 10).map(|_| r.f32()).collect();
    let (mut o1, mut o2, mut o3) = (vec![0f32; n], vec![0f32; n], vec![0f32; n]);
    cpu_multi_out(2, 32, &x, &y, &mut o1, &mut o2, &mut o3).unwrap();
    let last = n - 1;
    for k in 0..n {
        assert_eq!(o1[k], x[k.min(last)]);
        assert_eq!(o2[k], y[k.min(y.len() - 1)] + x[(k + 1).min(last)]);
        assert_eq!(o3[k], x[(k + 2).min(last)] * y.get(k + 3).copied().unwrap_or(1.0));
    }
}

#[test]
fn t30_gather2() {
    let mut r = Rng(30);
    let x: Vec<f64> = (0..100).map(|i| i as f64 * 1.5).collect();
    let idx: Vec<u32> = (0..200).map(|_| (r.next() % 110) as u32).collect();
    let idx2: Vec<u8> = (0..70).map(|_| r.next() as u8).collect();
    let mut out = vec![0f64; 70];
    cpu_gather2(3, 32, &x, &idx, &idx2, &mut out).unwrap();
    for i in 0..70 {
        let Some(&k) = idx.get(idx2[i] as usize) else {
            assert_eq!(out[i], 0.0);
            continue;
        };
        let e = x.get(k as usize).copied().unwrap_or(f64::NAN);
        assert!(out[i] == e || (out[i].is_nan() && e.is_nan()), "i {i}");
    }
}

#[test]
fn t31_strlens() {
    let mut r = Rng(31);
    let stride = 13usize;
    let text: Vec<u8> = (0..stride * 20 + 5).map(|_| if r.next() % 9 == 0 { 0 } else { b'a' }).collect();
    let m = 25;
    let mut out = vec![99u32; m];
    cpu_strlens(1, 32, &text, stride as u32, &mut out).unwrap();
    for i in 0..m {
        let e = text.get(i * stride..).map(|s| s.iter().take(stride).take_while(|&&c| c != 0).count() as u32);
        assert_eq!(out[i], e.unwrap_or(99), "i {i}");
    }
}

#[test]
fn t32_private_bins() {
    let mut r = Rng(32);
    let per = 11usize;
    let x: Vec<u32> = (0..per * 30).map(|_| r.next() as u32).collect();
    let m = 33;
    let mut out = vec![0u32; m * 8];
    cpu_private_bins(2, 32, &x, per as u32, &mut out).unwrap();
    for i in 0..m {
        let mut bins = [0u32; 8];
        for k in 0..per {
            let Some(&v) = x.get(i * per + k) else { break };
            bins[(v % 8) as usize] += 1;
            let j = (v as usize / 8) & 7;
            bins[j] = bins[j].wrapping_add(v >> 20);
        }
        assert_eq!(&out[i * 8..i * 8 + 8], &bins, "i {i}");
    }
}

#[test]
fn t33_mul_wide() {
    let mut r = Rng(33);
    let n = 40;
    let a: Vec<u64> = (0..n).map(|_| r.next() ^ (r.next() << 40)).collect();
    let b: Vec<u64> = (0..n).map(|_| r.next() ^ (r.next() << 41)).collect();
    for m in [0u64, 1_000_000_007, u64::MAX - 58] {
        let (mut hi, mut md) = (vec![0u64; n], vec![0u64; n]);
        cpu_mul_wide(2, 32, &a, &b, m, &mut hi, &mut md).unwrap();
        for i in 0..n {
            let p = a[i] as u128 * b[i] as u128;
            assert_eq!(hi[i], (p >> 64) as u64);
            assert_eq!(md[i], if m == 0 { 0 } else { (p % m as u128) as u64 });
        }
    }
}

#[test]
fn t34_median3x3() {
    let mut r = Rng(34);
    let (h, w) = (19usize, 23usize);
    let img: Vec<f32> = (0..h * w).map(|_| r.f32()).collect();
    let mut out = vec![0f32; h * w];
    cpu_median3x3(
        ((w as u32).div_ceil(8), (h as u32).div_ceil(8)),
        (8, 8),
        Matrix::new(&img[..], h, w),
        Slice2d::new(&mut out, w),
    )
    .unwrap();
    for y in 0..h {
        for x in 0..w {
            let mut v = vec![];
            for yy in y.saturating_sub(1)..=(y + 1).min(h - 1) {
                for xx in x.saturating_sub(1)..=(x + 1).min(w - 1) {
                    v.push(img[yy * w + xx]);
                }
            }
            v.sort_by(|a, b| a.total_cmp(b));
            assert_eq!(out[y * w + x], v[v.len() / 2], "({x},{y})");
        }
    }
}

#[test]
fn t35_enum_ops() {
    let mut r = Rng(35);
    let ops: Vec<u32> = (0..30).map(|_| r.next() as u32).collect();
    let xs: Vec<u32> = (0..64).map(|_| r.next() as u32).collect();
    let mut out = vec![0u32; 64];
    cpu_enum_ops(2, 32, &ops, &xs, &mut out).unwrap();
    for i in 0..64 {
        assert_eq!(out[i], run_ops(&ops, xs[i]));
    }
    // hand check of the reference
    assert_eq!(run_ops(&[0x0000_0005, 0x1000_0002], 1), 24);
}

#[test]
fn t36_int_misc() {
    let mut r = Rng(36);
    let mut x: Vec<i64> = (0..60).map(|_| (r.next() as i64) * if r.next() % 2 == 0 { 1 } else { -1 }).collect();
    x.extend([i64::MIN, i64::MAX, 0, -1, 1]);
    for d in [7i64, -3, 0, -1] {
        let mut out = vec![0i64; x.len() * 6];
        cpu_int_misc(3, 32, &x, d, &mut out).unwrap();
        for (i, &v) in x.iter().enumerate() {
            let q = if d != 0 { v.checked_div_euclid(d).unwrap_or(i64::MAX) } else { 0 };
            let rr = if d != 0 { v.checked_rem_euclid(d).unwrap_or(0) } else { 0 };
            let s = v.unsigned_abs().isqrt() as i64;
            let lz = v.leading_zeros() as i64 + (v.count_ones() as i64) * 100;
            let p = (v % 7).wrapping_pow(5);
            let ad = v.abs_diff(d) as i64;
            assert_eq!(&out[i * 6..i * 6 + 6], &[q, rr, s, lz, p, ad], "v {v} d {d}");
        }
    }
}

#[test]
fn t37_float_bits() {
    let mut r = Rng(37);
    let mut x: Vec<f32> = (0..50).map(|_| r.f32() * 300.0).collect();
    x.extend([0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1e30, -1e30, 32.767, -32.769]);
    let mut out = vec![0u32; x.len()];
    let mut q = vec![0i16; x.len()];
    cpu_float_bits(3, 32, &x, &mut out, &mut q).unwrap();
    for (i, &v) in x.iter().enumerate() {
        let c = v.clamp(-100.0, 100.0);
        let bits = c.to_bits() ^ (v.is_sign_negative() as u32);
        let back = f32::from_bits(bits & !1);
        assert_eq!(out[i], bits.rotate_left(3) ^ (back.total_cmp(&0.0) as i8 as u32), "v {v}");
        assert_eq!(q[i], (v * 1000.0) as i16, "v {v}");
    }
}

#[test]
fn t38_cas_fmax() {
    let mut r = Rng(38);
    let x: Vec<f32> = (0..300).map(|_| r.f32() * 50.0).collect();
    let out = vec![AtomicU32::new(f32::NEG_INFINITY.to_bits())];
    cpu_cas_fmax(5, 64, &x, &out).unwrap();
    let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    assert_eq!(f32::from_bits(out[0].load(Ordering::Relaxed)), m);
}

#[test]
fn t39_rev_steps() {
    let mut r = Rng(39);
    let x: Vec<i32> = (0..77).map(|_| (r.next() % 1000) as i32 - 500).collect();
    let mut out = vec![0i64; 40];
    cpu_rev_steps(2, 32, &x, &mut out).unwrap();
    for i in 0..40 {
        let step = i % 5 + 1;
        let mut s = 0i64;
        'o: for k in (0..x.len()).rev().step_by(step) {
            for d in [2, 3, 5] {
                if x[k] % d == 0 {
                    continue 'o;
                }
            }
            s += x[k] as i64 * (k as i64 + 1);
        }
        assert_eq!(out[i], s, "i {i}");
    }
}

#[test]
fn t40_nbody() {
    let mut r = Rng(40);
    let ps: Vec<P3> = (0..45).map(|_| P3 { p: [r.f32(), r.f32(), r.f32()], m: r.f32().abs() + 0.1 }).collect();
    let mut out = vec![P3 { p: [0.0; 3], m: 0.0 }; ps.len()];
    cpu_nbody_acc(2, 32, &ps, 0.01, &mut out).unwrap();
    for (i, me) in ps.iter().enumerate() {
        let mut acc = [0f32; 3];
        for (j, o) in ps.iter().enumerate() {
            if j == i {
                continue;
            }
            let r2: f32 = me.p.iter().zip(o.p.iter()).map(|(a, b)| (a - b) * (a - b)).sum::<f32>() + 0.01;
            let inv = o.m / (r2 * r2.sqrt());
            for k in 0..3 {
                acc[k] += (o.p[k] - me.p[k]) * inv;
            }
        }
        for k in 0..3 {
            assert!(close32(out[i].p[k], acc[k], 1e-4), "i {i} k {k}: {} {}", out[i].p[k], acc[k]);
        }
        assert_eq!(out[i].m, me.m);
    }
}

#[test]
fn t41_gcds() {
    let mut r = Rng(41);
    let a: Vec<u64> = (0..50).map(|_| r.next() % 100000).collect();
    let b: Vec<u64> = (0..50).map(|_| r.next() % 100000).collect();
    let mut out = vec![0u64; 50];
    cpu_gcds(2, 32, &a, &b, &mut out).unwrap();
    fn g(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            g(b, a % b)
        }
    }
    for i in 0..50 {
        assert_eq!(out[i], g(a[i], b[i]));
    }
}

#[test]
fn t42_block_flags() {
    let mut r = Rng(42);
    let blocks = 4;
    let mut x: Vec<i32> = (0..256 * blocks - 30).map(|_| (r.next() % 100) as i32 + 1).collect();
    x[300] = -5;
    x[600] = 0;
    let mut out = vec![0u32; blocks];
    cpu_block_flags(blocks as u32, 96, &x, &mut out).unwrap();
    for blk in 0..blocks {
        let vals: Vec<i32> = (0..256).map(|k| x.get(blk * 256 + k).copied().unwrap_or(0)).collect();
        let all_pos = vals.iter().all(|&v| v >= 0);
        let any_zero = vals.contains(&0);
        assert_eq!(out[blk], all_pos as u32 | (any_zero as u32) << 1, "block {blk}");
    }
}
