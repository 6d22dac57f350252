// The parameters of the box filter, shared by the CUDA C++ kernel (filters.cu) and the Rust
// kernel (kernels.rs): oxide-build generates the Rust struct from this definition and proves
// that C, the host and nvptx64 lay it out identically.
#pragma once

struct FilterParams {
    int width;
    int height;
    int radius;    // the box is (2 * radius + 1)^2 cells; edges repeat the nearest cell
    float scale;   // out = sum * scale + bias
    float bias;
};
