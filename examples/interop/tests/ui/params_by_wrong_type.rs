// The params struct is passed by value as the shared header's `FilterParams`, nothing else.
use interop::kernels::launch_box_filter;
use oxide_rt::cuda::CudaSlice;
use oxide_rt::host::Gpu;

fn main() -> Result<(), oxide_rt::Error> {
    let gpu = Gpu::new(0)?;
    let input: CudaSlice<f32> = gpu.stream.alloc_zeros(16).unwrap();
    let mut out: CudaSlice<f32> = gpu.stream.alloc_zeros(16).unwrap();
    unsafe { launch_box_filter(&gpu.stream, 1u32, 16u32, &input, &mut out, (4i32, 4i32, 1i32, 1.0f32, 0.0f32)) }
}
