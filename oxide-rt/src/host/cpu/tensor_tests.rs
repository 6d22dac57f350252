//! `device::tensor` on the CPU executor against scalar references: every MMA shape with random
//! fragments placed by the PTX ISA's layouts (written out here again, independently of the
//! module's `coord` functions), `ldmatrix` with per-lane row addresses, the fragment loaders,
//! and `cp.async` groups with zero-fill.

use super::{cpu_launch, CpuKernel};
use crate::device::half::{Bf16, Tf32, F16};
use crate::device::shared::{__static_shared, SharedSlice};
use crate::device::tensor::*;
use crate::device::thread::lane_id;
use crate::{EmbeddedModule, Error, LaunchConfig};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

type TestResult = Result<(), Box<dyn std::error::Error>>;

static MMA_MODULE: EmbeddedModule = EmbeddedModule {
    ptx: ".visible .entry k()\n{\n\tmma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8};\n\tret;\n}\n",
    cubins: &[],
};

fn kernel() -> CpuKernel {
    CpuKernel::new(&MMA_MODULE, "k")
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A small float with few mantissa bits, exact in bf16, f16 and tf32.
    fn small(&mut self) -> f32 {
        ((self.next() % 33) as f32 - 16.0) / 8.0
    }
}

/// A 16-byte aligned source for `cp_async`.
#[repr(align(16))]
struct Aligned([u32; 16]);

fn atomics(n: usize) -> Vec<AtomicU32> {
    (0..n).map(|_| AtomicU32::new(0)).collect()
}

/// The PTX ISA's layouts, per register, as the ISA's tables put them (g = groupID,
/// t = threadID_in_group): (row, col) of the `j`-th element of register `r`.
fn a_16816(g: usize, t: usize, r: usize, j: usize) -> (usize, usize) {
    // a0,a1: (g, 2t+j); a2,a3: (g+8, 2t+j); a4,a5: (g, 2t+8+j); a6,a7: (g+8, 2t+8+j)
    [(g, 2 * t + j), (g + 8, 2 * t + j), (g, 2 * t + 8 + j), (g + 8, 2 * t + 8 + j)][r]
}
fn b_16816(g: usize, t: usize, r: usize, j: usize) -> (usize, usize) {
    // b0,b1: (2t+j, g); b2,b3: (2t+8+j, g)
    [(2 * t + j, g), (2 * t + 8 + j, g)][r]
}
fn a_1688_tf32(g: usize, t: usize, r: usize) -> (usize, usize) {
    // a0: (g, t); a1: (g+8, t); a2: (g, t+4); a3: (g+8, t+4)
    [(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)][r]
}
fn b_1688_tf32(g: usize, t: usize, r: usize) -> (usize, usize) {
    [(t, g), (t + 4, g)][r]
}
fn a_16832_s8(g: usize, t: usize, r: usize, j: usize) -> (usize, usize) {
    // a0..a3: (g, 4t+j); a4..a7: (g+8, 4t+j); a8..a11: (g, 4t+16+j); a12..a15: (g+8, 4t+16+j)
    [(g, 4 * t + j), (g + 8, 4 * t + j), (g, 4 * t + 16 + j), (g + 8, 4 * t + 16 + j)][r]
}
fn b_16832_s8(g: usize, t: usize, r: usize, j: usize) -> (usize, usize) {
    [(4 * t + j, g), (4 * t + 16 + j, g)][r]
}
fn c_layout(g: usize, t: usize, i: usize) -> (usize, usize) {
    // c0,c1: (g, 2t+i); c2,c3: (g+8, 2t+i-2)
    [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)][i]
}

/// Runs one warp: each lane packs its A and B registers with `pack_a` / `pack_b` from the
/// row-major `a` (16 x k) and `b` (k x 8), its C from `c` (16 x 8), calls `mma`, and stores D
/// by the C layout. Returns D (16 x 8) as bits.
fn run_mma(
    pack_a: impl Fn(usize, usize) -> [u32; 4] + Sync,
    pack_b: impl Fn(usize, usize) -> [u32; 2] + Sync,
    c: &[u32],
    mma: impl Fn([u32; 4], [u32; 2], [u32; 4]) -> [u32; 4] + Sync,
) -> Result<Vec<u32>, Error> {
    let d = atomics(128);
    cpu_launch(&kernel(), LaunchConfig::new(1, 32), || {
        let lane = lane_id() as usize;
        let (g, t) = (lane / 4, lane % 4);
        let cr: [u32; 4] = std::array::from_fn(|i| {
            let (r, col) = c_layout(g, t, i);
            c[r * 8 + col]
        });
        let out = mma(pack_a(g, t), pack_b(g, t), cr);
        for (i, v) in out.into_iter().enumerate() {
            let (r, col) = c_layout(g, t, i);
            d[r * 8 + col].store(v, Relaxed);
        }
    })?;
    Ok(d.iter().map(|v| v.load(Relaxed)).collect())
}

