// math kernels of the suite, written the way a CUDA programmer would (int indices,
// __restrict__, no handicaps). extern "C" so the benchmark finds them by name.

// out[y * width + x] = escape time of c = (x0 + x * step, y0 + y * step), at most max_iter.
extern "C" __global__ void mandelbrot(float x0, float y0, float step, unsigned max_iter, int width, int height,
                                      unsigned* __restrict__ out) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float cx = x0 + x * step;
    float cy = y0 + y * step;
    float zx = 0.f, zy = 0.f;
    unsigned n = 0;
    while (n < max_iter && zx * zx + zy * zy <= 4.f) {
        float t = zx * zx - zy * zy + cx;
        zy = 2.f * zx * zy + cy;
        zx = t;
        n++;
    }
    out[y * width + x] = n;
}

// y = exp(-x/2) sin(3x) + ln(1 + x^2) x^1.5 - sqrt(exp(-x/2) + ln(1 + x^2)) + cos(x) / (1 + x)
extern "C" __global__ void transcend_f32(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    float a = expf(-0.5f * v);
    float b = logf(1.f + v * v);
    float c = sinf(3.f * v);
    float d = powf(v, 1.5f);
    y[i] = a * c + b * d - sqrtf(a + b) + cosf(v) / (1.f + v);
}

extern "C" __global__ void transcend_f64(const double* __restrict__ x, double* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = x[i];
    double a = exp(-0.5 * v);
    double b = log(1.0 + v * v);
    double c = sin(3.0 * v);
    double d = pow(v, 1.5);
    y[i] = a * c + b * d - sqrt(a + b) + cos(v) / (1.0 + v);
}

// murmur3 finalizer of key ^ seed, eight xorshift-multiply rounds, mixed with popc/brev/clz.
extern "C" __global__ void bits_mix(const unsigned* __restrict__ keys, unsigned seed, unsigned* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned k = keys[i];
    unsigned h = k ^ seed;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    for (int r = 0; r < 8; r++) {
        h ^= h << 13;
        h ^= h >> 17;
        h ^= h << 5;
        h *= 0x9e3779b1u;
    }
    unsigned bits = __popc(k) + (__brev(k) >> 7) + __clz(k) * 0x01010101u;
    unsigned s = h & 31;
    out[i] = h ^ ((bits << s) | (bits >> ((32 - s) & 31)));
}
