// A kernel writes its atomics, so the GPU launcher borrows their buffer mutably: one buffer
// cannot be both a plain (read-only, `noalias`) input and the atomics threads add to.
use oxide_rt::device::*;

#[kernel]
pub fn sum_into(x: &[f32], sums: &[AtomicF32]) {
    if let Some(&v) = x.get(thread::index().get()) {
        sums[0].atomic_add(v, Scope::Device);
    }
}

fn main() {
    let ctx = oxide_rt::cuda::CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let mut buf = stream.alloc_zeros::<f32>(256).unwrap();
    let _ = launch_sum_into(&stream, 1u32, 256u32, &buf, &mut buf);
}
