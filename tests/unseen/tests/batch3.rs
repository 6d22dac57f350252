//! Batch 3 kernels on the CPU executor against plain-Rust references.
// The references mirror the kernels' own style (index loops, checked arithmetic, `%`).
#![allow(clippy::needless_range_loop, clippy::manual_saturating_arithmetic, clippy::manual_is_multiple_of)]
use oxide_rt::device::atomic::{AtomicI32, AtomicU64};
use oxide_rt::device::AtomicF64;
use oxide_rt::{Matrix, Slice2d};
use std::sync::atomic::Ordering;
use unseen::check::*;
use unseen::kernels::*;

#[test]
fn t43_frem_taps() {
    let mut r = Rng(43);
    let n = 50;
    let x: Vec<f32> = (0..n).map(|_| r.f32()).collect();
    let taps = [0.1f32, -0.2, 0.3, 0.5, 0.3, -0.2, 0.1];
    let mut o = vec![0f32; n];
    let mut o64 = vec![0f64; n];
    cpu_frem_taps(2, 32, &x, taps, 3.3, &mut o, &mut o64).unwrap();
    for k in 0..n {
        let mut s = 0.0f32;
        for t in 0..7 {
            if let Some(&v) = (k + t).checked_sub(3).and_then(|j| x.get(j)) {
                s += taps[t] * v;
            }
        }
        let e = (s % 0.75) + s.powi(3);
        assert!((o[k] - e).abs() <= 1e-6, "k {k}: {} {}", o[k], e);
        assert_eq!(o64[k], (k as f64 * 1.37) % 3.3);
    }
}

#[test]
fn t44_rgb() {
    let mut r = Rng(44);
    let px: Vec<[u8; 3]> = (0..70).map(|_| [r.next() as u8, r.next() as u8, r.next() as u8]).collect();
    let mut out = vec![[0u8; 3]; 70];
    let mut g = vec![0u8; 70];
    cpu_rgb_ops(3, 32, &px, &mut out, &mut g).unwrap();
    for i in 0..70 {
        let p = px[i];
        assert_eq!(out[i], [255 - p[2], 255 - p[1], 255 - p[0]]);
        assert_eq!(g[i], ((p[0] as u32 * 77 + p[1] as u32 * 150 + p[2] as u32 * 29) >> 8) as u8);
    }
}

#[test]
fn t45_closures() {
    let mut r = Rng(45);
    let x: Vec<f32> = (0..60).map(|_| r.f32()).collect();
    let ops: Vec<u32> = (0..50).map(|_| r.next() as u32 % 100).collect();
    let mut out = vec![0f32; 60];
    cpu_closures(2, 32, &x, &ops, &mut out).unwrap();
    for i in 0..60 {
        let op = ops.get(i).copied().unwrap_or(0);
        let f = |v: f32| match op % 3 {
            0 => v * 0.5 + 1.0,
            1 => v * v - 0.25,
            _ => -v,
        };
        let mut v = x[i];
        for _ in 0..op % 5 {
            v = f(v).clamp(-4.0, 4.0);
        }
        assert_eq!(out[i], v, "i {i}");
    }
}

#[test]
fn t46_search_kv() {
    let mut r = Rng(46);
    let mut keys: Vec<u32> = (0..100).map(|_| (r.next() % 1000) as u32).collect();
    keys.sort();
    keys.dedup();
    let vals: Vec<u64> = (0..keys.len() - 3).map(|_| r.next() << 9).collect();
    let q: Vec<u32> =
        (0..80).map(|k| if k % 2 == 0 { keys[(k * 7) % keys.len()] } else { (r.next() % 1000) as u32 }).collect();
    let bytes: Vec<u8> = (0..45).map(|_| r.next() as u8).collect();
    let mut out = vec![0u64; 80];
    cpu_search_kv(3, 32, &keys, &vals, &q, &bytes, &mut out).unwrap();
    for i in 0..80 {
        let k = q[i];
        let rv =
            keys.binary_search(&k).ok().and_then(|p| vals.get(p)).and_then(|v| v.checked_mul(3)).unwrap_or(u64::MAX);
        let start = (k as usize % 4) * 8;
        let extra = bytes[start..]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .fold(0u64, |a, w| a ^ w.rotate_left(7));
        assert_eq!(out[i], rv ^ extra, "i {i}");
    }
}

#[test]
fn t47_utf8() {
    let parts: Vec<&[u8]> = vec![
        "héllo wörld".as_bytes(),
        b"abc\xff def",
        "日本語テキスト123".as_bytes(),
        b"",
        b"\xe6\x97",
        "Ελληνικά!".as_bytes(),
    ];
    let mut text = vec![];
    let mut offs = vec![0u32];
    for p in &parts {
        text.extend_from_slice(p);
        offs.push(text.len() as u32);
    }
    let mut out = vec![0i32; parts.len()];
    cpu_utf8_count(1, 32, &text, &offs, &mut out).unwrap();
    for (i, p) in parts.iter().enumerate() {
        let e = match std::str::from_utf8(p) {
            Ok(s) => s.chars().filter(|c| c.is_alphabetic()).count() as i32,
            Err(e) => -(e.valid_up_to() as i32) - 1,
        };
        assert_eq!(out[i], e, "part {i}");
    }
}

