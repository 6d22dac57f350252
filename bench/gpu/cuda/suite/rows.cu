// row kernels of the suite, written the way a CUDA programmer would (int indices,
// __restrict__, no handicaps). extern "C" so the benchmark finds them by name.

#define ROW_BLOCK 256
#define WARPS (ROW_BLOCK / 32)

__device__ inline float block_sum(float v, float* partial) {
    for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    float total = 0.f;
    for (int w = 0; w < WARPS; w++) total += partial[w];
    __syncthreads();
    return total;
}

__device__ inline float block_max(float v, float* partial) {
    for (int off = 16; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    float m = -INFINITY;
    for (int w = 0; w < WARPS; w++) m = fmaxf(m, partial[w]);
    __syncthreads();
    return m;
}

// Layer norm of each row (block per row, blockDim.x == ROW_BLOCK).
extern "C" __global__ void layernorm_rows(const float* __restrict__ x, const float* __restrict__ gamma,
                                          const float* __restrict__ beta, float eps, float* __restrict__ y, int rows,
                                          int cols) {
    __shared__ float partial[WARPS];
    int r = blockIdx.x;
    if (r >= rows) return;
    const float* row = x + (size_t)r * cols;
    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += ROW_BLOCK) s += row[c];
    float mean = block_sum(s, partial) / cols;
    float s2 = 0.f;
    for (int c = threadIdx.x; c < cols; c += ROW_BLOCK) {
        float d = row[c] - mean;
        s2 += d * d;
    }
    float var = block_sum(s2, partial) / cols;
    float rstd = 1.f / sqrtf(var + eps);
    float* out = y + (size_t)r * cols;
    for (int c = threadIdx.x; c < cols; c += ROW_BLOCK) out[c] = (row[c] - mean) * rstd * gamma[c] + beta[c];
}

// y[r] = a[r] . x, one warp per row.
extern "C" __global__ void matvec_warp(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y,
                                       int rows, int cols) {
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (r >= rows) return;
    const float* row = a + (size_t)r * cols;
    float s = 0.f;
    for (int c = lane; c < cols; c += 32) s += row[c] * x[c];
    for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
    if (lane == 0) y[r] = s;
}

// loss[r] = log(sum exp(z - max)) + max - z[label[r]], block per row, thread 0 writes.
extern "C" __global__ void xent_rows(const float* __restrict__ logits, const unsigned* __restrict__ labels,
                                     float* __restrict__ loss, int rows, int cols) {
    __shared__ float partial[WARPS];
    int r = blockIdx.x;
    if (r >= rows) return;
    const float* row = logits + (size_t)r * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += ROW_BLOCK) m = fmaxf(m, row[c]);
    m = block_max(m, partial);
    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += ROW_BLOCK) s += expf(row[c] - m);
    s = block_sum(s, partial);
    if (threadIdx.x == 0) loss[r] = logf(s) + m - row[labels[r]];
}
