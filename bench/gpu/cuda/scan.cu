// CUDA C++ twin of examples/scan: reduce-then-scan with 1024-thread blocks, one element per
// thread. A level reads e[j] = in[j * stride + stride - 1]; scan_block_totals leaves each full
// block's total at out[b * 1024 + 1023]; the totals are scanned one level up; scan_blocks scans
// each block (shfl_up warp scans, warp totals scanned by warp 0) and adds offsets[b - 1].
#define BLOCK 1024
#define WARPS (BLOCK / 32)

__device__ __forceinline__ unsigned load(const unsigned* in, unsigned long long stride, unsigned long long n, unsigned long long j) {
    return j < n ? in[j * stride + stride - 1] : 0u;
}

__device__ __forceinline__ unsigned warp_sum(unsigned v) {
    for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off, 32);
    return v;
}

extern "C" __global__ void scan_block_totals(const unsigned* __restrict__ in, unsigned long long stride, unsigned long long n,
                                             unsigned* __restrict__ out, unsigned long long out_len) {
    __shared__ unsigned partial[WARPS];
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    unsigned v = warp_sum(load(in, stride, n, i));
    if (lane == 31) partial[warp] = v;
    __syncthreads();
    if (warp == WARPS - 1) {
        unsigned total = warp_sum(lane < WARPS ? partial[lane] : 0u);
        if (lane == 31 && i < out_len) out[i] = total;
    }
}

extern "C" __global__ void scan_blocks(const unsigned* __restrict__ in, unsigned long long stride, unsigned long long n,
                                       const unsigned* __restrict__ offsets, unsigned* __restrict__ out, unsigned long long out_len) {
    __shared__ unsigned partial[WARPS];
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    unsigned v = load(in, stride, n, i);
    for (unsigned d = 1; d < 32; d *= 2) {
        unsigned t = __shfl_up_sync(0xffffffffu, v, d, 32);
        if (lane >= d) v += t;
    }
    if (lane == 31) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        unsigned s = lane < WARPS ? partial[lane] : 0u;
        for (unsigned d = 1; d < 32; d *= 2) {
            unsigned t = __shfl_up_sync(0xffffffffu, s, d, 32);
            if (lane >= d) s += t;
        }
        if (lane < WARPS) partial[lane] = s;
    }
    __syncthreads();
    if (warp > 0) v += partial[warp - 1];
    if (blockIdx.x > 0) v += offsets[blockIdx.x - 1];
    if (i < out_len) out[i] = v;
}
