// CUDA C++ twin of examples/histogram: 256 bins per block in shared memory updated with
// block-scope atomics, one 32-bit word (4 bytes) per load in a grid-stride loop, the partial
// last word counted by thread 0, then non-empty bins merged with device-scope atomicAdd.
// Same block size (256) and grid (<= 1024 blocks) as the oxide kernel.
extern "C" __global__ void __launch_bounds__(1024)
histogram256(const unsigned* __restrict__ words, unsigned long long words_len, unsigned long long n,
             unsigned* hist, unsigned long long hist_len) {
    __shared__ unsigned bins[256];
    for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) bins[b] = 0;
    __syncthreads();
    const size_t full = n / 4 < words_len ? n / 4 : words_len;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t me = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (size_t i = me; i < full; i += stride) {
        const unsigned w = words[i];
        atomicAdd_block(&bins[w & 0xff], 1u);
        atomicAdd_block(&bins[(w >> 8) & 0xff], 1u);
        atomicAdd_block(&bins[(w >> 16) & 0xff], 1u);
        atomicAdd_block(&bins[w >> 24], 1u);
    }
    if (me == 0 && n % 4 != 0 && full < words_len) {
        const unsigned w = words[full];
        for (unsigned byte = 0; byte < n % 4; byte++) atomicAdd_block(&bins[(w >> (8 * byte)) & 0xff], 1u);
    }
    __syncthreads();
    for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) {
        const unsigned count = bins[b];
        if (count != 0) atomicAdd(&hist[b], count);
    }
}
