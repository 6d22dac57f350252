// stencil3d kernels of the suite, written the way a CUDA programmer would (int indices,
// __restrict__, no handicaps). extern "C" so the benchmark finds them by name.

// 7-point stencil with boundary copy over a row-major nx x ny x nz grid (x fastest): interior
// cells c0 * centre + c1 * (w + e + s + n + b + a), face cells copy the input. 3-D launch.
extern "C" __global__ void stencil7_3d(const float* __restrict__ in, float* __restrict__ out, int nx, int ny,
                                       int nz, float c0, float c1) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;
    int plane = nx * ny;
    int i = (z * ny + y) * nx + x;
    if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
        out[i] = in[i];
    } else {
        out[i] = c0 * in[i] + c1 * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] + in[i - plane] + in[i + plane]);
    }
}

// 27-point box filter, neighbours clamped to the grid: the mean of the 3x3x3 neighbourhood.
extern "C" __global__ void box27_3d(const float* __restrict__ in, float* __restrict__ out, int nx, int ny,
                                    int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;
    float sum = 0.0f;
    for (int dz = -1; dz <= 1; dz++) {
        int zz = min(max(z + dz, 0), nz - 1);
        for (int dy = -1; dy <= 1; dy++) {
            int yy = min(max(y + dy, 0), ny - 1);
            for (int dx = -1; dx <= 1; dx++) {
                int xx = min(max(x + dx, 0), nx - 1);
                sum += in[(zz * ny + yy) * nx + xx];
            }
        }
    }
    out[(z * ny + y) * nx + x] = sum * (1.0f / 27.0f);
}