fn reference_f32(a: &[f32], b: &[f32], c: &[f32], k: usize) -> Vec<f32> {
    (0..128)
        .map(|e| {
            let (i, j) = (e / 8, e % 8);
            c[e] + (0..k).map(|l| a[i * k + l] * b[l * 8 + j]).sum::<f32>()
        })
        .collect()
}

fn close(got: &[u32], want: &[f32]) {
    for (e, (&g, &w)) in got.iter().zip(want).enumerate() {
        let g = f32::from_bits(g);
        // Inputs with 3 mantissa bits: every product and partial sum is exact in f32.
        assert_eq!(g, w, "D[{}][{}]", e / 8, e % 8);
    }
}

fn mma_16bit<T: Mma<M16N8K16, Acc = f32> + Copy + Send + Sync>(
    seed: u64,
    make: fn(f32) -> T,
    bits: fn(T) -> u16,
) -> TestResult {
    let mut rng = Rng(seed);
    let (a, b, c): (Vec<f32>, Vec<f32>, Vec<f32>) = (
        (0..256).map(|_| rng.small()).collect(),
        (0..128).map(|_| rng.small()).collect(),
        (0..128).map(|_| rng.small()).collect(),
    );
    let pa = |g, t| {
        std::array::from_fn(|r| {
            let e = |j| {
                let (row, col) = a_16816(g, t, r, j);
                bits(make(a[row * 16 + col])) as u32
            };
            e(0) | e(1) << 16
        })
    };
    let pb = |g, t| {
        std::array::from_fn(|r| {
            let e = |j| {
                let (row, col) = b_16816(g, t, r, j);
                bits(make(b[row * 8 + col])) as u32
            };
            e(0) | e(1) << 16
        })
    };
    let cb: Vec<u32> = c.iter().map(|v| v.to_bits()).collect();
    let d = run_mma(pa, pb, &cb, |a, b, c| {
        mma_sync(FragA::<T, M16N8K16>::from_regs(a), FragB::from_regs(b), FragC::new(c.map(f32::from_bits)))
            .elems
            .map(f32::to_bits)
    })?;
    close(&d, &reference_f32(&a, &b, &c, 16));
    Ok(())
}

#[test]
fn mma_bf16_m16n8k16_matches_the_scalar_product() -> TestResult {
    for seed in [1, 2, 3] {
        mma_16bit::<Bf16>(seed * 7919, Bf16::from_f32, |v| v.0)?;
    }
    Ok(())
}

#[test]
fn mma_f16_m16n8k16_matches_the_scalar_product() -> TestResult {
    for seed in [4, 5, 6] {
        mma_16bit::<F16>(seed * 7919, F16::from_f32, |v| v.0)?;
    }
    Ok(())
}

#[test]
fn mma_tf32_m16n8k8_matches_the_scalar_product() -> TestResult {
    for seed in [7u64, 8, 9] {
        let mut rng = Rng(seed * 104_729);
        let (a, b, c): (Vec<f32>, Vec<f32>, Vec<f32>) = (
            (0..128).map(|_| rng.small()).collect(),
            (0..64).map(|_| rng.small()).collect(),
            (0..128).map(|_| rng.small()).collect(),
        );
        let pa = |g, t| {
            std::array::from_fn(|r| {
                let (row, col) = a_1688_tf32(g, t, r);
                Tf32::from_f32(a[row * 8 + col]).0
            })
        };
        let pb = |g, t| {
            std::array::from_fn(|r| {
                let (row, col) = b_1688_tf32(g, t, r);
                Tf32::from_f32(b[row * 8 + col]).0
            })
        };
        let cb: Vec<u32> = c.iter().map(|v| v.to_bits()).collect();
        let d = run_mma(pa, pb, &cb, |a, b, c| {
            mma_sync(FragA::<Tf32, M16N8K8>::from_regs(a), FragB::from_regs(b), FragC::new(c.map(f32::from_bits)))
                .elems
                .map(f32::to_bits)
        })?;
        close(&d, &reference_f32(&a, &b, &c, 8));
    }
    Ok(())
}

