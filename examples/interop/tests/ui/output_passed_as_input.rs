// `box_filter`'s `float* out` is an output: a shared borrow does not do.
use interop::kernels::{launch_box_filter, FilterParams};
use oxide_rt::cuda::CudaSlice;
use oxide_rt::host::Gpu;

fn main() -> Result<(), oxide_rt::Error> {
    let gpu = Gpu::new(0)?;
    let input: CudaSlice<f32> = gpu.stream.alloc_zeros(16).unwrap();
    let out: CudaSlice<f32> = gpu.stream.alloc_zeros(16).unwrap();
    unsafe { launch_box_filter(&gpu.stream, 1u32, 16u32, &input, &out, FilterParams::default()) }
}
