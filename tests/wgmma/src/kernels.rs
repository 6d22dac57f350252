//! One kernel per `wgmma.mma_async` shape and element type; `mode` picks the swizzle
//! (0 none, 1 32B, 2 64B, 3 128B). One warpgroup computes `C = A[64..128] * B^T`: A is 128 x 64
//! and B is N x 64 (both K-major, row-major on the host), written into shared memory in the
//! layout `KMajor` describes, then multiplied in four k16 steps — the first overwriting an
//! accumulator full of garbage (`accumulate = false`), the rest accumulating. Thread `t` writes
//! its `N / 2` accumulator elements in order; the host places them with `WgAcc::coord`.
use oxide_rt::device::wgmma::*;
use oxide_rt::device::*;

/// Rows of the A tile (the product uses the second 64, so descriptors start at row 64).
pub const A_ROWS: usize = 128;
/// The depth of the product: four k16 steps.
pub const K: usize = 64;
/// Dynamic shared memory: A and the largest B, plus the room to align them to 1024 bytes.
pub const SHARED_BYTES: usize = (A_ROWS + 256) * K * 2 + 1024;

#[inline(always)]
fn product<T: WgmmaElem, S: WgShape, SW: Swizzle, const N: usize>(a: &[T], b: &[T]) -> WgAcc<S> {
    let smem = aligned(dynamic_shared::<T>(), 1024);
    let (sa, sb) = smem.split_at(A_ROWS * K);
    let t = thread::thread_rank() as usize;
    for i in (t..A_ROWS * K).step_by(128) {
        sa.set(KMajor::<T, SW, A_ROWS, K>::index(i / K, i % K), a[i]);
    }
    for i in (t..N * K).step_by(128) {
        sb.set(KMajor::<T, SW, N, K>::index(i / K, i % K), b[i]);
    }
    fence_proxy_async();
    sync_threads();
    let mut acc = WgAcc::<S>::zero();
    for i in 0..WgAcc::<S>::LEN {
        acc.set(i, 1.0e30);
    }
    fence();
    for kk in 0..K / 16 {
        let da = KMajor::<T, SW, A_ROWS, K>::desc(sa, 64, kk * 16);
        let db = KMajor::<T, SW, N, K>::desc(sb, 0, kk * 16);
        mma_async(&mut acc, da, db, kk > 0);
    }
    commit_group();
    wait_group::<0, S>(&mut acc);
    acc
}

macro_rules! kernels {
    ($($name:ident: $t:ty, $shape:ty, $n:literal;)*) => {$(
        #[doc = concat!("64 x ", stringify!($n), " x 64 on ", stringify!($t), " in swizzle mode `mode`.")]
        #[kernel(block(128))]
        pub fn $name(mode: u32, a: &[$t], b: &[$t], mut out: DisjointChunks<f32, { $n / 2 }>) {
            let acc = match mode {
                0 => product::<$t, $shape, NoSwizzle, $n>(a, b),
                1 => product::<$t, $shape, Swizzle32B, $n>(a, b),
                2 => product::<$t, $shape, Swizzle64B, $n>(a, b),
                _ => product::<$t, $shape, Swizzle128B, $n>(a, b),
            };
            if let Some(o) = out.get_mut(thread::index()) {
                for (i, v) in o.iter_mut().enumerate() {
                    *v = acc.get(i);
                }
            }
        }
    )*};
}
kernels! {
    wgmma_bf16_n64: Bf16, M64N64K16, 64;
    wgmma_bf16_n128: Bf16, M64N128K16, 128;
    wgmma_bf16_n256: Bf16, M64N256K16, 256;
    wgmma_f16_n64: F16, M64N64K16, 64;
    wgmma_f16_n128: F16, M64N128K16, 128;
    wgmma_f16_n256: F16, M64N256K16, 256;
}