#[test]
fn t48_shared_structs() {
    let mut r = Rng(48);
    let n: usize = 300;
    let x: Vec<f32> = (0..n).map(|_| (r.next() % 64) as f32 / 4.0 - 3.0).collect();
    let s = vec![AtomicF64::new(0.0)];
    let m = vec![AtomicI32::new(i32::MAX)];
    let c = vec![AtomicU64::new(0)];
    let blocks = n.div_ceil(64);
    cpu_shared_structs(blocks as u32, 64, &x, &s, &m, &c).unwrap();
    let mut es = 0.0f64;
    for b in 0..blocks {
        let bs: f32 = x.iter().skip(b * 64).take(64).sum();
        es += bs as f64;
    }
    assert_eq!(s[0].load(Ordering::Relaxed), es);
    assert_eq!(m[0].load(Ordering::Relaxed), x.iter().map(|&v| (v * 1000.0) as i32).min().unwrap());
    assert_eq!(c[0].load(Ordering::Relaxed), n as u64 + ((n as u64) << 32));
}

#[test]
fn t49_bits_shfl() {
    let mut r = Rng(49);
    let n = 70usize;
    let x: Vec<u64> = (0..n).map(|k| if k == 5 { 0 } else { r.next() ^ (r.next() << 30) }).collect();
    let blocks = n.div_ceil(32);
    let mut out = vec![0u64; n];
    let mut fo = vec![0f64; n];
    cpu_bits_shfl(blocks as u32, 32, &x, &mut out, &mut fo).unwrap();
    for i in 0..n {
        let v = x[i];
        let ffs = if v == 0 { 0 } else { v.trailing_zeros() as u64 + 1 };
        let b = v.reverse_bits() ^ ((v as u32).leading_zeros() as u64) << 8 ^ ffs;
        assert_eq!(out[i], b, "i {i}");
        let lane = i % 32;
        let seg = lane / 16;
        let src = lane + 3;
        let src = if src / 16 == seg { src } else { lane };
        let j = (i / 32) * 32 + src;
        let e = x.get(j).copied().unwrap_or(0) as f64 * 0.5;
        assert_eq!(fo[i], e, "i {i}");
    }
}

#[test]
fn t50_checked_div() {
    let a: Vec<i32> = vec![10, i32::MIN, 7, -9];
    let b: Vec<i32> = vec![3, -1, 2, 4];
    let mut out = vec![0i32; 4];
    cpu_checked_div(1, 32, &a, &b, &mut out).unwrap();
    assert_eq!(out, vec![3, i32::MIN, 3, -2]);
    let b0: Vec<i32> = vec![3, 0, 2, 4];
    let err = cpu_checked_div(1, 32, &a, &b0, &mut out).unwrap_err();
    let msg = format!("{err}");
    eprintln!("panic error: {msg}");
    assert!(msg.contains("division by zero"), "{msg}");
}

#[test]
fn t51_kth_tiles() {
    let mut r = Rng(51);
    let (rows, cols) = (21usize, 19usize);
    let x: Vec<f32> = (0..rows * cols).map(|_| r.f32()).collect();
    for k in [0u32, 5, 20] {
        let mut out = vec![-9f32; rows * cols];
        // DOWN = true: block (bx, by) owns tile at (bx*8, by*8)
        let grid = ((rows as u32).div_ceil(8), (cols as u32).div_ceil(8));
        cpu_kth_tiles(grid, (8, 8), Matrix::new(&x[..], rows, cols), k, Slice2d::new(&mut out, cols)).unwrap();
        for rr in 0..rows {
            for c in 0..cols {
                let mut w = [f32::INFINITY; 16];
                for j in 0..16 {
                    w[j] = x[rr * cols + (c + j) % cols];
                }
                w.sort_by(|a, b| a.total_cmp(b));
                assert_eq!(out[rr * cols + c], w[(k as usize).min(15)], "({rr},{c}) k {k}");
            }
        }
    }
}

#[test]
fn t52_count_sort() {
    let mut r = Rng(52);
    let per = 37usize;
    let keys: Vec<u8> = (0..per * 10 + 5).map(|_| r.next() as u8).collect();
    let m = 12;
    let mut out = vec![7u32; m];
    cpu_count_sort_u8(1, 32, &keys, per as u32, &mut out).unwrap();
    for i in 0..m {
        let start = i * per;
        let Some(ks) = keys.get(start..(start + per).min(keys.len())) else {
            assert_eq!(out[i], 7);
            continue;
        };
        let mut v = ks.to_vec();
        v.sort();
        let h = v.iter().enumerate().fold(0u32, |h, (rank, &k)| h.wrapping_add((rank as u32).wrapping_mul(k as u32)));
        assert_eq!(out[i], h, "i {i}");
    }
}
