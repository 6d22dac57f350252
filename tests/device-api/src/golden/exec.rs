//! Running the golden kernels: on the CPU executor, on the GPU, or (`Reference`) computing what
//! they should produce; and comparing two of them over the whole golden set.

use super::*;
use crate::kernels;
use oxide_rt::device::atomic::{AtomicF32, AtomicF64, AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};
use oxide_rt::host::Gpu;

/// Threads per block of every golden launch (whole warps).
const BLOCK: u32 = 128;

/// The accumulators of one `golden_atomics` launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Atomics {
    pub u32s: Vec<u32>,
    pub i32s: Vec<i32>,
    pub u64s: Vec<u64>,
    pub i64s: Vec<i64>,
    pub f32s: Vec<f32>,
    pub f64s: Vec<f64>,
}

impl Atomics {
    /// The values the accumulators start from: the identity of each slot's operation.
    pub fn initial() -> Atomics {
        Atomics {
            u32s: vec![0, u32::MAX, 0, u32::MAX, 0, 0, 0],
            i32s: vec![0, i32::MAX, i32::MIN],
            u64s: vec![0, u64::MAX, 0, u64::MAX, 0, 0, 0],
            i64s: vec![0, i64::MAX, i64::MIN],
            f32s: vec![0.0; ATOMIC_SLOTS[4]],
            f64s: vec![0.0; ATOMIC_SLOTS[5]],
        }
    }
}

/// Something that produces the golden kernels' results for given inputs.
pub trait Exec {
    fn f32(&self, op: u32, a: &[f32], b: &[f32], c: &[f32], n: &[i32]) -> Vec<f32>;
    fn f64(&self, op: u32, a: &[f64], b: &[f64], c: &[f64], n: &[i32]) -> Vec<f64>;
    fn conv(&self, op: u32, x: &[f32], y: &[f64], n: &[u64]) -> Vec<u64>;
    fn warp(&self, op: u32, x: &[u64]) -> Vec<u64>;
    fn bits(&self, op: u32, x: &[u64]) -> Vec<u64>;
    fn atomics(&self, x: &[u64], f: &[f32], d: &[f64]) -> Atomics;
}

fn grid(n: usize) -> u32 {
    (n as u32).div_ceil(BLOCK)
}

/// The CPU executor (`kernels::cpu_golden_*`).
pub struct Cpu;

impl Exec for Cpu {
    fn f32(&self, op: u32, a: &[f32], b: &[f32], c: &[f32], n: &[i32]) -> Vec<f32> {
        let mut out = vec![0.0; a.len()];
        kernels::cpu_golden_f32(grid(a.len()), BLOCK, op, a, b, c, n, &mut out).unwrap();
        out
    }
    fn f64(&self, op: u32, a: &[f64], b: &[f64], c: &[f64], n: &[i32]) -> Vec<f64> {
        let mut out = vec![0.0; a.len()];
        kernels::cpu_golden_f64(grid(a.len()), BLOCK, op, a, b, c, n, &mut out).unwrap();
        out
    }
    fn conv(&self, op: u32, x: &[f32], y: &[f64], n: &[u64]) -> Vec<u64> {
        let mut out = vec![0; x.len()];
        kernels::cpu_golden_conv(grid(x.len()), BLOCK, op, x, y, n, &mut out).unwrap();
        out
    }
    fn warp(&self, op: u32, x: &[u64]) -> Vec<u64> {
        let mut out = vec![0; x.len()];
        kernels::cpu_golden_warp(grid(x.len()), BLOCK, op, x, &mut out).unwrap();
        out
    }
    fn bits(&self, op: u32, x: &[u64]) -> Vec<u64> {
        let mut out = vec![0; x.len()];
        kernels::cpu_golden_bits(grid(x.len()), BLOCK, op, x, &mut out).unwrap();
        out
    }
    fn atomics(&self, x: &[u64], f: &[f32], d: &[f64]) -> Atomics {
        let i = Atomics::initial();
        let u32s: Vec<AtomicU32> = i.u32s.iter().map(|&v| AtomicU32::new(v)).collect();
        let i32s: Vec<AtomicI32> = i.i32s.iter().map(|&v| AtomicI32::new(v)).collect();
        let u64s: Vec<AtomicU64> = i.u64s.iter().map(|&v| AtomicU64::new(v)).collect();
        let i64s: Vec<AtomicI64> = i.i64s.iter().map(|&v| AtomicI64::new(v)).collect();
        let f32s: Vec<AtomicF32> = i.f32s.iter().map(|&v| AtomicF32::new(v)).collect();
        let f64s: Vec<AtomicF64> = i.f64s.iter().map(|&v| AtomicF64::new(v)).collect();
        kernels::cpu_golden_atomics(grid(x.len()), BLOCK, x, f, d, &u32s, &i32s, &u64s, &i64s, &f32s, &f64s).unwrap();
        let r = Ordering::Relaxed;
        Atomics {
            u32s: u32s.iter().map(|a| a.load(r)).collect(),
            i32s: i32s.iter().map(|a| a.load(r)).collect(),
            u64s: u64s.iter().map(|a| a.load(r)).collect(),
            i64s: i64s.iter().map(|a| a.load(r)).collect(),
            f32s: f32s.iter().map(|a| a.load(r)).collect(),
            f64s: f64s.iter().map(|a| a.load(r)).collect(),
        }
    }
}

