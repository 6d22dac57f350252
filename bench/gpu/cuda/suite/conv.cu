// conv kernels of the suite, written the way a CUDA programmer would (int indices,
// __restrict__, no handicaps). extern "C" so the benchmark finds them by name.

// Weights passed by value (kernel parameter space), as oxide passes its [f32; N] arguments.
struct Taps15 { float w[15]; };
struct Weights9 { float w[9]; };

// y[i] = sum_k taps[k] * x[i + k - 7], zero outside. 1-D launch.
extern "C" __global__ void conv1d_15(const float* __restrict__ x, float* __restrict__ y, int n, Taps15 taps) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int k = 0; k < 15; k++) {
        int j = i + k - 7;
        if (j >= 0 && j < n) acc += taps.w[k] * x[j];
    }
    y[i] = acc;
}

// 3x3 convolution, zero padding. 2-D launch.
extern "C" __global__ void conv2d_3x3(const float* __restrict__ in, float* __restrict__ out, int width, int height,
                                      Weights9 w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float acc = 0.0f;
    for (int dy = 0; dy < 3; dy++) {
        for (int dx = 0; dx < 3; dx++) {
            int xx = x + dx - 1, yy = y + dy - 1;
            if (xx >= 0 && yy >= 0 && xx < width && yy < height) acc += w.w[dy * 3 + dx] * in[yy * width + xx];
        }
    }
    out[y * width + x] = acc;
}

#define GR 4
#define GBX 32
#define GBY 8

// Separable Gaussian, row pass: out[y][x] = sum_k taps[k] * in[y][clamp(x + k - R)], through a
// shared tile with halo. Blocks of 32 x 8.
extern "C" __global__ void gauss_rows(const float* __restrict__ in, float* __restrict__ out, int width, int height,
                                      Weights9 taps) {
    __shared__ float tile[GBY][GBX + 2 * GR];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * GBX + tx, y = blockIdx.y * GBY + ty;
    const float* row = in + min(y, height - 1) * width;
    tile[ty][tx + GR] = row[min(x, width - 1)];
    if (tx < GR) {
        tile[ty][tx] = row[max(x - GR, 0)];
        tile[ty][tx + GBX + GR] = row[min(x + GBX, width - 1)];
    }
    __syncthreads();
    if (x >= width || y >= height) return;
    float acc = 0.0f;
    for (int k = 0; k < 2 * GR + 1; k++) acc += taps.w[k] * tile[ty][tx + k];
    out[y * width + x] = acc;
}

// Separable Gaussian, column pass: out[y][x] = sum_k taps[k] * in[clamp(y + k - R)][x].
extern "C" __global__ void gauss_cols(const float* __restrict__ in, float* __restrict__ out, int width, int height,
                                      Weights9 taps) {
    __shared__ float tile[GBY + 2 * GR][GBX];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * GBX + tx, y = blockIdx.y * GBY + ty;
    int col = min(x, width - 1);
    tile[ty + GR][tx] = in[min(y, height - 1) * width + col];
    if (ty < GR) {
        tile[ty][tx] = in[max(y - GR, 0) * width + col];
        tile[ty + GBY + GR][tx] = in[min(y + GBY, height - 1) * width + col];
    }
    __syncthreads();
    if (x >= width || y >= height) return;
    float acc = 0.0f;
    for (int k = 0; k < 2 * GR + 1; k++) acc += taps.w[k] * tile[ty + k][tx];
    out[y * width + x] = acc;
}
