// An "existing" CUDA C++ source, untouched by oxide: a 2-D box filter and a templated threshold.
#include "filter.h"
#include "edge.cuh"

// One thread per output pixel; rows then columns of the box, in that order (the Rust kernel and
// the CPU reference sum in the same order).
__global__ void box_filter(const float* in, float* out, FilterParams p) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= p.width || y >= p.height) return;
    float sum = 0.0f;
    for (int dy = -p.radius; dy <= p.radius; ++dy) {
        int yy = clamp_index(y + dy, p.height - 1);
        for (int dx = -p.radius; dx <= p.radius; ++dx) {
            sum += in[yy * p.width + clamp_index(x + dx, p.width - 1)];
        }
    }
    out[y * p.width + x] = __fmaf_rn(sum, p.scale, p.bias);
}

// 1 where the value reaches `level`, else 0; instantiated for float and double below.
template <typename T>
__global__ void threshold(const T* in, T* out, T level, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] >= level ? T(1) : T(0);
}
template __global__ void threshold<float>(const float*, float*, float, unsigned);
template __global__ void threshold<double>(const double*, double*, double, unsigned);