/// The GPU (`kernels::launch_golden_*`), synchronising after each launch.
pub struct OnGpu<'a>(pub &'a Gpu);

impl OnGpu<'_> {
    fn up<T: oxide_rt::cuda::DeviceRepr>(&self, x: &[T]) -> oxide_rt::cuda::CudaSlice<T> {
        self.0.stream.clone_htod(x).unwrap()
    }
    fn down<T: oxide_rt::cuda::DeviceRepr>(&self, x: &oxide_rt::cuda::CudaSlice<T>) -> Vec<T> {
        oxide_rt::host::synchronize(&self.0.stream).unwrap();
        self.0.stream.clone_dtoh(x).unwrap()
    }
}

impl Exec for OnGpu<'_> {
    fn f32(&self, op: u32, a: &[f32], b: &[f32], c: &[f32], n: &[i32]) -> Vec<f32> {
        let s = &self.0.stream;
        let mut out = s.alloc_zeros::<f32>(a.len()).unwrap();
        let (da, db, dc, dn) = (self.up(a), self.up(b), self.up(c), self.up(n));
        kernels::launch_golden_f32(s, grid(a.len()), BLOCK, op, &da, &db, &dc, &dn, &mut out).unwrap();
        self.down(&out)
    }
    fn f64(&self, op: u32, a: &[f64], b: &[f64], c: &[f64], n: &[i32]) -> Vec<f64> {
        let s = &self.0.stream;
        let mut out = s.alloc_zeros::<f64>(a.len()).unwrap();
        let (da, db, dc, dn) = (self.up(a), self.up(b), self.up(c), self.up(n));
        kernels::launch_golden_f64(s, grid(a.len()), BLOCK, op, &da, &db, &dc, &dn, &mut out).unwrap();
        self.down(&out)
    }
    fn conv(&self, op: u32, x: &[f32], y: &[f64], n: &[u64]) -> Vec<u64> {
        let s = &self.0.stream;
        let mut out = s.alloc_zeros::<u64>(x.len()).unwrap();
        let (dx, dy, dn) = (self.up(x), self.up(y), self.up(n));
        kernels::launch_golden_conv(s, grid(x.len()), BLOCK, op, &dx, &dy, &dn, &mut out).unwrap();
        self.down(&out)
    }
    fn warp(&self, op: u32, x: &[u64]) -> Vec<u64> {
        let s = &self.0.stream;
        let mut out = s.alloc_zeros::<u64>(x.len()).unwrap();
        kernels::launch_golden_warp(s, grid(x.len()), BLOCK, op, &self.up(x), &mut out).unwrap();
        self.down(&out)
    }
    fn bits(&self, op: u32, x: &[u64]) -> Vec<u64> {
        let s = &self.0.stream;
        let mut out = s.alloc_zeros::<u64>(x.len()).unwrap();
        kernels::launch_golden_bits(s, grid(x.len()), BLOCK, op, &self.up(x), &mut out).unwrap();
        self.down(&out)
    }
    fn atomics(&self, x: &[u64], f: &[f32], d: &[f64]) -> Atomics {
        let s = &self.0.stream;
        let i = Atomics::initial();
        let (mut u32s, mut i32s, mut u64s) = (self.up(&i.u32s), self.up(&i.i32s), self.up(&i.u64s));
        let (mut i64s, mut f32s, mut f64s) = (self.up(&i.i64s), self.up(&i.f32s), self.up(&i.f64s));
        let (dx, df, dd) = (self.up(x), self.up(f), self.up(d));
        kernels::launch_golden_atomics(
            s,
            grid(x.len()),
            BLOCK,
            &dx,
            &df,
            &dd,
            &mut u32s,
            &mut i32s,
            &mut u64s,
            &mut i64s,
            &mut f32s,
            &mut f64s,
        )
        .unwrap();
        Atomics {
            u32s: self.down(&u32s),
            i32s: self.down(&i32s),
            u64s: self.down(&u64s),
            i64s: self.down(&i64s),
            f32s: self.down(&f32s),
            f64s: self.down(&f64s),
        }
    }
}

