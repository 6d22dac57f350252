//! Batch 4 of the corpus on the CPU executor against plain-Rust references.
// The references mirror the kernels' own style (index loops, checked arithmetic, `%`).
#![allow(clippy::needless_range_loop, clippy::manual_saturating_arithmetic, clippy::manual_is_multiple_of)]
use oxide_rt::Matrix;
use unseen::check::*;
use unseen::kernels::*;

fn reference<T: Copy + Default>(
    x: &[T],
    idx: &[u32],
    m: &[T],
    rows: usize,
    cols: usize,
    rounds: usize,
    threads: usize,
) -> Vec<T> {
    let n = x.len();
    let mut out = vec![];
    for k in 0..threads {
        let a = if n > 0 { x[k.min(n - 1)] } else { T::default() };
        let mut g = T::default();
        for r in 0..rounds {
            let j = idx.get(k + r).copied().unwrap_or(0) as usize;
            if let Some(&v) = x.get(j) {
                g = v;
            }
            let next = if r + 1 < rounds { idx.get(k + r + 1).and_then(|&j| x.get(j as usize)).copied() } else { None };
            if let Some(v) = next {
                g = v;
            }
        }
        let c = if rows > 0 && cols > 0 { m[(k % rows) * cols + (k * 7) % cols] } else { T::default() };
        let f = x.get(k + 1).copied().unwrap_or_default();
        out.extend([a, g, c, f]);
    }
    out
}

macro_rules! check {
    ($name:ident, $launch:ident, $t:ty, $gen:expr) => {
        #[test]
        fn $name() {
            let mut r = Rng(stringify!($name).len() as u64);
            let mut g = || -> $t { $gen(r.next()) };
            let n = 90;
            let x: Vec<$t> = (0..n).map(|_| g()).collect();
            let mut r2 = Rng(5);
            let idx: Vec<u32> = (0..140).map(|_| (r2.next() % 100) as u32).collect();
            let (rows, cols) = (5usize, 11usize);
            let m: Vec<$t> = (0..rows * cols).map(|_| g()).collect();
            let threads = 128;
            for rounds in [0u32, 1, 3] {
                let mut out = vec![<$t>::default(); threads * 4];
                $launch(2, 64, &x, &idx, Matrix::new(&m[..], rows, cols), rounds, &mut out).unwrap();
                assert_eq!(out, reference(&x, &idx, &m, rows, cols, rounds as usize, threads), "rounds {rounds}");
            }
        }
    };
}
check!(g_u8, cpu_gather_types_u8, u8, |v: u64| v as u8);
check!(g_i8, cpu_gather_types_i8, i8, |v: u64| v as i8);
check!(g_u16, cpu_gather_types_u16, u16, |v: u64| v as u16);
check!(g_f64, cpu_gather_types_f64, f64, |v: u64| v as f64 * 0.25);
check!(g_rgb, cpu_gather_types_Rgb, Rgb, |v: u64| [v as u8, (v >> 8) as u8, (v >> 16) as u8]);
check!(g_f64x3, cpu_gather_types_F64x3, F64x3, |v: u64| [v as f64, -(v as f64), 0.5]);
check!(g_u16x5, cpu_gather_types_U16x5, U16x5, |v: u64| [v as u16, 1, 2, 3, (v >> 16) as u16]);
check!(g_mixed, cpu_gather_types_Mixed, Mixed, |v: u64| Mixed { a: v as u8, b: v as f64, c: (v >> 8) as u16 });