#[test]
fn mma_tf32_ignores_the_low_mantissa_bits() -> TestResult {
    // 1 + 2^-20 is 1.0 in TF32: the product of ones must not see the extra bit.
    let x = Tf32(1.0f32.to_bits() | 0x80);
    let d = run_mma(
        |_, _| [x.0; 4],
        |_, _| [x.0; 2],
        &[0; 128],
        |a, b, c| {
            mma_sync(FragA::<Tf32, M16N8K8>::from_regs(a), FragB::from_regs(b), FragC::new(c.map(f32::from_bits)))
                .elems
                .map(f32::to_bits)
        },
    )?;
    assert!(d.iter().all(|&v| f32::from_bits(v) == 8.0), "{:?}", &d[..4]);
    Ok(())
}

#[test]
fn mma_s8_m16n8k32_matches_the_scalar_product_and_wraps() -> TestResult {
    for seed in [10u64, 11, 12] {
        let mut rng = Rng(seed * 15_485_863);
        let a: Vec<i8> = (0..512).map(|_| rng.next() as i8).collect();
        let b: Vec<i8> = (0..256).map(|_| rng.next() as i8).collect();
        let mut c: Vec<i32> = (0..128).map(|_| (rng.next() as i32) >> 8).collect();
        c[0] = i32::MAX; // D[0][0] wraps when its dot product is positive
        let pa = |g, t| {
            std::array::from_fn(|r| {
                (0..4).fold(0u32, |acc, j| {
                    let (row, col) = a_16832_s8(g, t, r, j);
                    acc | (a[row * 32 + col] as u8 as u32) << (8 * j)
                })
            })
        };
        let pb = |g, t| {
            std::array::from_fn(|r| {
                (0..4).fold(0u32, |acc, j| {
                    let (row, col) = b_16832_s8(g, t, r, j);
                    acc | (b[row * 8 + col] as u8 as u32) << (8 * j)
                })
            })
        };
        let cb: Vec<u32> = c.iter().map(|&v| v as u32).collect();
        let d = run_mma(pa, pb, &cb, |a, b, c| {
            mma_sync(FragA::<i8, M16N8K32>::from_regs(a), FragB::from_regs(b), FragC::new(c.map(|v| v as i32)))
                .elems
                .map(|v| v as u32)
        })?;
        for e in 0..128 {
            let (i, j) = (e / 8, e % 8);
            let dot: i32 = (0..32).map(|l| a[i * 32 + l] as i32 * b[l * 8 + j] as i32).sum();
            assert_eq!(d[e] as i32, c[e].wrapping_add(dot), "D[{i}][{j}]");
        }
    }
    Ok(())
}

#[test]
fn coords_match_the_ptx_layouts() {
    for lane in 0..32u32 {
        let (g, t) = ((lane / 4) as usize, (lane % 4) as usize);
        for i in 0..8 {
            assert_eq!(FragA::<Bf16, M16N8K16>::coord(lane, i), a_16816(g, t, i / 2, i % 2));
        }
        for i in 0..4 {
            assert_eq!(FragB::<F16, M16N8K16>::coord(lane, i), b_16816(g, t, i / 2, i % 2));
            assert_eq!(FragA::<Tf32, M16N8K8>::coord(lane, i), a_1688_tf32(g, t, i));
            assert_eq!(FragC::<f32, M16N8K16>::coord(lane, i), c_layout(g, t, i));
        }
        for i in 0..2 {
            assert_eq!(FragB::<Tf32, M16N8K8>::coord(lane, i), b_1688_tf32(g, t, i));
        }
        for i in 0..16 {
            assert_eq!(FragA::<i8, M16N8K32>::coord(lane, i), a_16832_s8(g, t, i / 4, i % 4));
        }
        for i in 0..8 {
            assert_eq!(FragB::<i8, M16N8K32>::coord(lane, i), b_16832_s8(g, t, i / 4, i % 4));
        }
    }
}

