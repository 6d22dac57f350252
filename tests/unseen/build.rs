fn main() {
    oxide_build::kernels("src/kernels.rs").arch("sm_90").compile();
}
