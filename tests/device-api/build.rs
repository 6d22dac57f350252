fn main() {
    oxide_build::kernels("src/kernels.rs")
        .arch("sm_90")
        // A no_std crate of this workspace, compiled into the kernels on the device.
        .device_dependency("shared-logic", "{ path = \"shared-logic\" }")
        .compile();
}
