//! One kernel per operation of `oxide_rt::device::tensor`, each block one warp working on its
//! own random problem. Fragments are built with `from_fn` (the PTX layouts) or loaded with
//! `ldmatrix`, and each lane writes its four D elements `c0..c3` in order, so the host gathers
//! D with `FragC::coord`.
use oxide_rt::device::tensor::*;
use oxide_rt::device::*;

/// Problem `b` (block `b`): `a` 16 x 16, `b` 16 x 8, `c` 16 x 8, all row-major.
#[kernel(block(32))]
pub fn mma_bf16(a: &[Bf16], b: &[Bf16], c: &[f32], mut d: DisjointChunks<f32, 4>) {
    let p = thread::block_idx().x as usize;
    let fa = FragA::<Bf16, M16N8K16>::from_fn(|r, k| a[p * 256 + r * 16 + k]);
    let fb = FragB::<Bf16, M16N8K16>::from_fn(|k, n| b[p * 128 + k * 8 + n]);
    let fc = FragC::<f32, M16N8K16>::from_fn(|r, n| c[p * 128 + r * 8 + n]);
    if let Some(out) = d.get_mut(thread::index()) {
        *out = mma_sync(fa, fb, fc).elems;
    }
}

/// As [`mma_bf16`] with f16 inputs.
#[kernel(block(32))]
pub fn mma_f16(a: &[F16], b: &[F16], c: &[f32], mut d: DisjointChunks<f32, 4>) {
    let p = thread::block_idx().x as usize;
    let fa = FragA::<F16, M16N8K16>::from_fn(|r, k| a[p * 256 + r * 16 + k]);
    let fb = FragB::<F16, M16N8K16>::from_fn(|k, n| b[p * 128 + k * 8 + n]);
    let fc = FragC::<f32, M16N8K16>::from_fn(|r, n| c[p * 128 + r * 8 + n]);
    if let Some(out) = d.get_mut(thread::index()) {
        *out = mma_sync(fa, fb, fc).elems;
    }
}

/// Problem `b`: `a` 16 x 8, `b` 8 x 8 (f32, rounded to TF32 here), `c` 16 x 8.
#[kernel(block(32))]
pub fn mma_tf32(a: &[f32], b: &[f32], c: &[f32], mut d: DisjointChunks<f32, 4>) {
    let p = thread::block_idx().x as usize;
    let fa = FragA::<Tf32, M16N8K8>::from_fn(|r, k| Tf32::from_f32(a[p * 128 + r * 8 + k]));
    let fb = FragB::<Tf32, M16N8K8>::from_fn(|k, n| Tf32::from_f32(b[p * 64 + k * 8 + n]));
    let fc = FragC::<f32, M16N8K8>::from_fn(|r, n| c[p * 128 + r * 8 + n]);
    if let Some(out) = d.get_mut(thread::index()) {
        *out = mma_sync(fa, fb, fc).elems;
    }
}

/// Problem `b`: `a` 16 x 32, `b` 32 x 8 (s8), `c` 16 x 8 (s32).
#[kernel(block(32))]
pub fn mma_s8(a: &[i8], b: &[i8], c: &[i32], mut d: DisjointChunks<i32, 4>) {
    let p = thread::block_idx().x as usize;
    let fa = FragA::<i8, M16N8K32>::from_fn(|r, k| a[p * 512 + r * 32 + k]);
    let fb = FragB::<i8, M16N8K32>::from_fn(|k, n| b[p * 256 + k * 8 + n]);
    let fc = FragC::<i32, M16N8K32>::from_fn(|r, n| c[p * 128 + r * 8 + n]);
    if let Some(out) = d.get_mut(thread::index()) {
        *out = mma_sync(fa, fb, fc).elems;
    }
}

/// 32 rows of 8 `u16` (`rows`, row-major) in shared memory; lane `l` passes row `perm[l]` to
/// every `ldmatrix` form and writes the registers: x1, x2, x4, x1.trans, x2.trans, x4.trans.
#[kernel(block(32))]
pub fn ldmatrix_all(rows: &[u16], perm: &[u32], mut out: DisjointChunks<u32, 14>) {
    let s = shared_array!(u16, 256);
    let l = thread::lane_id() as usize;
    for c in 0..8 {
        s.set(l * 8 + c, rows[l * 8 + c]);
    }
    sync_warp(FULL_MASK);
    let row = perm[l] as usize * 8;
    let (a, b, c) = (ldmatrix_x1(s, row), ldmatrix_x2(s, row), ldmatrix_x4(s, row));
    let (d, e, f) = (ldmatrix_x1_trans(s, row), ldmatrix_x2_trans(s, row), ldmatrix_x4_trans(s, row));
    if let Some(o) = out.get_mut(thread::index()) {
        *o = [a[0], b[0], b[1], c[0], c[1], c[2], c[3], d[0], e[0], e[1], f[0], f[1], f[2], f[3]];
    }
}