fn bits32(v: Vec<f32>) -> Vec<u64> {
    v.into_iter().map(|x| x.to_bits() as u64).collect()
}

fn bits64(v: Vec<f64>) -> Vec<u64> {
    v.into_iter().map(f64::to_bits).collect()
}

/// Every operation of the golden set on `got` against `want`, one row each.
pub fn agreement(got: &dyn Exec, want: &dyn Exec) -> Vec<Row> {
    let mut rows = vec![];
    math_rows(got, want, &mut rows);
    conv_rows(got, want, &mut rows);
    for (k, name) in WARP_OPS.iter().enumerate() {
        let x = warp_inputs(k, 300 + k as u64);
        let (g, w) = (got.warp(k as u32, &x), want.warp(k as u32, &x));
        rows.push(compare_exact(format!("warp {name}"), &g, &w, |i| format!("lane value {:#x}", x[i])));
    }
    let x = bit_inputs(400);
    for (k, name) in BIT_OPS.iter().enumerate() {
        let (g, w) = (got.bits(k as u32, &x), want.bits(k as u32, &x));
        rows.push(compare_exact(name.to_string(), &g, &w, |i| format!("x = {:#x}", x[i])));
    }
    atomic_rows(got, want, &mut rows);
    rows
}

fn math_rows(got: &dyn Exec, want: &dyn Exec, rows: &mut Vec<Row>) {
    let (a, b, c, n) = math_inputs::<f32>(1);
    let x: Vec<f64> = a.iter().map(|&v| v as f64).collect();
    for (k, (op, _)) in FLOAT_OPS.iter().enumerate() {
        let (g, w) = (got.f32(k as u32, &a, &b, &c, &n), want.f32(k as u32, &a, &b, &c, &n));
        rows.push(compare_floats(format!("f32 {}", op.name), *op, 32, &x, &bits32(g), &bits32(w)));
    }
    for (k, op) in FAST_OPS.iter().enumerate() {
        let (a, b) = fast_inputs(k, 100 + k as u64);
        let (c, n) = (vec![0.0; a.len()], vec![0; a.len()]);
        let x: Vec<f64> = a.iter().map(|&v| v as f64).collect();
        let sel = GOLDEN_MATH_OPS + k as u32;
        let (g, w) = (got.f32(sel, &a, &b, &c, &n), want.f32(sel, &a, &b, &c, &n));
        rows.push(compare_floats(format!("f32 {}", op.name), *op, 32, &x, &bits32(g), &bits32(w)));
    }
    let (a, b, c, n) = math_inputs::<f64>(2);
    for (k, (_, op)) in FLOAT_OPS.iter().enumerate() {
        let (g, w) = (got.f64(k as u32, &a, &b, &c, &n), want.f64(k as u32, &a, &b, &c, &n));
        rows.push(compare_floats(format!("f64 {}", op.name), *op, 64, &a, &bits64(g), &bits64(w)));
    }
}

