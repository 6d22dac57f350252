fn main() {
    // sm_80: the oldest architecture with every operation of `device::tensor`.
    oxide_build::kernels("src/kernels.rs").arch("sm_80").compile();
}