/// `a` (16 x 32) times `b` (32 x 16), both row-major bf16, through shared memory and each B
/// loader: `load_trans_pair`, `load_trans`, `load_nk` (from B transposed), and the tile
/// loaders `FragA::load_column` with `FragB::load_trans_row` into `mma_sync_grid`. Lane `l`
/// writes 32 values: for each loader, for each 8-column half, its four D elements.
#[kernel(block(32))]
pub fn loaders(a: &[Bf16], b: &[Bf16], mut out: DisjointChunks<f32, 32>) {
    let sa = shared_array!(Bf16, 16 * 40); // padded rows (80 bytes): still 16-byte aligned
    let sb = shared_array!(Bf16, 32 * 24);
    let st = shared_array!(Bf16, 16 * 40);
    let l = thread::lane_id() as usize;
    for e in (l..512).step_by(32) {
        sa.set(e / 32 * 40 + e % 32, a[e]);
        sb.set(e / 16 * 24 + e % 16, b[e]);
        st.set(e % 16 * 40 + e / 16, b[e]);
    }
    sync_warp(FULL_MASK);
    let mut d = [[FragC::<f32, M16N8K16>::zero(); 2]; 4];
    for k0 in [0, 16] {
        let tile = FragB::load_trans_row::<2>(sb, 24, k0, 0);
        mma_sync_grid(&FragA::load_column::<1>(sa, 40, 0, k0), &tile, core::array::from_mut(&mut d[3]));
        let fa = FragA::load(sa, 40, 0, k0);
        let (p0, p1) = FragB::load_trans_pair(sb, 24, k0, 0);
        let single = [FragB::load_trans(sb, 24, k0, 0), FragB::load_trans(sb, 24, k0, 8)];
        let nk = [FragB::load_nk(st, 40, k0, 0), FragB::load_nk(st, 40, k0, 8)];
        let pair = [p0, p1];
        for h in 0..2 {
            d[0][h] = mma_sync(fa, pair[h], d[0][h]);
            d[1][h] = mma_sync(fa, single[h], d[1][h]);
            d[2][h] = mma_sync(fa, nk[h], d[2][h]);
        }
    }
    if let Some(o) = out.get_mut(thread::index()) {
        for v in 0..4 {
            for h in 0..2 {
                for i in 0..4 {
                    o[v * 8 + h * 4 + i] = d[v][h].elems[i];
                }
            }
        }
    }
}

/// Thread `t` of a 64-thread block: group 1 copies `src[8..12]` (zero-filled past `src`'s
/// end) with 16 bytes, group 2 `src[2(t % 3)..][..2]` with 8 bytes and one 4-byte copy from
/// past the end; it records what its destination holds after `wait::<1>` and `wait::<0>`.
#[kernel(block(64))]
pub fn cp_async_groups(src: &[u32], mut out: DisjointChunks<u32, 8>) {
    let s = shared_array!(u32, 64 * 8);
    let t = thread::thread_rank() as usize;
    let base = t * 8;
    for i in 0..8 {
        s.set(base + i, 7777);
    }
    cp_async::<u32, 4>(s, base, src, 8);
    cp_async_commit();
    cp_async::<u32, 2>(s, base + 4, src, 2 * (t % 3));
    cp_async::<u32, 1>(s, base + 6, src, 1000);
    cp_async_commit();
    cp_async_wait::<1>();
    let first = [s.get(base), s.get(base + 1), s.get(base + 2), s.get(base + 3)];
    cp_async_wait::<0>();
    if let Some(o) = out.get_mut(thread::index()) {
        *o = [
            first[0],
            first[1],
            first[2],
            first[3],
            s.get(base + 4),
            s.get(base + 5),
            s.get(base + 6),
            s.get(base + 7),
        ];
    }
}

/// `mma_sync` and `ldmatrix_x1` called only by the lanes below `split` (a run-time value).
/// `split = 32` keeps the warp whole and lane `l` writes its D fragment of `a * b` and its
/// `ldmatrix` register; any other `split` leaves lanes out of both `.aligned` collectives,
/// which PTX leaves undefined: the GPU and the CPU executor both panic instead.
#[kernel(block(32))]
pub fn mma_split(a: &[Bf16], b: &[Bf16], rows: &[u16], split: u32, mut out: DisjointChunks<u32, 5>) {
    let s = shared_array!(u16, 256);
    let l = thread::lane_id() as usize;
    for c in 0..8 {
        s.set(l * 8 + c, rows[l * 8 + c]);
    }
    sync_warp(FULL_MASK);
    let fa = FragA::<Bf16, M16N8K16>::from_fn(|r, k| a[r * 16 + k]);
    let fb = FragB::<Bf16, M16N8K16>::from_fn(|k, n| b[k * 8 + n]);
    if thread::lane_id() < split {
        let d = mma_sync(fa, fb, FragC::zero()).elems;
        let m = ldmatrix_x1(s, l * 8);
        if let Some(o) = out.get_mut(thread::index()) {
            *o = [d[0].to_bits(), d[1].to_bits(), d[2].to_bits(), d[3].to_bits(), m[0]];
        }
    }
}

/// [`mma_sync_grid`] on a 2 x 2 tile of fragments, A's second row `-a` and B's second column
/// `2b` (both exact in bf16), called only by the lanes below `split`: with the whole warp,
/// lane `l` writes its four D fragments (tile order); a partial warp panics, on the GPU too.
#[kernel(block(32))]
pub fn mma_grid_split(a: &[Bf16], b: &[Bf16], split: u32, mut out: DisjointChunks<u32, 16>) {
    let fa = |s: f32| FragA::<Bf16, M16N8K16>::from_fn(|r, k| Bf16::from_f32(s * a[r * 16 + k].to_f32()));
    let fb = |s: f32| FragB::<Bf16, M16N8K16>::from_fn(|k, n| Bf16::from_f32(s * b[k * 8 + n].to_f32()));
    let (fas, fbs) = ([fa(1.0), fa(-1.0)], [fb(1.0), fb(2.0)]);
    if thread::lane_id() < split {
        let mut acc = [[FragC::zero(); 2]; 2];
        mma_sync_grid(&fas, &fbs, &mut acc);
        if let Some(o) = out.get_mut(thread::index()) {
            *o = core::array::from_fn(|i| acc[i / 8][i / 4 % 2].elems[i % 4].to_bits());
        }
    }
}
