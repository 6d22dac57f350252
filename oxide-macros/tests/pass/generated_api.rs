// The launchers `#[kernel]` generates, pinned by coercing each to its exact signature.
#![deny(warnings)]

mod kernels {
    use oxide_rt::device::*;
    use oxide_rt::KernelArg;

    #[derive(Clone, Copy, KernelArg)]
    #[repr(C)]
    pub struct Params {
        pub a: f32,
        pub b: u64,
    }

    #[derive(Clone, Copy, KernelArg)]
    #[repr(C)]
    pub struct Pair(pub f32, pub f32);

    #[kernel(launch_bounds(256, 2), name = "axpy_v2")]
    pub fn axpy(p: Params, x: &[Pair], mut y: DisjointSlice<f32>) {
        let i = thread::index_1d();
        if let Some(y) = y.get_mut(i) {
            *y = p.a * x[i.get()].0 + x[i.get()].1 + p.b as f32;
        }
    }

    #[kernel(instantiate(f32, f64))]
    pub fn scale<T: Copy + core::ops::Mul<Output = T> + KernelArg>(a: T, x: &[T], mut y: DisjointSlice<T>) {
        let i = thread::index_1d();
        if let Some(y) = y.get_mut(i) {
            *y = a * x[i.get()];
        }
    }

    // `&[AtomicU32]` is a `CudaSlice<u32>` on the host.
    #[kernel]
    pub fn count(bins: &[core::sync::atomic::AtomicU32]) {
        bins[0].fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    }

    // `&[AtomicF32]` is a `CudaSlice<f32>` on the host: every atomic input is its plain type.
    #[kernel]
    pub fn fsum(x: &[f32], total: &[AtomicF32]) {
        if let Some(v) = x.get(thread::index().get()) {
            total[0].atomic_add(*v, Scope::Device);
        }
    }

    // Row-major 2-D and 3-D outputs take their width (and height) from the host.
    #[kernel(dims = 2)]
    pub fn plane(mut y: DisjointSlice2d<u32>) {
        if let Some(y) = y.get_mut() {
            *y = 1;
        }
    }
    #[kernel]
    pub fn volume(a: u32, mut y: DisjointSlice3d<u32>) {
        if let Some(y) = y.get_mut() {
            *y = a;
        }
    }

    // A fixed block shape from constants.
    pub const W: u32 = 32;
    #[kernel(dims = 2, block(W, W / 4))]
    pub fn tiled(mut y: DisjointSlice<u32>) {
        if let Some(y) = y.get_mut(thread::index()) {
            *y = thread::block_dim().x;
        }
    }

    // An argument named like the kernel still calls the kernel, not the argument.
    #[kernel]
    pub fn shadow(shadow: u32, mut y: DisjointSlice<u32>) {
        if let Some(y) = y.get_mut(thread::index_1d()) {
            *y = shadow;
        }
    }

    /// A raw identifier: the symbol and the launchers drop the `r#`.
    #[kernel(instantiate(u32))]
    pub fn r#type<T: KernelArg + Copy>(v: T, mut y: DisjointSlice<T>) {
        if let Some(y) = y.get_mut(thread::index_1d()) {
            *y = v;
        }
    }

    #[kernel]
    pub fn r#loop(mut y: DisjointSlice<u32>) {
        if let Some(y) = y.get_mut(thread::index_1d()) {
            *y = 1;
        }
    }
}

use kernels::{Pair, Params};

// Which structs may view dynamic shared memory: `Params` has 4 bytes of padding after `a`.
const _: () = assert!(<Pair as oxide_rt::KernelArg>::PADDING_FREE && <[Pair; 3] as oxide_rt::KernelArg>::PADDING_FREE);
const _: () = assert!(!<Params as oxide_rt::KernelArg>::PADDING_FREE && !<[Params; 2] as oxide_rt::KernelArg>::PADDING_FREE);
use cudarc::driver::{CudaSlice, CudaStream};
use oxide_rt::device::AtomicF32;
use std::sync::Arc;
use oxide_rt::{Dim3, Error, LaunchConfig, Slice2d, Slice3d};

type R = Result<(), Error>;

fn main() {
    let _: fn(&Arc<CudaStream>, Dim3, Dim3, Params, &CudaSlice<Pair>, &mut CudaSlice<f32>) -> R = kernels::launch_axpy;
    let _: fn(&Arc<CudaStream>, LaunchConfig, Params, &CudaSlice<Pair>, &mut CudaSlice<f32>) -> R = kernels::launch_axpy_with;
    let _: fn(Dim3, Dim3, Params, &[Pair], &mut [f32]) -> R = kernels::cpu_axpy;
    let _: fn(LaunchConfig, Params, &[Pair], &mut [f32]) -> R = kernels::cpu_axpy_with;

    let _: fn(&Arc<CudaStream>, LaunchConfig, f32, &CudaSlice<f32>, &mut CudaSlice<f32>) -> R = kernels::launch_scale_f32_with;
    let _: fn(&Arc<CudaStream>, Dim3, Dim3, f64, &CudaSlice<f64>, &mut CudaSlice<f64>) -> R = kernels::launch_scale_f64;
    let _: fn(LaunchConfig, f32, &[f32], &mut [f32]) -> R = kernels::cpu_scale_f32_with;
    let _: fn(Dim3, Dim3, f64, &[f64], &mut [f64]) -> R = kernels::cpu_scale_f64;

    let _: fn(LaunchConfig, u32, &mut [u32]) -> R = kernels::cpu_shadow_with;
    let _: fn(LaunchConfig, u32, &mut [u32]) -> R = kernels::cpu_type_u32_with;
    let _: fn(&Arc<CudaStream>, Dim3, Dim3, &mut CudaSlice<u32>) -> R = kernels::launch_loop;
    let _: fn(&Arc<CudaStream>, LaunchConfig, &mut CudaSlice<u32>) -> R = kernels::launch_tiled_with;
    let _: fn(LaunchConfig, &mut [u32]) -> R = kernels::cpu_tiled_with;

    let _: fn(&Arc<CudaStream>, LaunchConfig, &mut CudaSlice<u32>) -> R = kernels::launch_count_with;
    let _: fn(LaunchConfig, &[core::sync::atomic::AtomicU32]) -> R = kernels::cpu_count_with;

    let _: fn(&Arc<CudaStream>, LaunchConfig, &CudaSlice<f32>, &mut CudaSlice<f32>) -> R = kernels::launch_fsum_with;
    let _: fn(LaunchConfig, &[f32], &[AtomicF32]) -> R = kernels::cpu_fsum_with;

    let _: fn(&Arc<CudaStream>, LaunchConfig, Slice2d<'_, CudaSlice<u32>>) -> R = kernels::launch_plane_with;
    let _: fn(LaunchConfig, Slice2d<'_, [u32]>) -> R = kernels::cpu_plane_with;
    let _: fn(&Arc<CudaStream>, Dim3, Dim3, u32, Slice3d<'_, CudaSlice<u32>>) -> R = kernels::launch_volume;
    let _: fn(LaunchConfig, u32, Slice3d<'_, [u32]>) -> R = kernels::cpu_volume_with;
}
