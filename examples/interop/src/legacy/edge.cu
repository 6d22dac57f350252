// The edge rule for Rust kernels: oxide links this function into the Rust kernels' module on the
// device (LLVM IR from clang) and into the host binary for the CPU executor.
#include "edge.cuh"

extern "C" __host__ __device__ int clamp_to_edge(int v, int hi) { return clamp_index(v, hi); }
