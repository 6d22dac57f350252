fn main() {
    // wgmma is arch-specific: sm_90a alone (the module then runs on sm_90 GPUs only).
    oxide_build::kernels("src/kernels.rs").arch("sm_90a").compile();
}
