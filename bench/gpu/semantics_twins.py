# How much of oxide's gap on the frozen suite is the Rust semantics themselves? Each kernel in
# CUDA C++ three ways, compiled by NVRTC for sm_90 and timed on the same buffers:
#   int   - the suite's twin as a CUDA programmer writes it (int indices, no checks);
#   u64   - the same with size_t indices (Rust's usize);
#   rust  - size_t indices and a check before every read that Rust checks, trapping on failure
#           (what `input[i]` means: the same reads, the same branches to a panic);
#   versioned - one launch-uniform test that the largest index fits the buffer, then the u64
#           body without checks, or the checked one (both bodies in the kernel).
# Usage on the GPU machine: python3 bench/gpu/semantics_twins.py
import cupy as cp, numpy as np

SRC = r'''
typedef unsigned long long u64;
#define INFINITY __int_as_float(0x7f800000)
#define RD(p, i) ((CHK && (u64)(i) >= len) ? (__trap(), p[0]) : p[i])

template <typename I, bool CHK>
__device__ void box27(const float* __restrict__ in, u64 len, float* __restrict__ out, I nx, I ny, I nz) {
    I x = (I)blockIdx.x * blockDim.x + threadIdx.x, y = (I)blockIdx.y * blockDim.y + threadIdx.y,
      z = (I)blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;
    I zs[3] = {z > 0 ? z - 1 : 0, z, z + 1 < nz ? z + 1 : nz - 1};
    I ys[3] = {y > 0 ? y - 1 : 0, y, y + 1 < ny ? y + 1 : ny - 1};
    I xs[3] = {x > 0 ? x - 1 : 0, x, x + 1 < nx ? x + 1 : nx - 1};
    float sum = 0.0f;
#pragma unroll
    for (int a = 0; a < 3; a++)
#pragma unroll
        for (int b = 0; b < 3; b++)
#pragma unroll
            for (int c = 0; c < 3; c++) sum += RD(in, (zs[a] * ny + ys[b]) * nx + xs[c]);
    out[(z * ny + y) * nx + x] = sum * (1.0f / 27.0f);
}

template <typename I, bool CHK>
__device__ void stencil7(const float* __restrict__ in, u64 len, float* __restrict__ out, I nx, I ny, I nz, float c0,
                         float c1) {
    I x = (I)blockIdx.x * blockDim.x + threadIdx.x, y = (I)blockIdx.y * blockDim.y + threadIdx.y,
      z = (I)blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;
    I plane = nx * ny, i = (z * ny + y) * nx + x;
    float v;
    if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1)
        v = RD(in, i);
    else
        v = c0 * RD(in, i) +
            c1 * (RD(in, i - 1) + RD(in, i + 1) + RD(in, i - nx) + RD(in, i + nx) + RD(in, i - plane) + RD(in, i + plane));
    out[i] = v;
}

template <typename I, bool CHK>
__device__ void conv2d(const float* __restrict__ in, u64 len, float* __restrict__ out, I cols, I rows,
                       const float* __restrict__ w) {
    I x = (I)blockIdx.x * blockDim.x + threadIdx.x, y = (I)blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= cols || y >= rows) return;
    float acc = 0.0f;
#pragma unroll
    for (int dy = 0; dy < 3; dy++)
#pragma unroll
        for (int dx = 0; dx < 3; dx++) {
            I xx = x + dx, yy = y + dy;
            if (xx >= 1 && yy >= 1 && xx - 1 < cols && yy - 1 < rows) acc += w[dy * 3 + dx] * RD(in, (yy - 1) * cols + (xx - 1));
        }
    out[y * cols + x] = acc;
}

template <typename I, bool CHK>
__device__ void blur_rgb(const unsigned char* __restrict__ src, u64 len, unsigned char* __restrict__ dst, I w, I h) {
    I x = (I)blockIdx.x * blockDim.x + threadIdx.x, y = (I)blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    unsigned s[3] = {0, 0, 0};
    I ys[3] = {y > 0 ? y - 1 : 0, y, y + 1 < h ? y + 1 : h - 1};
    I xs[3] = {x > 0 ? x - 1 : 0, x, x + 1 < w ? x + 1 : w - 1};
#pragma unroll
    for (int a = 0; a < 3; a++)
#pragma unroll
        for (int b = 0; b < 3; b++) {
            I j = ys[a] * w + xs[b];  // a pixel index, checked against the pixel count
            if (CHK && (u64)j >= len) __trap();
            s[0] += src[3 * j]; s[1] += src[3 * j + 1]; s[2] += src[3 * j + 2];
        }
    I i = 3 * (y * w + x);
    dst[i] = (s[0] + 4) / 9; dst[i + 1] = (s[1] + 4) / 9; dst[i + 2] = (s[2] + 4) / 9;
}

__device__ inline float block_reduce(float v, float* partial, bool is_max) {
    for (int off = 16; off > 0; off /= 2) {
        float o = __shfl_xor_sync(0xffffffffu, v, off);
        v = is_max ? fmaxf(v, o) : v + o;
    }
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    float t = is_max ? -INFINITY : 0.f;
    for (int k = 0; k < 8; k++) t = is_max ? fmaxf(t, partial[k]) : t + partial[k];
    __syncthreads();
    return t;
}

template <typename I, bool CHK>
__device__ void xent(const float* __restrict__ logits, u64 len, const unsigned* __restrict__ labels, u64 nlabels,
                     float* __restrict__ loss, I rows, I cols) {
    __shared__ float partial[8];
    I r = blockIdx.x;
    if (r >= rows) return;
    if (CHK && ((u64)(r + 1) * cols > len)) return;  // logits.get(r * cols..(r + 1) * cols)
    const float* row = logits + (u64)r * cols;
    float m = -INFINITY;
    for (I c = threadIdx.x; c < cols; c += 256) m = fmaxf(m, row[c]);
    m = block_reduce(m, partial, true);
    float s = 0.f;
    for (I c = threadIdx.x; c < cols; c += 256) s += expf(row[c] - m);
    s = block_reduce(s, partial, false);
    if (threadIdx.x == 0) {
        if (CHK && (u64)r >= nlabels) __trap();
        unsigned label = labels[r];
        if (CHK && (u64)label >= (u64)cols) __trap();
        loss[r] = logf(s) + m - row[label];
    }
}

#define VARIANTS(NAME, FN, PARAMS, ARGS)                                                                   \
    extern "C" __global__ void NAME##_int PARAMS(int) { FN<int, false> ARGS; }                             \
    extern "C" __global__ void NAME##_u64 PARAMS(u64) { FN<u64, false> ARGS; }                             \
    extern "C" __global__ void NAME##_rust PARAMS(u64) { FN<u64, true> ARGS; }                            \
    extern "C" __global__ void NAME##_versioned PARAMS(u64) {                                              \
        if (FIT) FN<u64, false> ARGS; else FN<u64, true> ARGS;                                            \
    }
#define FIT (nx * ny * nz <= len)
#define P3(I) (const float* in, u64 len, float* out, I nx, I ny, I nz)
VARIANTS(box27, box27, P3, (in, len, out, nx, ny, nz))
#define P7(I) (const float* in, u64 len, float* out, I nx, I ny, I nz, float c0, float c1)
VARIANTS(stencil7, stencil7, P7, (in, len, out, nx, ny, nz, c0, c1))
#undef FIT
#define FIT (cols * rows <= len)
#define PC(I) (const float* in, u64 len, float* out, I cols, I rows, const float* w)
VARIANTS(conv2d, conv2d, PC, (in, len, out, cols, rows, w))
#undef FIT
#define FIT (w * h <= len)
#define PB(I) (const unsigned char* src, u64 len, unsigned char* dst, I w, I h)
VARIANTS(blur_rgb, blur_rgb, PB, (src, len, dst, w, h))
#undef FIT
#define FIT (rows * cols <= len && rows <= nl)
#define PX(I) (const float* lg, u64 len, const unsigned* lb, u64 nl, float* loss, I rows, I cols)
VARIANTS(xent, xent, PX, (lg, len, lb, nl, loss, rows, cols))
'''

