fn main() {
    oxide_build::kernels("src/kernels.rs")
        .arch("sm_90")
        // An existing CUDA C++ source: compiled by nvcc, launched through generated typed launchers.
        .cuda_source("src/legacy/filters.cu")
        // Its params struct, shared with the Rust kernel (generated once, layout proven).
        .shared_header("src/shared/filter.h")
        .cuda_include("src/shared")
        .compile();
}
