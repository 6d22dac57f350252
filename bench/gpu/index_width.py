# Does 64-bit index math cost nvcc what it costs oxide? The suite's conv1d/conv2d/stencil7 twins with
# int indices against the same code with size_t indices (everything else equal), CuPy/NVRTC, sm_90.
import cupy as cp, numpy as np
SRC = r'''
template <typename I>
__device__ void conv1d(const float* __restrict__ x, float* __restrict__ y, I n, const float* __restrict__ w) {
    I i = (I)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    #pragma unroll
    for (int k = 0; k < 15; k++) {
        I j = i + k - 7;
        if (i + k >= 7 && j < n) acc += w[k] * x[j];
    }
    y[i] = acc;
}
template <typename I>
__device__ void conv2d(const float* __restrict__ in, float* __restrict__ out, I width, I height, const float* __restrict__ w) {
    I x = (I)blockIdx.x * blockDim.x + threadIdx.x;
    I y = (I)blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float acc = 0.0f;
    #pragma unroll
    for (int dy = 0; dy < 3; dy++)
    #pragma unroll
        for (int dx = 0; dx < 3; dx++) {
            I xx = x + dx, yy = y + dy;
            if (xx >= 1 && yy >= 1 && xx - 1 < width && yy - 1 < height) acc += w[dy * 3 + dx] * in[(yy - 1) * width + (xx - 1)];
        }
    out[y * width + x] = acc;
}
extern "C" __global__ void conv1d_int(const float* x, float* y, int n, const float* w) { conv1d<int>(x, y, n, w); }
extern "C" __global__ void conv1d_u64(const float* x, float* y, unsigned long long n, const float* w) { conv1d<unsigned long long>(x, y, n, w); }
extern "C" __global__ void conv2d_int(const float* a, float* b, int w_, int h, const float* w) { conv2d<int>(a, b, w_, h, w); }
extern "C" __global__ void conv2d_u64(const float* a, float* b, unsigned long long w_, unsigned long long h, const float* w) { conv2d<unsigned long long>(a, b, w_, h, w); }
'''
m = cp.RawModule(code=SRC, options=('-arch=sm_90', '-O3' if False else '--std=c++17'))
def bench(f, grid, block, args, reps=50):
    f(grid, block, args); cp.cuda.Device().synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    best = 1e9
    for _ in range(5):
        s.record()
        for _ in range(reps): f(grid, block, args)
        e.record(); e.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(s, e) / reps)
    return best
w = cp.random.rand(16, dtype=cp.float32)
n = 1 << 27
x = cp.random.rand(n, dtype=cp.float32); y = cp.empty_like(x)
g = ((n + 255) // 256,)
t_int = bench(m.get_function('conv1d_int'), g, (256,), (x, y, np.int32(n), w))
t_u64 = bench(m.get_function('conv1d_u64'), g, (256,), (x, y, np.uint64(n), w))
print(f"conv1d_15 2^27: int {t_int:.4f} ms, size_t {t_u64:.4f} ms, ratio {t_u64 / t_int:.3f}")
W, H = 16384, 8192
a = cp.random.rand(W * H, dtype=cp.float32); b = cp.empty_like(a)
g2 = (W // 32, H // 8)
t_int = bench(m.get_function('conv2d_int'), g2, (32, 8), (a, b, np.int32(W), np.int32(H), w))
t_u64 = bench(m.get_function('conv2d_u64'), g2, (32, 8), (a, b, np.uint64(W), np.uint64(H), w))
print(f"conv2d_3x3 16384x8192: int {t_int:.4f} ms, size_t {t_u64:.4f} ms, ratio {t_u64 / t_int:.3f}")
