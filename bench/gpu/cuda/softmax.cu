// CUDA C++ twin of examples/softmax: one block of 256 threads per row; thread t handles
// columns t, t + 256, ...; rows of up to 256 * 16 columns stay in 16 registers per thread
// between the maximum, the sum and the write, longer rows take three passes. Block reductions:
// warp butterflies, the 8 warp results through shared memory, folded by every thread.
#define THREADS 256
#define WARPS (THREADS / 32)
#define PER 16

__device__ __forceinline__ float block_max(float v, float* partial) {
    for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o, 32));
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
    __syncthreads();
    float m = partial[0];
    for (int w = 1; w < WARPS; w++) m = fmaxf(m, partial[w]);
    __syncthreads();
    return m;
}

__device__ __forceinline__ float block_sum(float v, float* partial) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o, 32);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
    __syncthreads();
    float s = partial[0];
    for (int w = 1; w < WARPS; w++) s += partial[w];
    __syncthreads();
    return s;
}

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_rows(const float* __restrict__ x, unsigned rows, unsigned cols, float* __restrict__ y) {
    __shared__ float partial[WARPS];
    const unsigned row = blockIdx.x;
    if (row >= rows) return;
    const size_t t = threadIdx.x;
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    if (cols <= THREADS * PER) {
        float v[PER];
#pragma unroll
        for (int k = 0; k < PER; k++) v[k] = t + k * THREADS < cols ? xr[t + k * THREADS] : -__int_as_float(0x7f800000);
        float mx = v[0];
#pragma unroll
        for (int k = 1; k < PER; k++) mx = fmaxf(mx, v[k]);
        mx = block_max(mx, partial);
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < PER; k++) {
            v[k] = expf(v[k] - mx);
            s += v[k];
        }
        const float inv = 1.0f / block_sum(s, partial);
#pragma unroll
        for (int k = 0; k < PER; k++)
            if (t + k * THREADS < cols) yr[t + k * THREADS] = v[k] * inv;
    } else {
        float mx = -__int_as_float(0x7f800000);
        for (size_t j = t; j < cols; j += THREADS) mx = fmaxf(mx, xr[j]);
        mx = block_max(mx, partial);
        float s = 0.0f;
        for (size_t j = t; j < cols; j += THREADS) s += expf(xr[j] - mx);
        const float inv = 1.0f / block_sum(s, partial);
        for (size_t j = t; j < cols; j += THREADS) yr[j] = expf(xr[j] - mx) * inv;
    }
}
