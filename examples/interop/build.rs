fn main() {
    oxide_build::kernels("src/kernels.rs")
        .arch("sm_90")
        // An existing CUDA C++ source: compiled by nvcc, launched through generated typed launchers.
        .cuda_source("src/legacy/filters.cu")
        // Its params struct, shared with the Rust kernel (generated once, layout proven).
        .shared_header("src/shared/filter.h")
        .cuda_include("src/shared")
        // `__host__ __device__` functions the Rust kernel calls: linked in as LLVM IR.
        .cuda_device_source("src/legacy/edge.cu")
        .compile();
}