mod = cp.RawModule(code=SRC, options=("--std=c++17",))


def median_ms(f, grid, block, args, reps=30):
    for _ in range(3):
        f(grid, block, args)
    s, e = cp.cuda.Event(), cp.cuda.Event()
    ts = []
    for _ in range(reps):
        s.record(); f(grid, block, args); e.record(); e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e))
    return float(np.median(ts))


def row(name, grid, block, args_of, outs):
    """args_of(I) -> argument tuple with index parameters of type I; outs: buffers to compare."""
    times, results = {}, {}
    for v, I in (("int", np.int32), ("u64", np.uint64), ("rust", np.uint64), ("versioned", np.uint64)):
        f = mod.get_function(f"{name}_{v}")
        for o in outs:
            o.fill(0)
        times[v] = (median_ms(f, grid, block, args_of(I)), f.num_regs)
        results[v] = [o.copy() for o in outs]
    same = all(bool(cp.all(a == b)) for v in ("u64", "rust", "versioned") for a, b in zip(results["int"], results[v]))
    t0 = times["int"][0]
    cells = "  ".join(f"{v} {t:.4f} ms ({r} regs) {t / t0:.3f}" for v, (t, r) in times.items())
    print(f"{name:9s} {cells}  results identical: {same}", flush=True)


