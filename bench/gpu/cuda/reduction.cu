// CUDA C++ twin of examples/reduction: grid-stride accumulation in four registers per thread,
// butterfly warp reduction, warp sums through shared memory, one device-scope atomicAdd per
// block. Same block size (256), grid (<= 1024 blocks, 4 elements per thread at least) and
// 64-bit indices as the oxide kernel.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o, 32);
    return v;
}

extern "C" __global__ void __launch_bounds__(1024)
reduce_sum(const float* __restrict__ x, unsigned long long n, float* out, unsigned long long out_len) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    while (i + 3 * stride < n) {
        a0 += x[i];
        a1 += x[i + stride];
        a2 += x[i + 2 * stride];
        a3 += x[i + 3 * stride];
        i += 4 * stride;
    }
    while (i < n) {
        a0 += x[i];
        i += stride;
    }
    float v = warp_sum((a0 + a1) + (a2 + a3));
    __shared__ float partial[32];
    const unsigned lane = threadIdx.x % 32, w = threadIdx.x / 32;
    if (lane == 0) partial[w] = v;
    __syncthreads();
    if (w == 0) {
        const unsigned warps = blockDim.x / 32;
        float t = warp_sum(lane < warps ? partial[lane] : 0.0f);
        if (lane == 0) atomicAdd(out, t);
    }
}
