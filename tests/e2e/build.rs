fn main() {
    // PTX for the lowest architecture, cubins for both (when ptxas is present).
    oxide_build::kernels("src/kernels.rs").arch("sm_80").arch("sm_90").compile();
}