/// A per-block shared array of `n` u16 for the test kernels.
fn shared_u16(key: &'static u8, n: usize) -> SharedSlice<u16> {
    __static_shared::<u16>(key as *const u8, n)
}

#[test]
fn ldmatrix_gives_each_lane_its_row_fragments() -> TestResult {
    // 32 rows of 8 u16 each (element value = 100 * row + column); lane l passes the row
    // `perm[l]`, so the row addresses are not in lane order.
    static KEY: u8 = 0;
    let perm: Vec<usize> = (0..32).map(|l| (l * 13 + 5) % 32).collect();
    let cases: [(usize, bool); 6] = [(1, false), (2, false), (4, false), (1, true), (2, true), (4, true)];
    let got = atomics(cases.len() * 32 * 4);
    cpu_launch(&kernel(), LaunchConfig::new(1, 32), || {
        let s = shared_u16(&KEY, 256);
        let lane = lane_id() as usize;
        for c in 0..8 {
            s.set(lane * 8 + c, (100 * lane + c) as u16);
        }
        crate::device::cpu::sync_warp(u32::MAX);
        let row = perm[lane] * 8;
        for (k, &(n, trans)) in cases.iter().enumerate() {
            let r: Vec<u32> = match (n, trans) {
                (1, false) => ldmatrix_x1(s, row).to_vec(),
                (2, false) => ldmatrix_x2(s, row).to_vec(),
                (4, false) => ldmatrix_x4(s, row).to_vec(),
                (1, true) => ldmatrix_x1_trans(s, row).to_vec(),
                (2, true) => ldmatrix_x2_trans(s, row).to_vec(),
                _ => ldmatrix_x4_trans(s, row).to_vec(),
            };
            for (j, v) in r.into_iter().enumerate() {
                got[(k * 32 + lane) * 4 + j].store(v, Relaxed);
            }
        }
    })?;
    // Matrix j's row r is the row lane 8j + r passed.
    let elem = |j: usize, r: usize, c: usize| (100 * perm[8 * j + r] + c) as u32;
    for (k, &(n, trans)) in cases.iter().enumerate() {
        for lane in 0..32 {
            let (g, t) = (lane / 4, lane % 4);
            for j in 0..n {
                let want = if trans {
                    elem(j, 2 * t, g) | elem(j, 2 * t + 1, g) << 16
                } else {
                    elem(j, g, 2 * t) | elem(j, g, 2 * t + 1) << 16
                };
                let v = got[(k * 32 + lane) * 4 + j].load(Relaxed);
                assert_eq!(v, want, "x{n} trans {trans}: lane {lane} register {j}");
            }
        }
    }
    Ok(())
}

