// CUDA C++ twin of examples/softmax: one warp per row, 8 warps (rows) per block; three passes
// over the row (max, sum of expf(x - max), write), each unrolled 4x (loads 128 columns apart
// per warp), warp shuffle butterflies for the max and the sum, one reciprocal per row.
#define WARPS 8
#define UNROLL 4

extern "C" __global__ void softmax_rows(const float* __restrict__ x, unsigned rows, unsigned cols, float* __restrict__ y) {
    unsigned row = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (row >= rows) return;
    unsigned lane = threadIdx.x & 31;
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    const unsigned W = 32, STEP = 32 * UNROLL;

    float m[UNROLL];
    for (int u = 0; u < UNROLL; u++) m[u] = -INFINITY;
    unsigned j = lane;
    for (; j + (UNROLL - 1) * W < cols; j += STEP)
        for (int u = 0; u < UNROLL; u++) m[u] = fmaxf(m[u], xr[j + u * W]);
    for (; j < cols; j += W) m[0] = fmaxf(m[0], xr[j]);
    float mx = fmaxf(fmaxf(m[0], m[1]), fmaxf(m[2], m[3]));
    for (int off = 16; off > 0; off /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off, 32));

    float s[UNROLL];
    for (int u = 0; u < UNROLL; u++) s[u] = 0.0f;
    j = lane;
    for (; j + (UNROLL - 1) * W < cols; j += STEP)
        for (int u = 0; u < UNROLL; u++) s[u] += expf(xr[j + u * W] - mx);
    for (; j < cols; j += W) s[0] += expf(xr[j] - mx);
    float sum = (s[0] + s[1]) + (s[2] + s[3]);
    for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off, 32);
    float inv = 1.0f / sum;

    j = lane;
    for (; j + (UNROLL - 1) * W < cols; j += STEP)
        for (int u = 0; u < UNROLL; u++) yr[j + u * W] = expf(xr[j + u * W] - mx) * inv;
    for (; j < cols; j += W) yr[j] = expf(xr[j] - mx) * inv;
}
