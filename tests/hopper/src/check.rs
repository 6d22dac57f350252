//! Host references: what a TMA load of a box must deliver (zeros outside the tensor), and
//! where a swizzle puts each element.

/// `len` distinct nonzero values: element `i` is `i + 1` (wrapping to stay nonzero in u16).
pub fn values_u32(len: usize) -> Vec<u32> {
    (0..len as u32).map(|i| i + 1).collect()
}

pub fn values_u16(len: usize) -> Vec<u16> {
    (0..len).map(|i| (i % 65535) as u16 + 1).collect()
}

/// The box of extents `box_dims` at `coords` (innermost first) of the tensor `data` with
/// `dims` and `strides` (elements), packed innermost first; elements outside are `zero`.
pub fn box_of<T: Copy>(data: &[T], dims: &[u64], strides: &[u64], box_dims: &[u32], coords: &[i32], zero: T) -> Vec<T> {
    let n: usize = box_dims.iter().map(|&b| b as usize).product();
    (0..n)
        .map(|k| {
            let mut rest = k;
            let mut at = 0i64;
            for d in 0..dims.len() {
                let off = (rest % box_dims[d] as usize) as i64;
                rest /= box_dims[d] as usize;
                let c = coords[d] as i64 + off;
                if c < 0 || c >= dims[d] as i64 {
                    return zero;
                }
                at += c * strides[d] as i64;
            }
            data[at as usize]
        })
        .collect()
}

/// Where byte `a` of a box (relative to the tile's start, 1024-byte aligned) lands with a
/// swizzle of `span` bytes (0: none): address bits 4.. XOR bits 7.., over as many bits as the
/// span has 16-byte chunks (32 B: 1 bit, 64 B: 2, 128 B: 3).
pub fn swizzled(a: usize, span: usize) -> usize {
    let mask = match span {
        32 => 1,
        64 => 3,
        128 => 7,
        _ => 0,
    };
    a ^ (((a >> 7) & mask) << 4)
}

/// `packed` (a box, elements of `elem` bytes) as the swizzle lays it out in shared memory.
pub fn swizzle<T: Copy + Default>(packed: &[T], elem: usize, span: usize) -> Vec<T> {
    let mut tile = vec![T::default(); packed.len()];
    for (i, v) in packed.iter().enumerate() {
        tile[swizzled(i * elem, span) / elem] = *v;
    }
    tile
}

/// The output of `cluster_dsmem` over `blocks` blocks (clusters of `CLUSTER`), row by row: the
/// cluster registers, then what each thread read from the next rank's `mine`, then what the
/// previous rank wrote into its `inbox`.
pub fn cluster_dsmem_rows(blocks: usize) -> Vec<u32> {
    use crate::kernels::{CLUSTER, CLUSTER_THREADS as N};
    let mut out = Vec::new();
    for b in 0..blocks {
        let (c, r) = (b / CLUSTER, b % CLUSTER);
        out.extend([r, CLUSTER, c, r, CLUSTER, blocks / CLUSTER].map(|v| v as u32));
        let (next, prev) = (c * CLUSTER + (r + 1) % CLUSTER, c * CLUSTER + (r + CLUSTER - 1) % CLUSTER);
        out.extend((0..N).map(|t| (next * 1000 + t) as u32));
        out.extend((0..N).map(|t| (prev * 1000 + t + 7) as u32));
    }
    out
}

/// What `cluster_early_exit` leaves in an output filled with `untouched`: rows of rank 1, and
/// the columns of warp 1, keep it; warp 0 of the other ranks read the next live rank's `mine`
/// and received the previous one's value.
pub fn cluster_early_exit_rows(blocks: usize, untouched: u32) -> Vec<u32> {
    use crate::kernels::{CLUSTER, CLUSTER_THREADS as N};
    let mut out = vec![untouched; blocks * 2 * N];
    for b in 0..blocks {
        let (c, r) = (b / CLUSTER, b % CLUSTER);
        if r == 1 {
            continue;
        }
        let (next, prev) = ([2, 0, 3, 0][r], [3, 0, 0, 2][r]);
        for t in 0..32 {
            out[b * 2 * N + t] = ((c * CLUSTER + next) * 1000 + t) as u32;
            out[b * 2 * N + N + t] = ((c * CLUSTER + prev) * 1000 + t + 7) as u32;
        }
    }
    out
}
