// `box_filter` takes `const float*`: a buffer of f64 is refused at compile time.
use interop::kernels::{launch_box_filter, FilterParams};
use oxide_rt::cuda::CudaSlice;
use oxide_rt::host::Gpu;

fn main() -> Result<(), oxide_rt::Error> {
    let gpu = Gpu::new(0)?;
    let input: CudaSlice<f64> = gpu.stream.alloc_zeros(16).unwrap();
    let mut out: CudaSlice<f32> = gpu.stream.alloc_zeros(16).unwrap();
    unsafe { launch_box_filter(&gpu.stream, 1u32, 16u32, &input, &mut out, FilterParams::default()) }
}
