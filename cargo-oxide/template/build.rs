fn main() {
    // The oldest GPU to run on: sm_80 A100, sm_86 RTX 30xx, sm_89 RTX 40xx / L4, sm_90 H100 / H200
    // (newer GPUs compile this PTX for themselves).
    oxide_build::kernels("src/kernels.rs").arch("sm_90").compile();
}
