// network kernels of the suite, written the way a CUDA programmer would (int indices,
// __restrict__, no handicaps). extern "C" so the benchmark finds them by name.

// One compare-exchange step of a bitonic sort, one thread per key.
extern "C" __global__ void bitonic_step(unsigned* __restrict__ keys, unsigned j, unsigned k, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned ixj = i ^ j;
    if (i >= n || ixj <= i || ixj >= n) return;
    unsigned a = keys[i], b = keys[ixj];
    bool ascending = (i & k) == 0;
    if ((a > b) == ascending) {
        keys[i] = b;
        keys[ixj] = a;
    }
}

// One decimation-in-frequency stage of a batch of radix-2 FFTs (n points each, n/2 twiddles
// exp(-2 pi i t / n)), butterflies at distance h, one thread per butterfly.
extern "C" __global__ void fft_stage(const float2* __restrict__ twiddles, int n, float2* __restrict__ data,
                                     int half_total, int h) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= half_total) return;
    int j = t % h;
    int i0 = (t / h) * 2 * h + j;
    float2 w = twiddles[j * (n / (2 * h))];
    float2 a = data[i0], b = data[i0 + h];
    float dr = a.x - b.x, di = a.y - b.y;
    data[i0] = make_float2(a.x + b.x, a.y + b.y);
    data[i0 + h] = make_float2(dr * w.x - di * w.y, dr * w.y + di * w.x);
}