fn conv_rows(got: &dyn Exec, want: &dyn Exec, rows: &mut Vec<Row>) {
    let (x, y, n) = conv_inputs(200);
    for (k, op) in CONV_OPS.iter().enumerate() {
        let (g, w) = (got.conv(k as u32, &x, &y, &n), want.conv(k as u32, &x, &y, &n));
        let name = op.name.to_string();
        let input = |i: usize| -> f64 {
            match k {
                0..=7 | 16 => x[i] as f64,
                8..=15 | 17 => y[i],
                18 | 22 => n[i] as i32 as f64,
                19 | 23 => n[i] as u32 as f64,
                20 | 24 => n[i] as i64 as f64,
                _ => n[i] as f64,
            }
        };
        rows.push(match k {
            16 => compare_floats(name, *op, 64, &(0..x.len()).map(input).collect::<Vec<_>>(), &g, &w),
            17..=21 => compare_floats(name, *op, 32, &(0..x.len()).map(input).collect::<Vec<_>>(), &g, &w),
            22.. => compare_floats(name, *op, 64, &(0..x.len()).map(input).collect::<Vec<_>>(), &g, &w),
            _ => compare_exact(name, &g, &w, |i| format!("x = {:e}", input(i))),
        });
    }
}

fn atomic_rows(got: &dyn Exec, want: &dyn Exec, rows: &mut Vec<Row>) {
    let mut results = vec![];
    let mut tolerances = (vec![], vec![], vec![]);
    for round in 0..ATOMIC_ROUNDS {
        let (x, f, d) = atomic_inputs(round);
        results.push((got.atomics(&x, &f, &d), want.atomics(&x, &f, &d)));
        let f64s = f.iter().map(|&v| v as f64);
        tolerances.0.push(sum_tolerance(f64s.clone(), f32::EPSILON as f64));
        // The block sums add the block's values first: the same bound holds for the sum of sums.
        tolerances.1.push(sum_tolerance(f64s, f32::EPSILON as f64));
        tolerances.2.push(sum_tolerance(d.iter().copied(), f64::EPSILON));
    }
    for (name, array, slot) in ATOMIC_INT_OPS {
        let pick = |a: &Atomics| match array {
            0 => a.u32s[slot] as u64,
            1 => a.i32s[slot] as u32 as u64,
            2 => a.u64s[slot],
            _ => a.i64s[slot] as u64,
        };
        let (g, w): (Vec<u64>, Vec<u64>) = results.iter().map(|(g, w)| (pick(g), pick(w))).unzip();
        rows.push(compare_exact(format!("{name} ({ATOMIC_THREADS} threads)"), &g, &w, |i| format!("round {i}")));
    }
    let f32_sum = |slot: usize| -> (Vec<u64>, Vec<u64>) {
        results.iter().map(|(g, w)| (g.f32s[slot].to_bits() as u64, w.f32s[slot].to_bits() as u64)).unzip()
    };
    let (g, w) = f32_sum(0);
    rows.push(compare_sums(format!("atomic_add f32 ({ATOMIC_THREADS} threads)"), 32, &g, &w, &tolerances.0));
    let (g, w) = f32_sum(1);
    rows.push(compare_sums("shared atomic_add f32, then global".into(), 32, &g, &w, &tolerances.1));
    let (g, w): (Vec<u64>, Vec<u64>) = results.iter().map(|(g, w)| (g.f64s[0].to_bits(), w.f64s[0].to_bits())).unzip();
    rows.push(compare_sums(format!("atomic_add f64 ({ATOMIC_THREADS} threads)"), 64, &g, &w, &tolerances.2));
}
