// sparse kernels of the suite, written the way a CUDA programmer would (int indices,
// __restrict__, no handicaps). extern "C" so the benchmark finds them by name.

// y = A x, A in CSR, one thread per row.
extern "C" __global__ void spmv_csr(const unsigned* __restrict__ row_ptr, const unsigned* __restrict__ cols,
                                    const float* __restrict__ vals, const float* __restrict__ x,
                                    float* __restrict__ y, int rows) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float sum = 0.0f;
    for (int j = row_ptr[r]; j < (int)row_ptr[r + 1]; j++) sum += vals[j] * x[cols[j]];
    y[r] = sum;
}

// y = A x, A in column-major ELL (entry k of row r at k * rows + r), one thread per row.
extern "C" __global__ void spmv_ell(const unsigned* __restrict__ cols, const float* __restrict__ vals,
                                    const float* __restrict__ x, float* __restrict__ y, int rows, int width) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float sum = 0.0f;
    for (int k = 0; k < width; k++) {
        int j = k * rows + r;
        sum += vals[j] * x[cols[j]];
    }
    y[r] = sum;
}

// y = A x, A in CSR, one warp per row: lanes stride the row, shuffle reduction, lane 0 writes.
extern "C" __global__ void spmv_csr_warp(const unsigned* __restrict__ row_ptr, const unsigned* __restrict__ cols,
                                         const float* __restrict__ vals, const float* __restrict__ x,
                                         float* __restrict__ y, int rows) {
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    float sum = 0.0f;
    if (r < rows) {
        for (int j = row_ptr[r] + lane; j < (int)row_ptr[r + 1]; j += 32) sum += vals[j] * x[cols[j]];
    }
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffff, sum, offset);
    if (lane == 0 && r < rows) y[r] = sum;
}

// y[i] = x[idx[i]].
extern "C" __global__ void gather_indexed(const unsigned* __restrict__ idx, const float* __restrict__ x,
                                          float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = x[idx[i]];
}
