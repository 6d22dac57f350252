//! Kernels written as a new user would (a fuzz of the pipeline, 2026-12-02), kept as written:
//! compiled for the host (launchers, CPU executor) and for nvptx64. The lints allowed below are
//! the user's style the corpus keeps (index loops over private arrays are what
//! `ir/private_array_loops.rs` must handle).
#![allow(
    clippy::needless_range_loop,
    clippy::manual_is_multiple_of,
    clippy::manual_saturating_arithmetic,
    clippy::while_let_on_iterator
)]
use oxide_rt::device::atomic::AtomicU32;
use oxide_rt::device::*;
use oxide_rt::KernelArg;

// ---------------------------------------------------------------------------------------------
// 1. Inclusive prefix max per warp (shfl_up), i32.
#[kernel(dims = 1)]
pub fn warp_prefix_max(x: &[i32], mut out: DisjointSlice<i32>) {
    let i = thread::index_1d();
    let lane = thread::lane_id();
    let mut v = x.get(i.get()).copied().unwrap_or(i32::MIN);
    let mut d = 1u32;
    while d < WARP_SIZE {
        let t = warp::shfl_up_sync(FULL_MASK, v, d, 32);
        if lane >= d {
            v = v.max(t);
        }
        d <<= 1;
    }
    if let Some(o) = out.get_mut(i) {
        *o = v;
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Transpose through a padded shared tile, one element per thread, 32x32 block.
pub const T: usize = 32;
#[kernel(dims = 2, block(32, 32))]
pub fn transpose_padded(input: Matrix<f32>, mut out: DisjointSlice2d<f32>) {
    let tile = shared_array!(f32, T, T + 1);
    let tx = thread::thread_idx().x as usize;
    let ty = thread::thread_idx().y as usize;
    let bx = thread::block_idx().x as usize;
    let by = thread::block_idx().y as usize;
    // out tile at rows by*T, cols bx*T is the transpose of input tile at rows bx*T, cols by*T.
    let v = input.get(bx * T + ty, by * T + tx).copied().unwrap_or(0.0);
    tile.set(ty, tx, v);
    sync_threads();
    if let Some(o) = out.get_mut() {
        *o = tile.get(tx, ty);
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Histogram of u8 data into 64 bins (v >> 2): shared atomics, then global atomics.
pub const HBINS: usize = 64;
#[kernel(dims = 1, launch_bounds(256))]
pub fn hist_u8(data: &[u8], hist: &[AtomicU32]) {
    let bins = shared_array!(u32, HBINS);
    let t = thread::thread_idx().x as usize;
    let nt = thread::block_dim().x as usize;
    for b in (t..HBINS).step_by(nt) {
        bins.set(b, 0);
    }
    sync_threads();
    let stride = thread::grid_dim().x as usize * nt;
    for &byte in data.iter().skip(thread::global_x()).step_by(stride) {
        bins.atomic((byte >> 2) as usize).atomic_add(1, Scope::Block);
    }
    sync_threads();
    for b in (t..HBINS).step_by(nt) {
        let c = bins.get(b);
        if c == 0 {
            continue;
        }
        if let Some(h) = hist.get(b) {
            h.atomic_add(c, Scope::Device);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Private array indexed by a loop variable: 4 power sums over a window.
#[kernel(dims = 1)]
pub fn power_sums(x: &[f32], window: u32, mut out: DisjointChunks<f32, 4>) {
    let i = thread::index_1d();
    let start = i.get();
    let mut acc = [0f32; 4];
    for j in 0..window as usize {
        let Some(&v) = x.get(start + j) else { break };
        let mut p = 1.0f32;
        for k in 0..4 {
            p *= v;
            acc[k] += p;
        }
        // dynamic index: rotate a bonus into one slot
        acc[j % 4] += 0.5;
    }
    if let Some(o) = out.get_mut(i) {
        *o = acc;
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Tiny stack interpreter: match on u8 opcodes.
pub const OP_PUSH: u8 = 0;
pub const OP_ADD: u8 = 1;
pub const OP_MUL: u8 = 2;
pub const OP_DUP: u8 = 3;
pub const OP_SWAP: u8 = 4;
pub const OP_JZ: u8 = 5;
pub const OP_DEC: u8 = 6;
pub const OP_LOADX: u8 = 7;
pub const OP_HALT: u8 = 8;
pub const OP_JMP: u8 = 9;
pub const OP_DROP: u8 = 10;

#[inline]
pub fn interpret(prog: &[u8], x: i32, max_steps: u32) -> i32 {
    let mut stack = [0i32; 8];
    let mut sp = 0usize;
    let mut pc = 0usize;
    let mut steps = 0u32;
    while let Some(&op) = prog.get(pc) {
        steps += 1;
        if steps > max_steps {
            return -2;
        }
        pc += 1;
        match op {
            OP_PUSH => {
                let Some(&c) = prog.get(pc) else { return -1 };
                pc += 1;
                if sp >= stack.len() {
                    return -1;
                }
                stack[sp] = c as i8 as i32;
                sp += 1;
            }
            OP_LOADX => {
                if sp >= stack.len() {
                    return -1;
                }
                stack[sp] = x;
                sp += 1;
            }
            OP_ADD | OP_MUL => {
                if sp < 2 {
                    return -1;
                }
                let b = stack[sp - 1];
                let a = stack[sp - 2];
                sp -= 1;
                stack[sp - 1] = if op == OP_ADD { a.wrapping_add(b) } else { a.wrapping_mul(b) };
            }
            OP_DUP => {
                if sp == 0 || sp >= stack.len() {
                    return -1;
                }
                stack[sp] = stack[sp - 1];
                sp += 1;
            }
            OP_SWAP => {
                if sp < 2 {
                    return -1;
                }
                stack.swap(sp - 1, sp - 2);
            }
            OP_DEC => match sp.checked_sub(1) {
                Some(t) => stack[t] = stack[t].wrapping_sub(1),
                None => return -1,
            },
            OP_DROP => {
                let Some(t) = sp.checked_sub(1) else { return -1 };
                sp = t;
            }
            OP_JZ | OP_JMP => {
                let Some(&target) = prog.get(pc) else { return -1 };
                pc += 1;
                if op == OP_JMP {
                    pc = target as usize;
                } else {
                    let Some(t) = sp.checked_sub(1) else { return -1 };
                    if stack[t] == 0 {
                        pc = target as usize;
                    }
                }
            }
            OP_HALT => break,
            _ => return -3,
        }
    }
    if sp == 0 {
        -1
    } else {
        stack[sp - 1]
    }
}

#[kernel(dims = 1)]
pub fn interp(prog: &[u8], xs: &[i32], max_steps: u32, mut out: DisjointSlice<i32>) {
    let i = thread::index_1d();
    let Some(&x) = xs.get(i.get()) else { return };
    if let Some(o) = out.get_mut(i) {
        *o = interpret(prog, x, max_steps);
    }
}

// ---------------------------------------------------------------------------------------------
// 6. Iterator chains: circular correlation via zip/cycle/skip, windows, chunks, enumerate/fold.
#[kernel(dims = 1)]
pub fn iter_chains(a: &[f32], b: &[f32], mut corr: DisjointSlice<f32>, mut win: DisjointSlice<f32>) {
    let i = thread::index_1d();
    let n = b.len();
    if n == 0 {
        return;
    }
    if let Some(o) = corr.get_mut(i) {
        *o = a.iter().zip(b.iter().cycle().skip(i.get() % n)).map(|(x, y)| x * y).fold(0.0, |s, v| s + v);
    }
    if let Some(o) = win.get_mut(i) {
        let w = a.windows(3).nth(i.get()).map(|w| w.iter().copied().fold(f32::MIN, f32::max)).unwrap_or(-1.0);
        let c: f32 =
            a.chunks(4).enumerate().filter(|(k, _)| k % 2 == i.get() % 2).map(|(_, ch)| ch.iter().sum::<f32>()).sum();
        *o = w + c;
    }
}

// ---------------------------------------------------------------------------------------------
// 7. Generic kernel via instantiate, with a generic helper.
#[inline]
fn lerp_clamped<F: Float>(a: F, b: F, t: F, lo: F, hi: F) -> F {
    let t = if t < lo {
        lo
    } else if t > hi {
        hi
    } else {
        t
    };
    a + (b - a) * t
}

#[kernel(dims = 1, instantiate(f32, f64))]
pub fn lerp<F: Float + KernelArg>(a: &[F], b: &[F], t: &[F], lo: F, hi: F, mut out: DisjointSlice<F>) {
    let i = thread::index_1d();
    let k = i.get();
    if let (Some(o), Some(&x), Some(&y), Some(&s)) = (out.get_mut(i), a.get(k), b.get(k), t.get(k)) {
        *o = lerp_clamped(x, y, s, lo, hi);
    }
}

// ---------------------------------------------------------------------------------------------
// 8. u64 hashing.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[inline]
pub fn hash_words(words: &[u64], seed: u64) -> u64 {
    let mut h = seed ^ 0x9e37_79b9_7f4a_7c15;
    for (k, &w) in words.iter().enumerate() {
        h = h.rotate_left(27).wrapping_mul(5).wrapping_add(0x52dc_e729);
        h ^= mix64(w.wrapping_add(k as u64));
        h = h.rotate_right((w & 63) as u32);
    }
    mix64(h ^ words.len() as u64)
}

#[kernel(dims = 1)]
pub fn hash64(keys: &[u64], per: u32, seed: u64, mut out: DisjointSlice<u64>) {
    let i = thread::index_1d();
    let per = per as usize;
    let start = i.get() * per;
    let Some(ws) = keys.get(start..start + per) else { return };
    if let Some(o) = out.get_mut(i) {
        *o = hash_words(ws, seed);
    }
}

// ---------------------------------------------------------------------------------------------
// 9. f64 math.
#[kernel(dims = 1)]
pub fn f64_math(x: &[f64], mut out: DisjointChunks<f64, 4>) {
    let i = thread::index_1d();
    let Some(&v) = x.get(i.get()) else { return };
    let a = math::exp(-v * v / 2.0);
    let b = math::log(1.0 + v.abs());
    let c = math::pow(v.abs() + 0.5, 1.5);
    let d = math::sqrt(a + b + c);
    if let Some(o) = out.get_mut(i) {
        *o = [a, b, c, d];
    }
}

// ---------------------------------------------------------------------------------------------
// 10. Saturating / checked integer ops on u8/u16.
#[kernel(dims = 1)]
pub fn sat_ops(px: &[u8], gain: u16, bias: i16, mut out8: DisjointSlice<u8>, mut out16: DisjointSlice<u16>) {
    let i = thread::index_1d();
    let Some(&p) = px.get(i.get()) else { return };
    let scaled = (p as u16).checked_mul(gain).unwrap_or(u16::MAX);
    let biased =
        if bias >= 0 { scaled.saturating_add(bias as u16) } else { scaled.saturating_sub(bias.unsigned_abs()) };
    if let Some(o) = out16.get_mut(i) {
        *o = biased;
    }
    if let Some(o) = out8.get_mut(i) {
        *o = u8::try_from(biased >> 2).unwrap_or(u8::MAX).saturating_add(p / 16);
    }
}

// ---------------------------------------------------------------------------------------------
// 11. i32 offsets converted with usize::try_from / checked_sub: 5-point stencil, zero outside.
pub const TAPS: [(i32, f32); 5] = [(-2, 0.1), (-1, 0.2), (0, 0.4), (1, 0.2), (2, 0.1)];
#[kernel(dims = 1)]
pub fn stencil_i32(x: &[f32], shift: i32, mut out: DisjointSlice<f32>) {
    let i = thread::index_1d();
    let Ok(base) = i32::try_from(i.get()) else { return };
    let mut s = 0.0;
    for &(off, w) in TAPS.iter() {
        let Some(j) = base.checked_add(off).and_then(|v| v.checked_add(shift)) else { continue };
        let Ok(j) = usize::try_from(j) else { continue };
        if let Some(&v) = x.get(j) {
            s += w * v;
        }
    }
    // reflect left neighbour via checked_sub
    let left = i.get().checked_sub(1).and_then(|k| x.get(k)).copied().unwrap_or(0.0);
    if let Some(o) = out.get_mut(i) {
        *o = s + left * 0.01;
    }
}

// ---------------------------------------------------------------------------------------------
// 12. 3-D launch with early return.
#[kernel(dims = 3)]
pub fn vol_grad(v: &[f32], nx: u32, ny: u32, nz: u32, mut out: DisjointSlice3d<f32>) {
    let (x, y, z) = thread::index_3d();
    let (nx, ny, nz) = (nx as usize, ny as usize, nz as usize);
    if x >= nx || y >= ny || z >= nz {
        return;
    }
    let at = |x: usize, y: usize, z: usize| v.get((z * ny + y) * nx + x).copied().unwrap_or(0.0);
    let c = at(x, y, z);
    let gx = if x + 1 < nx { at(x + 1, y, z) - c } else { 0.0 };
    let gy = if y + 1 < ny { at(x, y + 1, z) - c } else { 0.0 };
    let gz = if z + 1 < nz { at(x, y, z + 1) - c } else { 0.0 };
    let Some(o) = out.get_mut() else { return };
    *o = gx * gx + gy * gy + gz * gz;
}

// ---------------------------------------------------------------------------------------------
// 13. u16 chunks: unpack u64 into four u16 with a byte swap.
#[kernel(dims = 1)]
pub fn unpack_u16(words: &[u64], mut out: DisjointChunks<u16, 4>) {
    let i = thread::index_1d();
    let Some(&w) = words.get(i.get()) else { return };
    let Some(o) = out.get_mut(i) else { return };
    for (k, slot) in o.iter_mut().enumerate() {
        *slot = ((w >> (16 * k)) as u16).swap_bytes();
    }
}

// ---------------------------------------------------------------------------------------------
// 14. DisjointRows: normalise each row by its max abs (f64), block reduction in shared memory.
pub const RB: u32 = 128;
#[kernel(dims = 1, block(RB))]
pub fn row_norm_f64(x: &[f64], mut y: DisjointRows<f64>) {
    let red = shared_array!(f64, RB as usize);
    let cols = y.cols();
    let start = y.row() * cols;
    let t = thread::thread_idx().x as usize;
    let Some(row) = x.get(start..start + cols) else { return };
    let mut m = 0.0f64;
    for v in row.iter().skip(t).step_by(RB as usize) {
        m = m.max(v.abs());
    }
    red.set(t, m);
    sync_threads();
    let mut s = RB as usize / 2;
    while s > 0 {
        if t < s {
            let o = red.get(t + s);
            let me = red.get(t);
            red.set(t, if o > me { o } else { me });
        }
        sync_threads();
        s /= 2;
    }
    let mx = red.get(0);
    let inv = if mx > 0.0 { 1.0 / mx } else { 0.0 };
    for (c, o) in y.iter_mut() {
        *o = row[c] * inv;
    }
}

// ---------------------------------------------------------------------------------------------
// 15. DisjointStrided<f32, 4>: N per thread, interleaved in the block.
#[kernel(dims = 1)]
pub fn strided_scale(x: &[f32], a: f32, mut out: DisjointStrided<f32, 4>) {
    for k in 0..4 {
        let Some(idx) = out.index(k) else { continue };
        let v = x.get(idx).copied().unwrap_or(0.0);
        if let Some(o) = out.get_mut(k) {
            *o = a * v + k as f32;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 16. DisjointPerWarp: ballot + popc of a predicate; lane 0 writes.
#[kernel(dims = 1)]
pub fn warp_count_neg(x: &[i32], mut out: DisjointPerWarp<u32>) {
    let i = thread::index_1d().get();
    let neg = x.get(i).is_some_and(|&v| v < 0);
    let ballot = warp::ballot_sync(FULL_MASK, neg);
    if let Some(o) = out.get_mut() {
        *o = warp::popc(ballot);
    }
}

// ---------------------------------------------------------------------------------------------
// 17. DisjointPerBlock: sync_threads_count.
#[kernel(dims = 1)]
pub fn block_count_even(x: &[u32], mut out: DisjointPerBlock<u32>) {
    let i = thread::index_1d().get();
    let even = x.get(i).is_some_and(|v| v % 2 == 0);
    let c = sync_threads_count(even);
    if let Some(o) = out.get_mut() {
        *o = c;
    }
}

// ---------------------------------------------------------------------------------------------
// 18. Bitonic step on i32 with a direction from k.
#[kernel(dims = 1)]
pub fn bitonic_i32(k: u32, mut a: DisjointXorPairs<i32>) {
    let Some((lo, _)) = a.indices() else { return };
    let up = (lo & k as usize) == 0;
    if let Some((x, y)) = a.pair_mut() {
        if (*x > *y) == up {
            core::mem::swap(x, y);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 19. DisjointAppend: compaction of primes, trial division with break/continue and labels.
#[inline]
fn is_prime(n: u32) -> bool {
    if n < 2 {
        return false;
    }
    let mut d = 2u32;
    'outer: loop {
        if d.saturating_mul(d) > n {
            break 'outer true;
        }
        if n % d == 0 {
            break false;
        }
        d += if d == 2 { 1 } else { 2 };
    }
}

#[kernel(dims = 1)]
pub fn primes(x: &[u32], mut out: DisjointAppend<u32>) {
    let i = thread::index_1d().get();
    let Some(&v) = x.get(i) else { return };
    if is_prime(v) {
        let _ = out.push(v);
    }
}

// ---------------------------------------------------------------------------------------------
// 20. repr(C) struct with padding (u8, u16, f32, f64) and Mandelbrot with u8 output.
#[derive(Clone, Copy, KernelArg)]
#[repr(C)]
pub struct View {
    pub max_iter: u8,
    pub flags: u16,
    pub scale: f32,
    pub cx: f64,
    pub cy: f64,
}

#[kernel(dims = 2)]
pub fn mandel(v: View, mut out: DisjointSlice2d<u8>) {
    let (px, py) = thread::index_2d();
    let cols = out.cols();
    let rows = out.rows();
    if px >= cols || py >= rows {
        return;
    }
    let cr = v.cx + (px as f64 - cols as f64 / 2.0) * v.scale as f64;
    let ci = v.cy + (py as f64 - rows as f64 / 2.0) * v.scale as f64;
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
    if v.flags & 1 != 0 {
        n = v.max_iter - n;
    }
    if let Some(o) = out.get_mut() {
        *o = n;
    }
}

// ---------------------------------------------------------------------------------------------
// 21. Butterflies: Haar step (sum, diff) on f32.
#[kernel(dims = 1)]
pub fn haar_step(mut a: DisjointButterflies<f32>) {
    if let Some((x, y)) = a.pair_mut() {
        let (s, d) = (*x + *y, *x - *y);
        *x = s * core::f32::consts::FRAC_1_SQRT_2;
        *y = d * core::f32::consts::FRAC_1_SQRT_2;
    }
}

// ---------------------------------------------------------------------------------------------
// 22. CRC32 with a const table built by a const fn.
const fn crc_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}
pub static CRC_TABLE: [u32; 256] = crc_table();

pub fn crc32(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c = CRC_TABLE[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

#[kernel(dims = 1)]
pub fn crc_chunks(data: &[u8], chunk: u32, mut out: DisjointSlice<u32>) {
    let i = thread::index_1d();
    let Some(bytes) = data.chunks(chunk.max(1) as usize).nth(i.get()) else { return };
    if let Some(o) = out.get_mut(i) {
        *o = crc32(bytes);
    }
}

// ---------------------------------------------------------------------------------------------
// 23. Nested closures and dynamic shared memory: block-local smoothing.
#[kernel(dims = 1)]
pub fn smooth_dyn(x: &[f32], mut out: DisjointSlice<f32>) {
    let buf = dynamic_shared::<f32>();
    let t = thread::thread_idx().x as usize;
    let i = thread::index_1d();
    let nb = thread::block_dim().x as usize;
    let v = x.get(i.get()).copied().unwrap_or(0.0);
    buf.set(t, v);
    sync_threads();
    let read = |k: isize| -> f32 {
        let clamp = |k: isize| k.clamp(0, nb as isize - 1) as usize;
        buf.get(clamp(t as isize + k))
    };
    let weight = |k: isize| 1.0 / (1.0 + (k * k) as f32);
    let s: f32 = (-2isize..=2).map(|k| read(k) * weight(k)).sum();
    let w: f32 = (-2isize..=2).map(weight).sum();
    if let Some(o) = out.get_mut(i) {
        *o = s / w;
    }
}

// ---------------------------------------------------------------------------------------------
// 24. Warp reduce with shfl_xor on u64 and f64, and any/all votes.
#[kernel(dims = 1)]
pub fn warp_u64_stats(x: &[u64], mut sum: DisjointPerWarp<u64>, mut flags: DisjointPerWarp<u32>) {
    let i = thread::index_1d().get();
    let v = x.get(i).copied().unwrap_or(0);
    let mut s = v;
    let mut mx = v;
    let mut off = 16;
    while off > 0 {
        s = s.wrapping_add(warp::shfl_xor_sync(FULL_MASK, s, off, 32));
        mx = mx.max(warp::shfl_xor_sync(FULL_MASK, mx, off, 32));
        off /= 2;
    }
    let any_big = warp::any_sync(FULL_MASK, v > 1 << 40);
    let all_odd = warp::all_sync(FULL_MASK, v & 1 == 1);
    if let Some(o) = sum.get_mut() {
        *o = s ^ mx;
    }
    if let Some(o) = flags.get_mut() {
        *o = any_big as u32 | (all_odd as u32) << 1;
    }
}

// ---------------------------------------------------------------------------------------------
// 25. Matrix<AtomicF32> scatter: each thread adds into out[r][c] from a COO list.
#[kernel(dims = 1)]
pub fn coo_scatter(rows: &[u32], cols: &[u32], vals: &[f32], out: Matrix<AtomicF32>) {
    let i = thread::index_1d().get();
    let (Some(&r), Some(&c), Some(&v)) = (rows.get(i), cols.get(i), vals.get(i)) else { return };
    if let Some(cell) = out.get(r as usize, c as usize) {
        cell.atomic_add(v, Scope::Device);
    }
}

// ---------------------------------------------------------------------------------------------
// 26. DisjointTiles with G = 2 and a register tile in a small 2-D private array.
pub const TH: usize = 16;
pub const TW: usize = 16;
#[kernel(dims = 2, block(4, 4))]
pub fn tile_outer(a: &[f32], b: &[f32], mut c: DisjointTiles<f32, TH, TW, 2>) {
    // thread (tx, ty) owns 4x4 of the 16x16 tile; each entry c[r][col] = a[r] * b[col]
    let mut acc = [[0f32; 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            if let Some((r, col)) = c.position(i, j) {
                acc[i][j] = a.get(r).copied().unwrap_or(0.0) * b.get(col).copied().unwrap_or(0.0);
            }
        }
    }
    for (i, row) in acc.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            if let Some(o) = c.get_mut(i, j) {
                *o = v;
            }
        }
    }
}

// =============================================================================================
// Batch 2: aimed at the release IR passes.

// 27. CSR SpMV with u16 column indices (gather x[cols[j]]) and a row max (late combine).
#[kernel(dims = 1)]
pub fn spmv_max(
    row_ptr: &[u32],
    cols: &[u16],
    vals: &[f32],
    x: &[f32],
    mut y: DisjointSlice<f32>,
    mut ymax: DisjointSlice<f32>,
) {
    let i = thread::index_1d();
    let r = i.get();
    let (Some(&s), Some(&e)) = (row_ptr.get(r), row_ptr.get(r + 1)) else { return };
    let (s, e) = (s as usize, e as usize);
    let mut acc = 0.0f32;
    let mut m = f32::NEG_INFINITY;
    for j in s..e {
        let v = vals[j] * x[cols[j] as usize];
        acc += v;
        m = m.max(v);
    }
    if let Some(o) = y.get_mut(i) {
        *o = acc;
    }
    if let Some(o) = ymax.get_mut(i) {
        *o = m;
    }
}

// 28. Double-buffered tile loop with a prefetch under a branch (speculated blocks).
pub const PB: usize = 64;
#[kernel(dims = 1, block(64))]
pub fn tiled_dot(a: &[f32], b: &[f32], tiles: u32, mut out: DisjointPerBlock<f32>) {
    let sa = shared_array!(f32, PB);
    let t = thread::thread_idx().x as usize;
    let base = thread::block_idx().x as usize * tiles as usize * PB;
    let load = |kt: usize| -> (f32, f32) {
        let k = base + kt * PB + t;
        (a.get(k).copied().unwrap_or(0.0), b.get(k).copied().unwrap_or(0.0))
    };
    let mut cur = load(0);
    let mut total = 0.0f32;
    for kt in 0..tiles as usize {
        let next = if kt + 1 < tiles as usize { Some(load(kt + 1)) } else { None };
        sa.set(t, cur.0 * cur.1);
        sync_threads();
        if t == 0 {
            let mut s = 0.0;
            for k in 0..PB {
                s += sa.get(k);
            }
            total += s;
        }
        sync_threads();
        if let Some(n) = next {
            cur = n;
        }
    }
    if let Some(o) = out.get_mut() {
        *o = total;
    }
}

// 29. Reads of one input after writes to two outputs (early loads), clamped index reads.
#[kernel(dims = 1)]
pub fn multi_out(
    x: &[f32],
    y: &[f32],
    mut o1: DisjointSlice<f32>,
    mut o2: DisjointSlice<f32>,
    mut o3: DisjointSlice<f32>,
) {
    let i = thread::index_1d();
    let k = i.get();
    let n = x.len();
    if n == 0 {
        return;
    }
    let last = n - 1;
    if let Some(v) = o1.get_mut(i) {
        *v = x[k.min(last)];
    }
    if let Some(v) = o2.get_mut(i) {
        *v = y[k.min(y.len().saturating_sub(1))] + x[(k + 1).min(last)];
    }
    if let Some(v) = o3.get_mut(i) {
        *v = x[(k + 2).min(last)] * y.get(k + 3).copied().unwrap_or(1.0);
    }
}

// 30. Gather chain x[idx[idx2[i]]] with u8 second-level indices, f64.
#[kernel(dims = 1)]
pub fn gather2(x: &[f64], idx: &[u32], idx2: &[u8], mut out: DisjointSlice<f64>) {
    let i = thread::index_1d();
    let Some(&j) = idx2.get(i.get()) else { return };
    let Some(&k) = idx.get(j as usize) else { return };
    let v = x.get(k as usize).copied().unwrap_or(f64::NAN);
    if let Some(o) = out.get_mut(i) {
        *o = v;
    }
}

// 31. Byte scan with early exit (strlen-style), u8 data, unrolled remainder.
#[kernel(dims = 1)]
pub fn strlens(text: &[u8], stride: u32, mut out: DisjointSlice<u32>) {
    let i = thread::index_1d();
    let stride = stride as usize;
    let start = i.get() * stride;
    let Some(s) = text.get(start..) else { return };
    let mut n = 0u32;
    for &c in s.iter().take(stride) {
        if c == 0 {
            break;
        }
        n += 1;
    }
    if let Some(o) = out.get_mut(i) {
        *o = n;
    }
}

// 32. Data-dependent index into a private array (not unrollable to registers).
#[kernel(dims = 1)]
pub fn private_bins(x: &[u32], per: u32, mut out: DisjointChunks<u32, 8>) {
    let i = thread::index_1d();
    let per = per as usize;
    let mut bins = [0u32; 8];
    let start = i.get() * per;
    for k in 0..per {
        let Some(&v) = x.get(start + k) else { break };
        bins[(v % 8) as usize] += 1;
        let j = (v as usize / 8) & 7;
        bins[j] = bins[j].wrapping_add(v >> 20);
    }
    if let Some(o) = out.get_mut(i) {
        *o = bins;
    }
}

// 33. u128 arithmetic: 64x64->128 mulhi, and u128 modular reduction.
#[kernel(dims = 1)]
pub fn mul_wide(a: &[u64], b: &[u64], m: u64, mut hi: DisjointSlice<u64>, mut modm: DisjointSlice<u64>) {
    let i = thread::index_1d();
    let (Some(&x), Some(&y)) = (a.get(i.get()), b.get(i.get())) else { return };
    let p = x as u128 * y as u128;
    if let Some(o) = hi.get_mut(i) {
        *o = (p >> 64) as u64;
    }
    if let Some(o) = modm.get_mut(i) {
        *o = if m == 0 { 0 } else { (p % m as u128) as u64 };
    }
}

// 34. Median of 9 with core's sort_unstable_by on a private array (2-D image).
#[kernel(dims = 2)]
pub fn median3x3(img: Matrix<f32>, mut out: DisjointSlice2d<f32>) {
    let (x, y) = thread::index_2d();
    let mut w = [0f32; 9];
    let mut n = 0;
    for dy in -1i32..=1 {
        for dx in -1i32..=1 {
            let (Some(yy), Some(xx)) = (y.checked_add_signed(dy as isize), x.checked_add_signed(dx as isize)) else {
                continue;
            };
            if let Some(&v) = img.get(yy, xx) {
                w[n] = v;
                n += 1;
            }
        }
    }
    let win = &mut w[..n];
    win.sort_unstable_by(|a, b| a.total_cmp(b));
    if let Some(o) = out.get_mut() {
        *o = if n == 0 { 0.0 } else { win[n / 2] };
    }
}

// 35. Enum with data decoded from u32 words, match with guards.
#[derive(Clone, Copy)]
enum Op {
    Add(u32),
    Shl(u8),
    Xor(u32),
    Clamp { lo: u16, hi: u16 },
    Nop,
}

fn decode(w: u32) -> Op {
    match w >> 28 {
        0 => Op::Add(w & 0x0fff_ffff),
        1 => Op::Shl((w & 31) as u8),
        2 => Op::Xor(w << 4),
        3 => Op::Clamp { lo: (w & 0x3fff) as u16, hi: ((w >> 14) & 0x3fff) as u16 },
        _ => Op::Nop,
    }
}

pub fn run_ops(ops: &[u32], mut v: u32) -> u32 {
    for op in ops.iter().map(|&w| decode(w)) {
        v = match op {
            Op::Add(k) => v.wrapping_add(k),
            Op::Shl(s) if s < 32 => v << s,
            Op::Shl(_) => 0,
            Op::Xor(k) => v ^ k,
            Op::Clamp { lo, hi } if lo <= hi => v.clamp(lo as u32, hi as u32),
            Op::Clamp { .. } | Op::Nop => v,
        };
    }
    v
}

#[kernel(dims = 1)]
pub fn enum_ops(ops: &[u32], xs: &[u32], mut out: DisjointSlice<u32>) {
    let i = thread::index_1d();
    if let (Some(o), Some(&x)) = (out.get_mut(i), xs.get(i.get())) {
        *o = run_ops(ops, x);
    }
}

// 36. Integer intrinsics: i64 div_euclid/rem_euclid, isqrt, leading_zeros, count_ones, pow, abs_diff.
#[kernel(dims = 1)]
pub fn int_misc(x: &[i64], d: i64, mut out: DisjointChunks<i64, 6>) {
    let i = thread::index_1d();
    let Some(&v) = x.get(i.get()) else { return };
    let Some(o) = out.get_mut(i) else { return };
    let q = if d != 0 { v.checked_div_euclid(d).unwrap_or(i64::MAX) } else { 0 };
    let r = if d != 0 { v.checked_rem_euclid(d).unwrap_or(0) } else { 0 };
    let s = v.unsigned_abs().isqrt() as i64;
    let lz = v.leading_zeros() as i64 + (v.count_ones() as i64) * 100;
    let p = (v % 7).wrapping_pow(5);
    let ad = v.abs_diff(d) as i64;
    *o = [q, r, s, lz, p, ad];
}

// 37. f32 helpers from core: mul_add? (std), clamp, to_bits/from_bits, total_cmp, signum, float->int casts.
#[kernel(dims = 1)]
pub fn float_bits(x: &[f32], mut out: DisjointSlice<u32>, mut q: DisjointSlice<i16>) {
    let i = thread::index_1d();
    let Some(&v) = x.get(i.get()) else { return };
    let c = v.clamp(-100.0, 100.0);
    let bits = c.to_bits() ^ (v.is_sign_negative() as u32);
    let back = f32::from_bits(bits & !1);
    if let Some(o) = out.get_mut(i) {
        *o = bits.rotate_left(3) ^ (back.total_cmp(&0.0) as i8 as u32);
    }
    if let Some(o) = q.get_mut(i) {
        *o = (v * 1000.0) as i16;
    }
}

// 38. CAS loop: global float max through AtomicU32 bits; sync_warp, segmented shuffle width 8.
#[kernel(dims = 1)]
pub fn cas_fmax(x: &[f32], out: &[AtomicU32]) {
    let i = thread::index_1d().get();
    let mut v = x.get(i).copied().unwrap_or(f32::NEG_INFINITY);
    // segmented max over groups of 8 lanes
    let mut off = 4;
    while off > 0 {
        v = v.max(warp::shfl_xor_sync(FULL_MASK, v, off, 8));
        off /= 2;
    }
    sync_warp(FULL_MASK);
    if thread::lane_id() % 8 != 0 {
        return;
    }
    let Some(cell) = out.first() else { return };
    let mut old = cell.atomic_add(0, Scope::Device);
    loop {
        if f32::from_bits(old) >= v {
            break;
        }
        let prev = cell.atomic_cas(old, v.to_bits(), Scope::Device);
        if prev == old {
            break;
        }
        old = prev;
    }
}

// 39. Reverse step_by iteration, while-let over an iterator, labeled continue.
#[kernel(dims = 1)]
pub fn rev_steps(x: &[i32], mut out: DisjointSlice<i64>) {
    let i = thread::index_1d();
    let n = x.len();
    let step = i.get() % 5 + 1;
    let mut it = (0..n).rev().step_by(step);
    let mut s = 0i64;
    'outer: while let Some(k) = it.next() {
        for d in [2i32, 3, 5] {
            if x[k] % d == 0 {
                continue 'outer;
            }
        }
        s += x[k] as i64 * (k as i64 + 1);
    }
    if let Some(o) = out.get_mut(i) {
        *o = s;
    }
}

// 40. Struct slice input, struct output with array field, impl methods.
#[derive(Clone, Copy, KernelArg, Debug, PartialEq)]
#[repr(C)]
pub struct P3 {
    pub p: [f32; 3],
    pub m: f32,
}
impl P3 {
    fn dist2(&self, o: &P3) -> f32 {
        self.p.iter().zip(o.p.iter()).map(|(a, b)| (a - b) * (a - b)).sum()
    }
}
#[kernel(dims = 1)]
pub fn nbody_acc(ps: &[P3], eps: f32, mut out: DisjointSlice<P3>) {
    let i = thread::index_1d();
    let Some(me) = ps.get(i.get()) else { return };
    let mut acc = [0f32; 3];
    for (j, o) in ps.iter().enumerate() {
        if j == i.get() {
            continue;
        }
        let r2 = me.dist2(o) + eps;
        let inv = o.m / (r2 * math::sqrt(r2));
        for k in 0..3 {
            acc[k] += (o.p[k] - me.p[k]) * inv;
        }
    }
    if let Some(out) = out.get_mut(i) {
        *out = P3 { p: acc, m: me.m };
    }
}

// 41. Recursion: a small recursive function (gcd, depth-bounded).
fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
#[kernel(dims = 1)]
pub fn gcds(a: &[u64], b: &[u64], mut out: DisjointSlice<u64>) {
    let i = thread::index_1d();
    if let (Some(o), Some(&x), Some(&y)) = (out.get_mut(i), a.get(i.get()), b.get(i.get())) {
        *o = gcd(x, y);
    }
}

// 42. sync_threads_and / or with a block-stride step_by loop over shared memory.
#[kernel(dims = 1)]
pub fn block_flags(x: &[i32], mut out: DisjointPerBlock<u32>) {
    let sh = shared_array!(i32, 256);
    let t = thread::thread_idx().x as usize;
    let nb = thread::block_dim().x as usize;
    let base = thread::block_idx().x as usize * 256;
    for k in (t..256).step_by(nb) {
        sh.set(k, x.get(base + k).copied().unwrap_or(0));
    }
    sync_threads();
    let mut mine_pos = true;
    let mut mine_zero = false;
    for k in (t..256).step_by(nb) {
        let v = sh.get(k);
        mine_pos &= v >= 0;
        mine_zero |= v == 0;
    }
    let all_pos = sync_threads_and(mine_pos);
    let any_zero = sync_threads_or(mine_zero);
    if let Some(o) = out.get_mut() {
        *o = all_pos as u32 | (any_zero as u32) << 1;
    }
}

// =============================================================================================
// Batch 3.

// 43. Float remainder (frem), powi, array-argument taps indexed by a loop variable.
#[kernel(dims = 1)]
pub fn frem_taps(x: &[f32], taps: [f32; 7], period: f64, mut out: DisjointSlice<f32>, mut out64: DisjointSlice<f64>) {
    let i = thread::index_1d();
    let k = i.get();
    let mut s = 0.0f32;
    for t in 0..taps.len() {
        if let Some(&v) = (k + t).checked_sub(3).and_then(|j| x.get(j)) {
            s += taps[t] * v;
        }
    }
    if let Some(o) = out.get_mut(i) {
        *o = (s % 0.75) + math::powi(s, 3);
    }
    if let Some(o) = out64.get_mut(i) {
        *o = (k as f64 * 1.37) % period;
    }
}

// 44. Slice of arrays in, array elements out (RGB u8), array::from_fn, const-generic helper.
fn luma<const N: usize>(px: &[u8; N], w: &[u16; N]) -> u32 {
    px.iter().zip(w.iter()).map(|(&p, &q)| p as u32 * q as u32).sum()
}

#[kernel(dims = 1)]
pub fn rgb_ops(px: &[[u8; 3]], mut out: DisjointSlice<[u8; 3]>, mut gray: DisjointSlice<u8>) {
    let i = thread::index_1d();
    let Some(p) = px.get(i.get()) else { return };
    let inv: [u8; 3] = core::array::from_fn(|c| 255 - p[2 - c]);
    if let Some(o) = out.get_mut(i) {
        *o = inv;
    }
    if let Some(g) = gray.get_mut(i) {
        *g = (luma(p, &[77, 150, 29]) >> 8) as u8;
    }
}

// 45. Helper taking a closure generic (impl Fn), and a `&dyn Fn` indirect call.
fn apply_n(f: impl Fn(f32) -> f32, x: f32, n: u32) -> f32 {
    let mut v = x;
    for _ in 0..n {
        v = f(v);
    }
    v
}

fn pick(op: u32) -> &'static dyn Fn(f32) -> f32 {
    match op % 3 {
        0 => &|v: f32| v * 0.5 + 1.0,
        1 => &|v: f32| v * v - 0.25,
        _ => &|v: f32| -v,
    }
}

#[kernel(dims = 1)]
pub fn closures(x: &[f32], ops: &[u32], mut out: DisjointSlice<f32>) {
    let i = thread::index_1d();
    let Some(&v) = x.get(i.get()) else { return };
    let op = ops.get(i.get()).copied().unwrap_or(0);
    let f = pick(op);
    let g = |t: f32| f(t).clamp(-4.0, 4.0);
    if let Some(o) = out.get_mut(i) {
        *o = apply_n(g, v, op % 5);
    }
}

// 46. Option chains with `?` in a helper, binary_search, chunks_exact + from_le_bytes.
fn lookup(keys: &[u32], vals: &[u64], k: u32) -> Option<u64> {
    let pos = keys.binary_search(&k).ok()?;
    let v = vals.get(pos)?;
    v.checked_mul(3)
}

fn le_words(bytes: &[u8]) -> u64 {
    bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).fold(0, |a, w| a ^ w.rotate_left(7))
}

#[kernel(dims = 1)]
pub fn search_kv(keys: &[u32], vals: &[u64], q: &[u32], bytes: &[u8], mut out: DisjointSlice<u64>) {
    let i = thread::index_1d();
    let Some(&k) = q.get(i.get()) else { return };
    let r = lookup(keys, vals, k).unwrap_or(u64::MAX);
    let start = (k as usize % 4) * 8;
    let extra = bytes.get(start..).map(le_words).unwrap_or(0);
    if let Some(o) = out.get_mut(i) {
        *o = r ^ extra;
    }
}

// 47. UTF-8 validation and char counting in a kernel (core::str).
#[kernel(dims = 1)]
pub fn utf8_count(text: &[u8], offs: &[u32], mut out: DisjointSlice<i32>) {
    let i = thread::index_1d();
    let (Some(&s), Some(&e)) = (offs.get(i.get()), offs.get(i.get() + 1)) else { return };
    let Some(bytes) = text.get(s as usize..e as usize) else { return };
    let n = match core::str::from_utf8(bytes) {
        Ok(st) => st.chars().filter(|c| c.is_alphabetic()).count() as i32,
        Err(e) => -(e.valid_up_to() as i32) - 1,
    };
    if let Some(o) = out.get_mut(i) {
        *o = n;
    }
}

// 48. Struct in shared memory, AtomicF64 add, AtomicI32 min, AtomicU64 in shared.
#[derive(Clone, Copy, KernelArg)]
#[repr(C)]
pub struct Acc {
    pub sum: f32,
    pub cnt: u32,
}

#[kernel(dims = 1, block(64))]
pub fn shared_structs(x: &[f32], sum64: &[AtomicF64], minv: &[atomic::AtomicI32], cnt64: &[atomic::AtomicU64]) {
    let accs = shared_array!(Acc, 64);
    let big = shared_array!(u64, 1);
    let t = thread::thread_idx().x as usize;
    let i = thread::index_1d().get();
    let v = x.get(i).copied();
    accs.set(t, Acc { sum: v.unwrap_or(0.0), cnt: v.is_some() as u32 });
    if t == 0 {
        big.set(0, 0);
    }
    sync_threads();
    if v.is_some() {
        big.atomic(0).atomic_add(1, Scope::Block);
    }
    let mut s = 32;
    while s > 0 {
        if t < s {
            let a = accs.get(t);
            let b = accs.get(t + s);
            accs.set(t, Acc { sum: a.sum + b.sum, cnt: a.cnt + b.cnt });
        }
        sync_threads();
        s /= 2;
    }
    if let Some(m) = minv.first() {
        if let Some(v) = v {
            m.atomic_min((v * 1000.0) as i32, Scope::Device);
        }
    }
    if t == 0 {
        let a = accs.get(0);
        if let Some(s) = sum64.first() {
            s.atomic_add(a.sum as f64, Scope::Device);
        }
        if let Some(c) = cnt64.first() {
            c.atomic_add(big.get(0) + ((a.cnt as u64) << 32), Scope::Device);
        }
    }
}

// 49. Bit ops: brev, clz, ffs on u32/u64; shfl_down of f64 with width 16.
#[kernel(dims = 1)]
pub fn bits_shfl(x: &[u64], mut out: DisjointSlice<u64>, mut fo: DisjointSlice<f64>) {
    let i = thread::index_1d();
    let v = x.get(i.get()).copied().unwrap_or(0);
    let b = warp::brev(v) ^ (warp::clz(v as u32) as u64) << 8 ^ warp::ffs(v) as u64;
    let f = v as f64 * 0.5;
    let g = warp::shfl_down_sync(FULL_MASK, f, 3, 16);
    if let Some(o) = out.get_mut(i) {
        *o = b;
    }
    if let Some(o) = fo.get_mut(i) {
        *o = g;
    }
}

// 50. Explicit assert / panic path: the CPU executor must report a panic.
#[kernel(dims = 1)]
pub fn checked_div(a: &[i32], b: &[i32], mut out: DisjointSlice<i32>) {
    let i = thread::index_1d();
    let (Some(&x), Some(&y)) = (a.get(i.get()), b.get(i.get())) else { return };
    assert!(y != 0, "division by zero at {}", i.get());
    if let Some(o) = out.get_mut(i) {
        *o = x.checked_div(y).unwrap_or(i32::MIN);
    }
}

// 51. select_nth_unstable on a private array of 16 (k-th smallest), DisjointTiles DOWN = true.
#[kernel(dims = 2, block(8, 8))]
pub fn kth_tiles(x: Matrix<f32>, k: u32, mut out: DisjointTiles<f32, 8, 8, 1, true>) {
    let Some((r, c)) = out.position(0, 0) else { return };
    let mut w = [f32::INFINITY; 16];
    for (j, slot) in w.iter_mut().enumerate() {
        if let Some(&v) = x.get(r, (c + j) % x.cols().max(1)) {
            *slot = v;
        }
    }
    let kk = (k as usize).min(15);
    let (_, &mut m, _) = w.select_nth_unstable_by(kk, |a, b| a.total_cmp(b));
    if let Some(o) = out.get_mut(0, 0) {
        *o = m;
    }
}

// 52. Large private array (stack) with data-dependent indexing: counting sort of u8 keys.
#[kernel(dims = 1)]
pub fn count_sort_u8(keys: &[u8], per: u32, mut out: DisjointSlice<u32>) {
    let i = thread::index_1d();
    let per = per as usize;
    let mut counts = [0u16; 256];
    let start = i.get() * per;
    let Some(ks) = keys.get(start..(start + per).min(keys.len())) else { return };
    for &k in ks {
        counts[k as usize] = counts[k as usize].wrapping_add(1);
    }
    // checksum of the sorted order: sum of rank * key
    let mut rank = 0u32;
    let mut h = 0u32;
    for (k, &c) in counts.iter().enumerate() {
        for _ in 0..c {
            h = h.wrapping_add(rank.wrapping_mul(k as u32));
            rank += 1;
        }
    }
    if let Some(o) = out.get_mut(i) {
        *o = h;
    }
}

// =============================================================================================
// Batch 4: odd element types through the load-rewriting release passes.
pub type Rgb = [u8; 3];
pub type F64x3 = [f64; 3];
pub type U16x5 = [u16; 5];

#[derive(Clone, Copy, KernelArg, Default, Debug, PartialEq)]
#[repr(C)]
pub struct Mixed {
    pub a: u8,
    pub b: f64,
    pub c: u16,
}

/// After a barrier: clamped reads, a gather through an index input, and a prefetch under a branch.
#[kernel(dims = 1, block(64), instantiate(u8, i8, u16, f64, Rgb, F64x3, U16x5, Mixed))]
pub fn gather_types<T: KernelArg + Copy + Default>(
    x: &[T],
    idx: &[u32],
    m: Matrix<T>,
    rounds: u32,
    mut out: DisjointChunks<T, 4>,
) {
    let flag = shared_array!(u32, 1);
    let t = thread::thread_idx().x as usize;
    if t == 0 {
        flag.set(0, 1);
    }
    sync_threads();
    let i = thread::index_1d();
    let k = i.get();
    let n = x.len();
    let a = if n > 0 { x[k.min(n - 1)] } else { T::default() };
    let mut g = T::default();
    for r in 0..rounds as usize {
        let j = idx.get(k + r).copied().unwrap_or(0) as usize;
        if let Some(&v) = x.get(j) {
            g = v;
        }
        let next =
            if r + 1 < rounds as usize { idx.get(k + r + 1).and_then(|&j| x.get(j as usize)).copied() } else { None };
        if let Some(v) = next {
            g = v;
        }
    }
    let c = m.get(k % m.rows().max(1), (k * 7) % m.cols().max(1)).copied().unwrap_or_default();
    let f = if flag.get(0) == 1 { x.get(k + 1).copied().unwrap_or_default() } else { T::default() };
    if let Some(o) = out.get_mut(i) {
        *o = [a, g, c, f];
    }
}

/// Peeled reductions with identity start values on several types (late combines).
#[kernel(dims = 1)]
pub fn reductions(x: &[f64], y: &[i16], z: &[u64], per: u32, mut out: DisjointChunks<f64, 4>) {
    let i = thread::index_1d();
    let per = per as usize;
    let s = i.get() * per;
    let xs = x.get(s..).unwrap_or(&[]);
    let ys = y.get(s..).unwrap_or(&[]);
    let zs = z.get(s..).unwrap_or(&[]);
    let mx = xs.iter().take(per).fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    let mn = xs.iter().take(per).fold(f64::INFINITY, |a, &b| a.min(b));
    let ym = ys.iter().take(per).fold(i16::MIN, |a, &b| a.max(b));
    let zm = zs.iter().take(per).fold(u64::MAX, |a, &b| a.min(b));
    if let Some(o) = out.get_mut(i) {
        *o = [mx, mn, ym as f64, zm as f64];
    }
}

/// A kernel with no `dims`: launched 1-D its release build runs its 1-D copy
/// (oxide-build's `ir/one_d_copies.rs`), launched 2-D or 3-D the kernel itself; both must
/// give every thread the same `thread::index()`.
#[kernel]
pub fn index_weave(x: &[u32], mut out: DisjointSlice<u32>) {
    let i = thread::index();
    if let Some(o) = out.get_mut(i) {
        let i = i.get();
        *o = x[i].rotate_left((i % 31) as u32) ^ (i as u32);
    }
}

/// A 3x3 mean with the border repeated, reading `input[yy * w + xx]` on a plain `&[f32]`:
/// release builds add a copy without the nine bounds checks (oxide-build's
/// `ir/versioned_checks.rs`), which the launcher runs only when the largest index the launch
/// can read is inside `input`; with `input` one element short the checks must still panic.
#[kernel]
pub fn clamped_mean3(input: &[f32], mut out: DisjointSlice2d<f32>) {
    let (x, y) = thread::index_2d();
    let (w, h) = (out.cols(), out.rows());
    if let Some(o) = out.get_mut() {
        let mut sum = 0.0f32;
        for yy in [y.saturating_sub(1), y, (y + 1).min(h - 1)] {
            for xx in [x.saturating_sub(1), x, (x + 1).min(w - 1)] {
                sum += input[yy * w + xx];
            }
        }
        *o = sum / 9.0;
    }
}

/// A five-point mean inside the image, the border copied: the reads at `i - 1` and `i - w`
/// need `i`'s lowest value over the interior (`y * w + x` with `x, y >= 1`), and the one at
/// `i + w` that `y != h - 1` takes one off `y`'s bound, for the release copy to drop their
/// checks (oxide-build's `ir/versioned_checks.rs`, both checked at launch).
#[kernel]
pub fn interior_mean5(input: &[f32], mut out: DisjointSlice2d<f32>) {
    let (x, y) = thread::index_2d();
    let (w, h) = (out.cols(), out.rows());
    let Some(o) = out.get_mut() else { return };
    let i = y * w + x;
    *o = if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
        input[i]
    } else {
        (input[i] + input[i - 1] + input[i + 1] + input[i - w] + input[i + w]) / 5.0
    };
}