#[test]
fn fragment_loaders_and_mma_multiply_tiles_from_shared_memory() -> TestResult {
    // A 16x32 row-major (ld 40), B 32x16 row-major (ld 24) and its transpose 16x32 (ld 40) in
    // shared memory; D (16 x 16) = A * B through the loaders, as two 16x8 halves.
    static KA: u8 = 0;
    static KB: u8 = 0;
    static KT: u8 = 0;
    let mut rng = Rng(99);
    let a: Vec<f32> = (0..16 * 32).map(|_| rng.small()).collect();
    let b: Vec<f32> = (0..32 * 16).map(|_| rng.small()).collect();
    let want: Vec<f32> =
        (0..256).map(|e| (0..32).map(|l| a[e / 16 * 32 + l] * b[l * 16 + e % 16]).sum::<f32>()).collect();
    let outs = [atomics(256), atomics(256), atomics(256)];
    cpu_launch(&kernel(), LaunchConfig::new(1, 64), || {
        let sa = __static_shared::<Bf16>(&KA as *const u8, 16 * 40);
        let sb = __static_shared::<Bf16>(&KB as *const u8, 32 * 24);
        let st = __static_shared::<Bf16>(&KT as *const u8, 16 * 40);
        let t = crate::device::cpu::thread_idx().x as usize;
        for e in (t..512).step_by(64) {
            sa.set(e / 32 * 40 + e % 32, Bf16::from_f32(a[e]));
            sb.set(e / 16 * 24 + e % 16, Bf16::from_f32(b[e]));
            st.set(e % 16 * 40 + e / 16, Bf16::from_f32(b[e])); // B^T[n][k] = B[k][n]
        }
        crate::device::cpu::sync_threads();
        if t >= 32 {
            return; // one warp computes; the other has left (not part of its collectives)
        }
        let lane = lane_id();
        let mut d = [[FragC::<f32, M16N8K16>::zero(); 2]; 3];
        for k0 in [0, 16] {
            let fa = FragA::load(sa, 40, 0, k0);
            let (b0, b1) = FragB::load_trans_pair(sb, 24, k0, 0);
            let pair = [b0, b1];
            let single = [FragB::load_trans(sb, 24, k0, 0), FragB::load_trans(sb, 24, k0, 8)];
            let nk = [FragB::load_nk(st, 40, k0, 0), FragB::load_nk(st, 40, k0, 8)];
            for h in 0..2 {
                d[0][h] = mma_sync(fa, pair[h], d[0][h]);
                d[1][h] = mma_sync(fa, single[h], d[1][h]);
                d[2][h] = mma_sync(fa, nk[h], d[2][h]);
            }
        }
        for (v, out) in outs.iter().enumerate() {
            for h in 0..2 {
                for i in 0..4 {
                    let (r, c) = FragC::<f32, M16N8K16>::coord(lane, i);
                    out[r * 16 + h * 8 + c].store(d[v][h].elems[i].to_bits(), Relaxed);
                }
            }
        }
    })?;
    for (v, out) in outs.iter().enumerate() {
        let got: Vec<u32> = out.iter().map(|x| x.load(Relaxed)).collect();
        for (e, (&g, &w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(f32::from_bits(g), w, "loader {v}: D[{}][{}]", e / 16, e % 16);
        }
    }
    Ok(())
}

#[test]
fn from_fn_builds_the_fragments_a_lane_holds() -> TestResult {
    let mut rng = Rng(5);
    let a: Vec<f32> = (0..256).map(|_| rng.small()).collect();
    let b: Vec<f32> = (0..128).map(|_| rng.small()).collect();
    let got = atomics(128);
    cpu_launch(&kernel(), LaunchConfig::new(1, 32), || {
        let fa = FragA::<F16, M16N8K16>::from_fn(|r, c| F16::from_f32(a[r * 16 + c]));
        let fb = FragB::<F16, M16N8K16>::from_fn(|r, c| F16::from_f32(b[r * 8 + c]));
        let fc = FragC::<f32, M16N8K16>::from_fn(|r, c| (r * 8 + c) as f32);
        let d = mma_sync(fa, fb, fc);
        for i in 0..4 {
            let (r, c) = FragC::<f32, M16N8K16>::coord(lane_id(), i);
            got[r * 8 + c].store(d.elems[i].to_bits(), Relaxed);
        }
    })?;
    let c: Vec<f32> = (0..128).map(|e| e as f32).collect();
    close(&got.iter().map(|v| v.load(Relaxed)).collect::<Vec<_>>(), &reference_f32(&a, &b, &c, 16));
    Ok(())
}

#[test]
fn mma_in_a_partial_warp_is_a_panic() {
    let r = cpu_launch(&kernel(), LaunchConfig::new(1, 16), || {
        let z = FragC::<f32, M16N8K16>::zero();
        let _ = mma_sync(FragA::<Bf16, M16N8K16>::from_regs([0; 4]), FragB::from_regs([0; 2]), z);
    });
    match r {
        Err(Error::KernelPanic { message, .. }) => {
            assert!(message.contains("all 32 lanes") && message.contains("mma.sync"), "{message}")
        }
        other => panic!("expected a kernel panic, got {other:?}"),
    }
}

#[test]
fn cp_async_completes_its_groups_at_the_wait_and_zero_fills() -> TestResult {
    static KEY: u8 = 0;
    let storage = Aligned(std::array::from_fn(|i| i as u32 + 1));
    let src = &storage.0[..10];
    let seen = atomics(64 * 5);
    cpu_launch(&kernel(), LaunchConfig::new(1, 64), || {
        let t = crate::device::cpu::thread_idx().x as usize;
        let s = __static_shared::<u32>(&KEY as *const u8, 64 * 8);
        let base = t * 8;
        for i in 0..8 {
            s.set(base + i, 7777);
        }
        // Group 1: src[8..12] (only 8 and 9 exist: 10 and 11 are zero-filled).
        cp_async::<u32, 4>(s, base, src, 8);
        cp_async_commit();
        // Group 2: src[t % 3 ..][..2], one 8-byte copy; then a 4-byte copy past the end.
        cp_async::<u32, 2>(s, base + 4, src, 2 * (t % 3));
        cp_async::<u32, 1>(s, base + 6, src, 1000);
        cp_async_commit();
        let untouched = s.get(base) == 7777 && s.get(base + 4) == 7777;
        cp_async_wait::<1>();
        let first = s.get(base) == 9 && s.get(base + 2) == 0 && s.get(base + 4) == 7777;
        cp_async_wait::<0>();
        let k = 2 * (t % 3);
        let second = s.get(base + 4) == src[k] && s.get(base + 5) == src[k + 1] && s.get(base + 6) == 0;
        seen[t * 5].store(untouched as u32, Relaxed);
        seen[t * 5 + 1].store(first as u32, Relaxed);
        seen[t * 5 + 2].store(second as u32, Relaxed);
        seen[t * 5 + 3].store(s.get(base + 1), Relaxed);
        seen[t * 5 + 4].store(s.get(base + 7), Relaxed);
    })?;
    for t in 0..64 {
        let v: Vec<u32> = (0..5).map(|i| seen[t * 5 + i].load(Relaxed)).collect();
        assert_eq!(v, [1, 1, 1, 10, 7777], "thread {t}");
    }
    Ok(())
}

#[test]
fn cp_async_out_of_bounds_and_misaligned_destinations_panic() {
    static KEY: u8 = 0;
    let src = Aligned([0u32; 16]);
    for (index, what) in [(6usize, "out of bounds"), (1, "aligned")] {
        let r = cpu_launch(&kernel(), LaunchConfig::new(1, 1), || {
            let s = __static_shared::<u32>(&KEY as *const u8, 8);
            cp_async::<u32, 4>(s, index, &src.0, 0);
        });
        match r {
            Err(Error::KernelPanic { message, .. }) => assert!(message.contains(what), "{message}"),
            other => panic!("expected a kernel panic, got {other:?}"),
        }
    }
}

#[test]
fn cp_async_writes_are_seen_by_the_race_check() {
    // Thread 1 reads thread 0's cp.async destination after the wait but without a barrier.
    static KEY: u8 = 0;
    let src = Aligned([5u32; 16]);
    let settings = super::checks::Settings { checks: true, watchdog: None };
    let r = super::launch(&kernel(), LaunchConfig::new(1, 64), settings, || {
        let t = crate::device::cpu::thread_idx().x;
        let s = __static_shared::<u32>(&KEY as *const u8, 4);
        if t == 0 {
            cp_async::<u32, 4>(s, 0, &src.0, 0);
            cp_async_commit();
            cp_async_wait::<0>();
        }
        crate::device::cpu::sync_warp(u32::MAX);
        if t == 32 {
            let _ = s.get(2);
        }
    });
    match r {
        Err(Error::CpuCheck { report, .. }) => {
            assert!(report.contains("cpu_tensor") || report.contains("tensor_tests"), "{report}")
        }
        other => panic!("expected a race report, got {other:?}"),
    }
}

#[test]
fn lanes_at_different_tensor_collectives_deadlock_instead_of_mixing_operands() {
    // Half the warp loads with ldmatrix while the other half multiplies: undefined on the GPU;
    // here the lanes never meet (a row address must not be read as a register, or back).
    static KEY: u8 = 0;
    let r = cpu_launch(&kernel(), LaunchConfig::new(1, 32), || {
        let s = shared_u16(&KEY, 256);
        if lane_id() < 16 {
            let _ = ldmatrix_x4(s, lane_id() as usize * 8);
        } else {
            let z = FragC::<f32, M16N8K16>::zero();
            let _ = mma_sync(FragA::<Bf16, M16N8K16>::from_regs([0; 4]), FragB::from_regs([0; 2]), z);
        }
    });
    match r {
        Err(Error::KernelPanic { message, .. }) => {
            assert!(message.contains("deadlock") && message.contains("ldmatrix.x4"), "{message}")
        }
        other => panic!("expected a deadlock report, got {other:?}"),
    }
}

#[test]
fn cp_async_matrix_copies_rows_and_zero_fills_outside_the_matrix() -> TestResult {
    static KEY: u8 = 0;
    // A 5 x 6 matrix of u32 (24-byte rows: 8-byte copies of 2 elements), element (r, c) = 10r + c + 1.
    #[repr(align(16))]
    struct Storage([u32; 30]);
    let storage = Storage(std::array::from_fn(|i| (10 * (i / 6) + i % 6 + 1) as u32));
    let seen = atomics(64 * 2);
    cpu_launch(&kernel(), LaunchConfig::new(1, 64), || {
        // SAFETY: the 30 elements of a 5 x 6 matrix live there, and nobody writes them.
        let m = unsafe { crate::device::Matrix::from_raw(storage.0.as_ptr(), 30, [6, 5]) };
        let t = crate::device::cpu::thread_idx().x as usize;
        let s = __static_shared::<u32>(&KEY as *const u8, 64 * 2);
        s.set(2 * t, 7777);
        s.set(2 * t + 1, 7777);
        // Thread t copies row t / 8 (rows 5.. are past the end), columns 2 * (t % 4)..+2 (6.. past it).
        let (r, c) = (t / 8, 2 * (t % 4));
        cp_async_matrix::<u32, 2>(s, 2 * t, m, r, c);
        cp_async_commit();
        cp_async_wait::<0>();
        seen[2 * t].store(s.get(2 * t), Relaxed);
        seen[2 * t + 1].store(s.get(2 * t + 1), Relaxed);
    })?;
    for t in 0..64 {
        let (r, c) = (t / 8, 2 * (t % 4));
        let want = |c: usize| if r < 5 && c < 6 { (10 * r + c + 1) as u32 } else { 0 };
        let got = [seen[2 * t].load(Relaxed), seen[2 * t + 1].load(Relaxed)];
        assert_eq!(got, [want(c), want(c + 1)], "thread {t}: row {r}, column {c}");
    }
    Ok(())
}

#[test]
fn cp_async_matrix_misaligned_rows_columns_and_destinations_panic() {
    static KEY: u8 = 0;
    let storage = Aligned([0u32; 16]);
    // (columns per row, column, destination index, what the panic names)
    for (cols, col, index, what) in [
        (6usize, 0usize, 0usize, "row length"),
        (4, 2, 0, "column"),
        (4, 0, 2, "destination"),
        (4, 0, 8, "out of bounds"),
    ] {
        let r = cpu_launch(&kernel(), LaunchConfig::new(1, 1), || {
            // SAFETY: 16 elements live there, 2 * cols <= 16, and nobody writes them.
            let m = unsafe { crate::device::Matrix::from_raw(storage.0.as_ptr(), 16, [cols, 2]) };
            let s = __static_shared::<u32>(&KEY as *const u8, 8);
            cp_async_matrix::<u32, 4>(s, index, m, 0, col);
        });
        match r {
            Err(Error::KernelPanic { message, .. }) => {
                assert!(message.contains(what), "{cols} {col} {index}: {message}")
            }
            other => panic!("expected a kernel panic, got {other:?}"),
        }
    }
}

#[test]
fn shared_slices_cast_to_wider_elements_and_refuse_misaligned_starts() {
    static KEY: u8 = 0;
    let r = cpu_launch(&kernel(), LaunchConfig::new(1, 1), || {
        let s = __static_shared::<u32>(&KEY as *const u8, 7);
        for i in 0..7 {
            s.set(i, i as u32 + 1);
        }
        let wide = s.cast::<u64>();
        assert_eq!(wide.len(), 3, "7 u32s hold 3 whole u64s");
        assert_eq!(wide.get(1), u64::from_le_bytes([3, 0, 0, 0, 4, 0, 0, 0]));
        wide.set(2, u64::MAX);
        assert_eq!((s.get(4), s.get(5), s.get(6)), (u32::MAX, u32::MAX, 7));
        // A view starting one u32 in is not 8-byte aligned.
        let (_, rest) = s.split_at(1);
        let _ = rest.cast::<u64>();
    });
    match r {
        Err(Error::KernelPanic { message, .. }) => assert!(message.contains("8-byte aligned"), "{message}"),
        other => panic!("expected a kernel panic, got {other:?}"),
    }
}

#[test]
fn fragment_rows_and_columns_load_what_single_loads_do_and_check_their_last_row() -> TestResult {
    // A: 32 x 16 (ld 16), B: 16 x 32 (ld 32), element value = index; both views fit exactly.
    static KA: u8 = 0;
    static KB: u8 = 0;
    let same = atomics(32);
    cpu_launch(&kernel(), LaunchConfig::new(1, 32), || {
        let sa = __static_shared::<Bf16>(&KA as *const u8, 32 * 16);
        let sb = __static_shared::<Bf16>(&KB as *const u8, 16 * 32);
        let t = crate::device::cpu::thread_idx().x as usize;
        for e in (t..512).step_by(32) {
            sa.set(e, Bf16::from_f32(e as f32));
            sb.set(e, Bf16::from_f32(-(e as f32)));
        }
        crate::device::cpu::sync_warp(u32::MAX);
        let col = FragA::load_column::<2>(sa, 16, 0, 0);
        let singles = [FragA::load(sa, 16, 0, 0), FragA::load(sa, 16, 16, 0)];
        let row = FragB::load_trans_row::<4>(sb, 32, 0, 0);
        let b_singles: [FragB<Bf16, M16N8K16>; 4] = core::array::from_fn(|j| FragB::load_trans(sb, 32, 0, 8 * j));
        let ok =
            (0..2).all(|i| col[i].regs() == singles[i].regs()) && (0..4).all(|j| row[j].regs() == b_singles[j].regs());
        same[t].store(ok as u32, Relaxed);
    })?;
    assert!(same.iter().all(|x| x.load(Relaxed) == 1), "loaders disagree with single loads");
    // One row short: the second block's last row is out of bounds.
    let r = cpu_launch(&kernel(), LaunchConfig::new(1, 32), || {
        let sa = __static_shared::<Bf16>(&KA as *const u8, 32 * 16);
        let _ = FragA::load_column::<2>(sa.split_at(31 * 16).0, 16, 0, 0);
    });
    match r {
        Err(Error::KernelPanic { message, .. }) => assert!(message.contains("out of bounds"), "{message}"),
        other => panic!("expected a kernel panic, got {other:?}"),
    }
    Ok(())
}

#[test]
fn mma_sync_tile_equals_the_loaders_and_the_grid() -> TestResult {
    // A: 32 x 16 (ld 24), B: 16 x 32 (ld 40), small exact values; D = A * B as a 2 x 4 tile of
    // 16 x 8 blocks, once through `mma_sync_tile`, once through the loaders and `mma_sync_grid`.
    static KA: u8 = 0;
    static KB: u8 = 0;
    let mut rng = Rng(7);
    let a: Vec<f32> = (0..32 * 16).map(|_| rng.small()).collect();
    let b: Vec<f32> = (0..16 * 32).map(|_| rng.small()).collect();
    let same = atomics(32);
    cpu_launch(&kernel(), LaunchConfig::new(1, 32), || {
        let sa = __static_shared::<Bf16>(&KA as *const u8, 32 * 24);
        let sb = __static_shared::<Bf16>(&KB as *const u8, 16 * 40);
        let t = crate::device::cpu::thread_idx().x as usize;
        for e in (t..512).step_by(32) {
            sa.set(e / 16 * 24 + e % 16, Bf16::from_f32(a[e]));
            sb.set(e / 32 * 40 + e % 32, Bf16::from_f32(b[e]));
        }
        crate::device::cpu::sync_warp(u32::MAX);
        let start: [[FragC<f32, M16N8K16>; 4]; 2] =
            core::array::from_fn(|i| core::array::from_fn(|j| FragC::new([(i * 4 + j) as f32; 4])));
        let mut tile = start;
        mma_sync_tile(sa, 24, (0, 0), sb, 40, (0, 0), &mut tile);
        let mut grid = start;
        let fa = FragA::load_column::<2>(sa, 24, 0, 0);
        let fb = FragB::load_trans_row::<4>(sb, 40, 0, 0);
        mma_sync_grid(&fa, &fb, &mut grid);
        let ok = (0..2).all(|i| (0..4).all(|j| tile[i][j].elems == grid[i][j].elems))
            && tile[1][3].elems != start[1][3].elems;
        same[t].store(ok as u32, Relaxed);
    })?;
    assert!(same.iter().all(|x| x.load(Relaxed) == 1), "mma_sync_tile differs from the loaders and mma_sync_grid");
    Ok(())
}
