// pairwise kernels of the suite, written the way a CUDA programmer would (int indices,
// __restrict__, no handicaps). extern "C" so the benchmark finds them by name.

#define NBODY_BLOCK 256

// acc[i] = sum_j m_j * d / (|d|^2 + soft2)^(3/2), d = pos_j - pos_i; bodies[j] = (x, y, z, m).
// Bodies go through a shared tile of NBODY_BLOCK; blockDim.x == NBODY_BLOCK.
extern "C" __global__ void nbody_tile(const float4* __restrict__ bodies, int n, float soft2, float4* __restrict__ acc) {
    __shared__ float4 tile[NBODY_BLOCK];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 me = i < n ? bodies[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    float ax = 0.f, ay = 0.f, az = 0.f;
    for (int start = 0; start < n; start += NBODY_BLOCK) {
        int j = start + threadIdx.x;
        tile[threadIdx.x] = j < n ? bodies[j] : make_float4(0.f, 0.f, 0.f, 0.f);
        __syncthreads();
        for (int k = 0; k < NBODY_BLOCK; k++) {
            float4 b = tile[k];
            float dx = b.x - me.x, dy = b.y - me.y, dz = b.z - me.z;
            float d2 = dx * dx + dy * dy + dz * dz + soft2;
            float inv = rsqrtf(d2);
            float s = b.w * inv * inv * inv;
            ax += s * dx;
            ay += s * dy;
            az += s * dz;
        }
        __syncthreads();
    }
    if (i < n) acc[i] = make_float4(ax, ay, az, 0.f);
}

#define KMEANS_MAX_CENTROID_VALUES 4096

// labels[i] = index of the centroid nearest to point i (first on ties); points n x dims,
// centroids k x dims (k * dims <= KMEANS_MAX_CENTROID_VALUES), centroids staged in shared memory.
extern "C" __global__ void kmeans_assign(const float* __restrict__ points, int n, const float* __restrict__ centroids,
                                         int k, int dims, unsigned* __restrict__ labels) {
    __shared__ float cent[KMEANS_MAX_CENTROID_VALUES];
    for (int j = threadIdx.x; j < k * dims; j += blockDim.x) cent[j] = centroids[j];
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float* p = points + (size_t)i * dims;
    float best = INFINITY;
    unsigned label = 0;
    for (int c = 0; c < k; c++) {
        float dist = 0.f;
        for (int d = 0; d < dims; d++) {
            float diff = p[d] - cent[c * dims + d];
            dist += diff * diff;
        }
        if (dist < best) {
            best = dist;
            label = c;
        }
    }
    labels[i] = label;
}
