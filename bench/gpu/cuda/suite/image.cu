// image kernels of the suite, written the way a CUDA programmer would (int indices,
// __restrict__, no handicaps). extern "C" so the benchmark finds them by name.

// Interleaved RGB u8 to gray, fixed-point BT.601 weights. 2-D launch, one thread per pixel.
extern "C" __global__ void rgb_to_gray(const unsigned char* __restrict__ rgb, unsigned char* __restrict__ gray,
                                       int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    int i = y * width + x;
    unsigned r = rgb[3 * i], g = rgb[3 * i + 1], b = rgb[3 * i + 2];
    gray[i] = (unsigned char)((77 * r + 150 * g + 29 * b + 128) >> 8);
}

// Levels on interleaved RGBA u16: colour channels sqrt(clamp((t - 0.5) * contrast + 0.5 +
// brightness, 0, 1)) with t = v / 65535, rounded back to u16; alpha copied. One thread per pixel.
extern "C" __global__ void rgba16_levels(const unsigned short* __restrict__ px, unsigned short* __restrict__ out,
                                         int pixels, float contrast, float brightness) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= pixels) return;
    for (int c = 0; c < 3; c++) {
        float t = px[4 * i + c] / 65535.0f;
        t = fminf(fmaxf((t - 0.5f) * contrast + 0.5f + brightness, 0.0f), 1.0f);
        out[4 * i + c] = (unsigned short)(sqrtf(t) * 65535.0f + 0.5f);
    }
    out[4 * i + 3] = px[4 * i + 3];
}

// 3x3 box blur of interleaved RGB u8, clamped edges, per channel (sum + 4) / 9. 2-D launch.
extern "C" __global__ void box_blur_rgb(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                                        int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    unsigned sr = 0, sg = 0, sb = 0;
    for (int dy = -1; dy <= 1; dy++) {
        int yy = min(max(y + dy, 0), height - 1);
        for (int dx = -1; dx <= 1; dx++) {
            int xx = min(max(x + dx, 0), width - 1);
            int j = 3 * (yy * width + xx);
            sr += src[j];
            sg += src[j + 1];
            sb += src[j + 2];
        }
    }
    int i = 3 * (y * width + x);
    dst[i] = (unsigned char)((sr + 4) / 9);
    dst[i + 1] = (unsigned char)((sg + 4) / 9);
    dst[i + 2] = (unsigned char)((sb + 4) / 9);
}