cp.random.seed(1)
nx, ny, nz = 512, 512, 256
n = nx * ny * nz
x = cp.random.rand(n, dtype=cp.float32); y = cp.zeros(n, dtype=cp.float32)
g3 = ((nx + 31) // 32, (ny + 3) // 4, (nz + 1) // 2)
for rnd in range(2):
    row("box27", g3, (32, 4, 2), lambda I: (x, np.uint64(n), y, I(nx), I(ny), I(nz)), [y])
nz = 512; n = nx * ny * nz
x7 = cp.random.rand(n, dtype=cp.float32); y7 = cp.zeros(n, dtype=cp.float32)
g7 = ((nx + 31) // 32, (ny + 3) // 4, (nz + 1) // 2)
for rnd in range(2):
    row("stencil7", g7, (32, 4, 2), lambda I: (x7, np.uint64(n), y7, I(nx), I(ny), I(nz), np.float32(0.6), np.float32(0.4 / 6)), [y7])
del x7, y7
W, H = 16384, 8192
a = cp.random.rand(W * H, dtype=cp.float32); b = cp.zeros(W * H, dtype=cp.float32)
w9 = cp.random.rand(9, dtype=cp.float32)
g2 = (W // 32, H // 8)
for rnd in range(2):
    row("conv2d", g2, (32, 8), lambda I: (a, np.uint64(W * H), b, I(W), I(H), w9), [b])
del a, b
src = cp.random.randint(0, 256, size=W * H * 3, dtype=cp.uint8); dst = cp.zeros(W * H * 3, dtype=cp.uint8)
for rnd in range(2):
    row("blur_rgb", g2, (32, 8), lambda I: (src, np.uint64(W * H), dst, I(W), I(H)), [dst])
del src, dst
rows, cols = 65536, 2048
z = cp.random.rand(rows * cols, dtype=cp.float32); lab = cp.random.randint(0, cols, size=rows, dtype=cp.uint32)
loss = cp.zeros(rows, dtype=cp.float32)
for rnd in range(2):
    row("xent", (rows,), (256,), lambda I: (z, np.uint64(rows * cols), lab, np.uint64(rows), loss, I(rows), I(cols)), [loss])
