// CUDA C++ twin of examples/sgemm: C = alpha*A*B + beta*C, row-major, any m, n, k.
// Same algorithm as the oxide kernel: 128x128 block tile, BK = 16, 256 threads each computing
// 8x8 outputs (rows 4*tr..+4 and 64+4*tr..+4, columns likewise), A tile stored k-major with 4
// floats of padding, double-buffered shared memory with register prefetch (one barrier per
// k-tile), 128-bit shared loads; global reads in chunks of 4 floats of a row, one 128-bit load
// when the matrix's start, row length and column are 16-byte aligned, zeros outside the
// matrix; launch bounds (256, 2).
#define BM 128
#define BN 128
#define BK 16
#define AS_STRIDE (BM + 4)
#define BS_STRIDE (BN / 4)

// Four floats of row `row` from column `col`, zero outside the `rows x cols` matrix `p`.
__device__ __forceinline__ float4 chunk(const float* __restrict__ p, size_t rows, size_t cols, size_t row, size_t col,
                                        bool aligned) {
    if (row < rows && col + 4 <= cols) {
        const float* q = p + row * cols + col;
        if (aligned) return __ldg(reinterpret_cast<const float4*>(q));
        return make_float4(__ldg(q), __ldg(q + 1), __ldg(q + 2), __ldg(q + 3));
    }
    float v[4];
#pragma unroll
    for (int j = 0; j < 4; j++) v[j] = row < rows && col + j < cols ? p[row * cols + col + j] : 0.0f;
    return make_float4(v[0], v[1], v[2], v[3]);
}

extern "C" __global__ void __launch_bounds__(256, 2)
sgemm(unsigned m, unsigned n, unsigned k, float alpha, const float* __restrict__ a, unsigned long long a_len,
      const float* __restrict__ b, unsigned long long b_len, float beta, float* __restrict__ c, unsigned long long c_len) {
    if (m == 0 || n == 0) return;
    __shared__ float4 a_s4[2 * BK * AS_STRIDE / 4];
    __shared__ float4 b_s[2 * BK * BS_STRIDE];
    float* a_f = reinterpret_cast<float*>(a_s4);
    const unsigned t = threadIdx.x;
    const size_t row0 = (size_t)blockIdx.y * BM, col0 = (size_t)blockIdx.x * BN;
    const bool a_al = ((size_t)a | (size_t)k * 4) % 16 == 0, b_al = ((size_t)b | (size_t)n * 4) % 16 == 0;
    const unsigned a_row = t / 4, a_k = 4 * (t % 4), b_k = t / 32, b_q = t % 32;
    float4 r[4];
    auto load = [&](unsigned kt) {
        size_t kb = (size_t)kt * BK;
        r[0] = chunk(a, m, k, row0 + a_row, kb + a_k, a_al);
        r[1] = chunk(a, m, k, row0 + a_row + 64, kb + a_k, a_al);
        r[2] = chunk(b, k, n, kb + b_k, col0 + 4 * b_q, b_al);
        r[3] = chunk(b, k, n, kb + b_k + 8, col0 + 4 * b_q, b_al);
    };
    auto store = [&](unsigned buf) {
        const float x[4] = {r[0].x, r[0].y, r[0].z, r[0].w}, y[4] = {r[1].x, r[1].y, r[1].z, r[1].w};
#pragma unroll
        for (int j = 0; j < 4; j++) {
            unsigned at = (buf * BK + a_k + j) * AS_STRIDE + a_row;
            a_f[at] = x[j];
            a_f[at + 64] = y[j];
        }
        b_s[(buf * BK + b_k) * BS_STRIDE + b_q] = r[2];
        b_s[(buf * BK + b_k + 8) * BS_STRIDE + b_q] = r[3];
    };
    const unsigned tr = t / 16, tc = t % 16;
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
            const float4* ar = &a_s4[(buf * BK + kk) * AS_STRIDE / 4];
            const float4 a0 = ar[tr], a1 = ar[16 + tr];
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
        const size_t row = row0 + (i < 4 ? 4 * tr + i : 64 + 4 * tr + i - 4);
        if (row >= m) continue;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const size_t col = col0 + (j < 4 ? 4 * tc + j : 64 + 4 * tc + j - 4);
            if (col < n) {
                float* cell = &c[row * n + col];
                *cell = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *cell;
            }
        }
    }
}
