fn main() {
    // PTX for sm_80 (A100) and newer, with cubins for sm_80 and sm_90 (H100 / H200).
    oxide_build::kernels("src/kernels.rs").arch("sm_80").arch("sm_90").compile();
}