#[test]
fn t_reductions() {
    let mut r = Rng(77);
    let n = 100;
    let x: Vec<f64> = (0..n).map(|_| (r.next() % 1000) as f64 - 500.0).collect();
    let y: Vec<i16> = (0..n - 7).map(|_| r.next() as i16).collect();
    let z: Vec<u64> = (0..n - 3).map(|_| r.next()).collect();
    let per = 9usize;
    let threads = 14;
    let mut out = vec![0f64; threads * 4];
    cpu_reductions(1, 32, &x, &y, &z, per as u32, &mut out).unwrap();
    for i in 0..threads {
        let s = i * per;
        let xs = x.get(s..).unwrap_or(&[]);
        let ys = y.get(s..).unwrap_or(&[]);
        let zs = z.get(s..).unwrap_or(&[]);
        let e = [
            xs.iter().take(per).fold(f64::NEG_INFINITY, |a, &b| a.max(b)),
            xs.iter().take(per).fold(f64::INFINITY, |a, &b| a.min(b)),
            ys.iter().take(per).fold(i16::MIN, |a, &b| a.max(b)) as f64,
            zs.iter().take(per).fold(u64::MAX, |a, &b| a.min(b)) as f64,
        ];
        assert_eq!(&out[i * 4..i * 4 + 4], &e, "i {i}");
    }
}

#[test]
fn t_index_weave_in_1d_2d_and_3d_launches() {
    let mut r = Rng(78);
    let n = 1000;
    let x: Vec<u32> = (0..n).map(|_| r.next() as u32).collect();
    let want: Vec<u32> = (0..n).map(|i| x[i].rotate_left((i % 31) as u32) ^ i as u32).collect();
    for (grid, block) in [((8, 1, 1), (128, 1, 1)), ((4, 2, 1), (32, 4, 1)), ((2, 2, 2), (8, 4, 4))] {
        let mut out = vec![0u32; n];
        cpu_index_weave(grid, block, &x, &mut out).unwrap();
        assert_eq!(out, want, "grid {grid:?}, block {block:?}");
    }
}

#[test]
fn t_clamped_mean3_reads_its_clamped_neighbours_and_panics_on_a_short_input() {
    let (w, h) = (37usize, 11usize);
    let mut r = Rng(79);
    let x: Vec<f32> = (0..w * h).map(|_| (r.next() % 1000) as f32).collect();
    let at = |y: usize, x_: usize| x[y * w + x_];
    let mut want = vec![0f32; w * h];
    for y in 0..h {
        for c in 0..w {
            let mut sum = 0.0f32;
            for yy in [y.saturating_sub(1), y, (y + 1).min(h - 1)] {
                for xx in [c.saturating_sub(1), c, (c + 1).min(w - 1)] {
                    sum += at(yy, xx);
                }
            }
            want[y * w + c] = sum / 9.0;
        }
    }
    let (grid, block) = ((3, 2, 1), (16, 8, 1));
    let mut out = vec![0f32; w * h];
    cpu_clamped_mean3(grid, block, &x, oxide_rt::Slice2d::new(&mut out, w)).unwrap();
    assert_eq!(out, want);
    let err = cpu_clamped_mean3(grid, block, &x[..w * h - 1], oxide_rt::Slice2d::new(&mut out, w)).unwrap_err();
    assert!(matches!(&err, oxide_rt::Error::KernelPanic { kernel: "clamped_mean3", .. }), "{err}");
}

#[test]
fn t_interior_mean5_copies_the_border_and_panics_on_a_short_input() {
    let (w, h) = (37usize, 11usize);
    let mut r = Rng(83);
    let x: Vec<f32> = (0..w * h).map(|_| (r.next() % 1000) as f32).collect();
    let mut want = x.clone();
    for y in 1..h - 1 {
        for c in 1..w - 1 {
            let i = y * w + c;
            want[i] = (x[i] + x[i - 1] + x[i + 1] + x[i - w] + x[i + w]) / 5.0;
        }
    }
    let (grid, block) = ((3, 2, 1), (16, 8, 1));
    let mut out = vec![0f32; w * h];
    cpu_interior_mean5(grid, block, &x, oxide_rt::Slice2d::new(&mut out, w)).unwrap();
    assert_eq!(out, want);
    let err = cpu_interior_mean5(grid, block, &x[..w * h - 1], oxide_rt::Slice2d::new(&mut out, w)).unwrap_err();
    assert!(matches!(&err, oxide_rt::Error::KernelPanic { kernel: "interior_mean5", .. }), "{err}");
}
