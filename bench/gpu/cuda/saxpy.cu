// CUDA C++ twin of examples/saxpy: block 256, 4 elements per thread interleaved within the
// block (thread t of block b owns b*4*256 + t + k*256, k < 4), all loads before the stores.
#define PER 4
extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y, unsigned long long n) {
    const unsigned long long base = (unsigned long long)blockIdx.x * blockDim.x * PER + threadIdx.x;
    float v[PER];
#pragma unroll
    for (int k = 0; k < PER; k++) {
        const unsigned long long i = base + (unsigned long long)k * blockDim.x;
        if (i < n) v[k] = a * x[i] + y[i];
    }
#pragma unroll
    for (int k = 0; k < PER; k++) {
        const unsigned long long i = base + (unsigned long long)k * blockDim.x;
        if (i < n) y[i] = v[k];
    }
}
