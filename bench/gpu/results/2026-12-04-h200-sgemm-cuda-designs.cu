// SGEMM design exploration (oxide session, 2026-12-04): which nvcc-compiled designs reach
// what fraction of cuBLAS on this GPU. Sizes are multiples of the tile; no edge checks.
template <int BK, bool VEC, int MAP>
__device__ __forceinline__ void sg(const float* __restrict__ A, const float* __restrict__ B,
                                   float* __restrict__ C, int M, int N, int K) {
  constexpr int BM = 128, BN = 128, AS = BM + 4;
  __shared__ __align__(16) float As[2][BK][AS];
  __shared__ __align__(16) float Bs[2][BK][BN];
  const int t = threadIdx.x;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  int rb, ro, cb, co;
  if (MAP == 0) { rb = 4 * (t / 16); ro = 64; cb = 4 * (t % 16); co = 64; }
  else { int w = t / 32, l = t % 32; rb = (w / 2) * 32 + (l / 8) * 4; ro = 16; cb = (w % 2) * 64 + (l % 8) * 4; co = 32; }
  constexpr int EA = BK / 2;           // A (and B) elements per thread per tile
  float ra[EA], rbv[EA];
  auto load = [&](int kt) {
    int k0 = kt * BK;
    if (VEC) {
#pragma unroll
      for (int r = 0; r < BK / 8; r++) {
        int idx = t + 256 * r, row = idx / (BK / 4), kq = idx % (BK / 4);
        float4 v = *reinterpret_cast<const float4*>(&A[(size_t)(row0 + row) * K + k0 + 4 * kq]);
        ra[4 * r] = v.x; ra[4 * r + 1] = v.y; ra[4 * r + 2] = v.z; ra[4 * r + 3] = v.w;
        int kr = t / 32 + 8 * r;
        float4 u = *reinterpret_cast<const float4*>(&B[(size_t)(k0 + kr) * N + col0 + 4 * (t % 32)]);
        rbv[4 * r] = u.x; rbv[4 * r + 1] = u.y; rbv[4 * r + 2] = u.z; rbv[4 * r + 3] = u.w;
      }
    } else {
      int k = t % BK, q = t / BK;
#pragma unroll
      for (int i = 0; i < EA; i++) ra[i] = A[(size_t)(row0 + q * EA + i) * K + k0 + k];
#pragma unroll
      for (int r = 0; r < BK / 8; r++)
#pragma unroll
        for (int i = 0; i < 4; i++) rbv[4 * r + i] = B[(size_t)(k0 + t / 32 + 8 * r) * N + col0 + 4 * (t % 32) + i];
    }
  };
  auto store = [&](int buf) {
    if (VEC) {
#pragma unroll
      for (int r = 0; r < BK / 8; r++) {
        int idx = t + 256 * r, row = idx / (BK / 4), kq = idx % (BK / 4);
#pragma unroll
        for (int j = 0; j < 4; j++) As[buf][4 * kq + j][row] = ra[4 * r + j];
      }
    } else {
      int k = t % BK, q = t / BK;
#pragma unroll
      for (int i = 0; i < EA; i += 4)
        *reinterpret_cast<float4*>(&As[buf][k][q * EA + i]) = make_float4(ra[i], ra[i + 1], ra[i + 2], ra[i + 3]);
    }
#pragma unroll
    for (int r = 0; r < BK / 8; r++)
      *reinterpret_cast<float4*>(&Bs[buf][t / 32 + 8 * r][4 * (t % 32)]) =
          make_float4(rbv[4 * r], rbv[4 * r + 1], rbv[4 * r + 2], rbv[4 * r + 3]);
  };
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; i++)
#pragma unroll
    for (int j = 0; j < 8; j++) acc[i][j] = 0.f;
  const int tiles = K / BK;
  load(0);
  store(0);
  __syncthreads();
  for (int kt = 0; kt < tiles; kt++) {
    int buf = kt & 1;
    if (kt + 1 < tiles) load(kt + 1);
#pragma unroll
    for (int kk = 0; kk < BK; kk++) {
      float4 a0 = *reinterpret_cast<const float4*>(&As[buf][kk][rb]);
      float4 a1 = *reinterpret_cast<const float4*>(&As[buf][kk][rb + ro]);
      float4 b0 = *reinterpret_cast<const float4*>(&Bs[buf][kk][cb]);
      float4 b1 = *reinterpret_cast<const float4*>(&Bs[buf][kk][cb + co]);
      float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] += av[i] * bv[j];
    }
    if (kt + 1 < tiles) store(buf ^ 1);
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; i++) {
    int r = row0 + rb + (i / 4) * ro + i % 4;
#pragma unroll
    for (int h = 0; h < 2; h++) {
      int c = col0 + cb + h * co;
      *reinterpret_cast<float4*>(&C[(size_t)r * N + c]) =
          make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]);
    }
  }
}

#define V(name, BK, VEC, MAP)                                                                  \
  extern "C" __global__ __launch_bounds__(256, 2) void name(const float* A, const float* B, \
                                                            float* C, int M, int N, int K) { \
    sg<BK, VEC, MAP>(A, B, C, M, N, K);                                                      \
  }
V(k8_s_q, 8, false, 0)
V(k8_v_q, 8, true, 0)
V(k8_s_w, 8, false, 1)
V(k8_v_w, 8, true, 1)
V(k16_s_q, 16, false, 0)
V(k16_v_q, 16, true, 0)
V(k16_s_w, 16, false, 1)
V(k16_v_w, 16, true, 1)
#define V1(name, BK, VEC, MAP)                                                                  \
  extern "C" __global__ __launch_bounds__(256, 1) void name(const float* A, const float* B, \
                                                            float* C, int M, int N, int K) { \
    sg<BK, VEC, MAP>(A, B, C, M, N, K);                                                      \
  }
V1(k8_v_w_1, 8, true, 1)
V1(k16_v_w_1, 16, true, 1)
V1(k8_s_q_1, 8, false, 0)
