//! pairwise kernels (device side): all-pairs n-body accelerations through a shared tile of
//! bodies, k-means assignment against centroids staged in shared memory.
use oxide_rt::device::*;

/// Threads per block of [`nbody_tile`], and bodies per shared tile.
pub const NBODY_BLOCK: u32 = 256;
const TILE: usize = NBODY_BLOCK as usize;

/// `acc[i]` = the acceleration of body `i` from all bodies `j`:
/// `sum_j m_j * d / (|d|^2 + soft2)^(3/2)`, `d = pos_j - pos_i` (`bodies[j] = [x, y, z, m]`;
/// the result's last component is 0). Bodies go through shared memory a tile of
/// [`NBODY_BLOCK`] at a time; past the end a tile is padded with massless bodies.
#[kernel(dims = 1, block(NBODY_BLOCK))]
pub fn nbody_tile(bodies: &[[f32; 4]], soft2: f32, mut acc: DisjointSlice<[f32; 4]>) {
    let tile = shared_array!([f32; 4], TILE);
    let i = thread::index();
    let t = thread::thread_idx().x as usize;
    let me = bodies.get(i.get()).copied().unwrap_or([0.0; 4]);
    let (mut ax, mut ay, mut az) = (0.0f32, 0.0f32, 0.0f32);
    let mut start = 0;
    while start < bodies.len() {
        tile.set(t, bodies.get(start + t).copied().unwrap_or([0.0; 4]));
        sync_threads();
        for k in 0..TILE {
            let b = tile.get(k);
            let dx = b[0] - me[0];
            let dy = b[1] - me[1];
            let dz = b[2] - me[2];
            let d2 = dx * dx + dy * dy + dz * dz + soft2;
            let inv = math::rsqrt(d2);
            let s = b[3] * inv * inv * inv;
            ax += s * dx;
            ay += s * dy;
            az += s * dz;
        }
        sync_threads();
        start += TILE;
    }
    if let Some(a) = acc.get_mut(i) {
        *a = [ax, ay, az, 0.0];
    }
}

/// Threads per block of [`kmeans_assign`].
pub const KMEANS_BLOCK: u32 = 256;
/// The most centroid values (`k * dims`) [`kmeans_assign`] stages in shared memory.
pub const KMEANS_MAX_CENTROID_VALUES: usize = 4096;

/// `labels[i]` = the index of the centroid nearest to point `i` (squared Euclidean distance,
/// the first on ties). `points` is row-major `n x dims`, `centroids` row-major `k x dims`
/// (`k * dims <= KMEANS_MAX_CENTROID_VALUES`, extra centroids are ignored); each block first
/// copies the centroids to shared memory.
#[kernel(dims = 1)]
pub fn kmeans_assign(points: &[f32], centroids: &[f32], dims: usize, mut labels: DisjointSlice<u32>) {
    let cent = shared_array!(f32, KMEANS_MAX_CENTROID_VALUES);
    let values = centroids.len().min(KMEANS_MAX_CENTROID_VALUES);
    let mut j = thread::thread_idx().x as usize;
    while j < values {
        cent.set(j, centroids[j]);
        j += thread::block_dim().x as usize;
    }
    sync_threads();
    if dims == 0 {
        return;
    }
    let k = values / dims;
    let i = thread::index();
    let Some(point) = points.get(i.get() * dims..(i.get() + 1) * dims) else {
        return;
    };
    let mut best = f32::INFINITY;
    let mut label = 0u32;
    for c in 0..k {
        let mut dist = 0.0f32;
        for (d, &p) in point.iter().enumerate() {
            let diff = p - cent.get(c * dims + d);
            dist += diff * diff;
        }
        if dist < best {
            best = dist;
            label = c as u32;
        }
    }
    if let Some(l) = labels.get_mut(i) {
        *l = label;
    }
}
