// CUDA C++ twin of examples/transpose: a (64, 8) block moves a 64x64 tile through shared
// memory padded to 65 columns, 8 elements per thread, every element bounds-checked, 64-bit
// indices, as the oxide kernel.
#define TILE 64
#define ROWS 8
extern "C" __global__ void __launch_bounds__(512)
transpose(unsigned rows, unsigned cols, const float* __restrict__ in, unsigned long long in_len,
          float* __restrict__ out, unsigned long long out_len) {
    __shared__ float tile[TILE][TILE + 1];
    const size_t tx = threadIdx.x, ty = threadIdx.y;
    const size_t bx = (size_t)blockIdx.x * TILE, by = (size_t)blockIdx.y * TILE;
    size_t c = bx + tx;
#pragma unroll
    for (size_t j = 0; j < TILE; j += ROWS) {
        const size_t r = by + ty + j;
        if (r < rows && c < cols) tile[ty + j][tx] = in[r * cols + c];
    }
    __syncthreads();
    c = by + tx;
#pragma unroll
    for (size_t j = 0; j < TILE; j += ROWS) {
        const size_t r = bx + ty + j;
        if (r < cols && c < rows) out[r * rows + c] = tile[tx][ty + j];
    }
}
