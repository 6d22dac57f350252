fn main() {
    // wgmma is arch-specific: sm_90a alone (H100 / H200 / GH200 only).
    oxide_build::kernels("src/kernels.rs").arch("sm_90a").compile();
}
