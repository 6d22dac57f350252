// CUDA C++ twin of examples/stencil: 32x8 blocks, one output per thread, a (8+2)x(32+2)
// shared tile with a clamped one-cell halo loaded by the block's 256 threads in two rounds of
// consecutive cells, then wc*C followed by four fmaf (E, W, S, N order as in the oxide kernel).
#define BX 32
#define BY 8
#define TW (BX + 2)
#define TH (BY + 2)

extern "C" __global__ void stencil5(const float* __restrict__ in, unsigned rows, unsigned cols, float wc, float wn, float ws,
                                    float ww, float we, float* __restrict__ out) {
    __shared__ float tile[TH * TW];
    unsigned x0 = blockIdx.x * BX, y0 = blockIdx.y * BY;
    for (unsigned k = threadIdx.y * BX + threadIdx.x; k < TW * TH; k += BX * BY) {
        unsigned ty = k / TW, tx = k % TW;
        unsigned gy = min(y0 + ty > 0 ? y0 + ty - 1 : 0, rows - 1);
        unsigned gx = min(x0 + tx > 0 ? x0 + tx - 1 : 0, cols - 1);
        tile[k] = in[(size_t)gy * cols + gx];
    }
    __syncthreads();
    unsigned x = x0 + threadIdx.x, y = y0 + threadIdx.y;
    if (x < cols && y < rows) {
        unsigned tx = threadIdx.x + 1, ty = threadIdx.y + 1;
        float c = tile[ty * TW + tx], n = tile[(ty - 1) * TW + tx], s = tile[(ty + 1) * TW + tx];
        float w = tile[ty * TW + tx - 1], e = tile[ty * TW + tx + 1];
        out[(size_t)y * cols + x] = fmaf(we, e, fmaf(ww, w, fmaf(ws, s, fmaf(wn, n, wc * c))));
    }
}
