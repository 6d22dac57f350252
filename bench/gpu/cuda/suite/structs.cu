// struct kernels of the suite, written the way a CUDA programmer would (int indices,
// __restrict__, no handicaps). extern "C" so the benchmark finds them by name.

struct StepParams {
    float dt, gravity, floor, restitution, drag;
};

// One Euler step of structure-of-arrays particles, in place: drag, gravity, move, floor bounce.
extern "C" __global__ void particles_step(StepParams p, float* __restrict__ px, float* __restrict__ py,
                                          float* __restrict__ pz, float* __restrict__ vx, float* __restrict__ vy,
                                          float* __restrict__ vz, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float u = vx[i] * p.drag, w = vz[i] * p.drag;
    float v = vy[i] - p.gravity * p.dt;
    float x = px[i] + u * p.dt, y = py[i] + v * p.dt, z = pz[i] + w * p.dt;
    if (y < p.floor) {
        y = p.floor;
        v = -v * p.restitution;
    }
    px[i] = x;
    py[i] = y;
    pz[i] = z;
    vx[i] = u;
    vy[i] = v;
    vz[i] = w;
}

struct __align__(16) Mat4 {
    float m[4][4];
};

__device__ inline Mat4 mul(const Mat4& a, const Mat4& b) {
    Mat4 c;
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int col = 0; col < 4; col++) {
            float s = 0.f;
#pragma unroll
            for (int k = 0; k < 4; k++) s += a.m[r][k] * b.m[k][col];
            c.m[r][col] = s;
        }
    return c;
}

// out[i] = a[i] * b[i], 4x4 row-major matrices.
extern "C" __global__ void mat4_batch(const Mat4* __restrict__ a, const Mat4* __restrict__ b, Mat4* __restrict__ out,
                                      int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = mul(a[i], b[i]);
}
