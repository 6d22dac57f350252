// CUDA C++ twin of examples/sgemm: C = alpha*A*B + beta*C, row-major, any m, n, k.
// Same algorithm as the oxide kernel: 128x128 block tile, BK = 8, 256 threads each computing
// 8x8 outputs (rows 4*tr..+4 and 64+4*tr..+4, columns likewise), A tile stored k-major with 4
// floats of padding, double-buffered shared memory with register prefetch (one barrier per
// k-tile), 128-bit shared loads, rows/columns clamped at the edges, only the last k-tile
// checked, 32-bit element offsets, launch bounds (256, 2).
#define BM 128
#define BN 128
#define BK 8
#define AS_STRIDE ((BM + 4) / 4)
#define BS_STRIDE (BN / 4)

extern "C" __global__ void __launch_bounds__(256, 2)
sgemm(unsigned m, unsigned n, unsigned k, float alpha, const float* __restrict__ a, unsigned long long a_len,
      const float* __restrict__ b, unsigned long long b_len, float beta, float* __restrict__ c, unsigned long long c_len) {
    if (m == 0 || n == 0) return;
    __shared__ float4 a_s[2 * BK * AS_STRIDE];
    __shared__ float4 b_s[2 * BK * BS_STRIDE];
    const unsigned t = threadIdx.x;
    const size_t row0 = (size_t)blockIdx.y * BM, col0 = (size_t)blockIdx.x * BN;
    const unsigned a_k = t % 8, a_q = t / 8, b_k = t / 32, b_q = t % 32;
    unsigned a_off[4], b_off[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        size_t r = row0 + 4 * a_q + i; if (r > m - 1) r = m - 1;
        size_t cc = col0 + 4 * b_q + i; if (cc > n - 1) cc = n - 1;
        a_off[i] = (unsigned)(r * k + a_k);
        b_off[i] = (unsigned)(b_k * (size_t)n + cc);
    }
    float ra[4], rb[4];
    auto load = [&](unsigned kt) {
        unsigned kb = kt * BK;
        if (kb + BK <= k) {
#pragma unroll
            for (int i = 0; i < 4; i++) { ra[i] = a[a_off[i] + kb]; rb[i] = b[b_off[i] + kb * n]; }
        } else {
#pragma unroll
            for (int i = 0; i < 4; i++) {
                ra[i] = a_k + kb < k ? a[a_off[i] + kb] : 0.0f;
                rb[i] = b_k + kb < k ? b[b_off[i] + kb * n] : 0.0f;
            }
        }
    };
    auto store = [&](unsigned buf) {
        a_s[(buf * BK + a_k) * AS_STRIDE + a_q] = make_float4(ra[0], ra[1], ra[2], ra[3]);
        b_s[(buf * BK + b_k) * BS_STRIDE + b_q] = make_float4(rb[0], rb[1], rb[2], rb[3]);
    };
    const unsigned w = t / 32, l = t % 32;
    const unsigned tr = (w / 2) * 4 + l / 8, tc = (w % 2) * 8 + l % 8;
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;
    const unsigned tiles = (k + BK - 1) / BK;
    if (tiles > 0) { load(0); store(0); }
    __syncthreads();
    for (unsigned kt = 0; kt < tiles; kt++) {
        const unsigned buf = kt & 1;
        const bool more = kt + 1 < tiles;
        if (more) load(kt + 1);
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            const float4 a0 = a_s[(buf * BK + kk) * AS_STRIDE + tr], a1 = a_s[(buf * BK + kk) * AS_STRIDE + 16 + tr];
            const float4 b0 = b_s[(buf * BK + kk) * BS_STRIDE + tc], b1 = b_s[(buf * BK + kk) * BS_STRIDE + 16 + tc];
            const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] += av[i] * bv[j];
        }
        if (more) store(buf ^ 1);
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const size_t r = row0 + (i < 4 ? 4 * tr + i : 64 + 4 * tr + i - 4);
        if (r >= m) continue;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const size_t col = col0 + (j < 4 ? 4 * tc + j : 64 + 4 * tc + j - 4);
            if (col < n) {
                float* cell = &c[r * n + col];
                *cell = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *cell;
            }
        }
    }
}
