// atomic kernels of the suite, written the way a CUDA programmer would (int indices,
// __restrict__, no handicaps). extern "C" so the benchmark finds them by name.

// out[clamp((int)((x[i] - lo) * inv_width), 0, bins - 1)] += w[i]
extern "C" __global__ void scatter_add(const float* __restrict__ x, const float* __restrict__ w, int n, float lo,
                                       float inv_width, float* __restrict__ out, int bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int bin = (int)((x[i] - lo) * inv_width);
    bin = min(max(bin, 0), bins - 1);
    atomicAdd(&out[bin], w[i]);
}

// bins[keys[i] % nbins] += 1
extern "C" __global__ void histogram_keys(const unsigned* __restrict__ keys, int n, unsigned* __restrict__ bins,
                                          unsigned nbins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(&bins[keys[i] % nbins], 1u);
}

// Stream compaction: keys below threshold appended at atomicAdd(count, 1) (nvcc aggregates
// the warp's adds).
extern "C" __global__ void compact_keys(const unsigned* __restrict__ keys, int n, unsigned threshold,
                                        unsigned* __restrict__ out, unsigned long long cap,
                                        unsigned long long* __restrict__ count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned k = keys[i];
    if (k < threshold) {
        unsigned long long p = atomicAdd(count, 1ull);
        if (p < cap) out[p] = k;
    }
}
