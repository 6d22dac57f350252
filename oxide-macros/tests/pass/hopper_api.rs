// The launchers of kernels with TMA tensor maps and cluster shapes, pinned by coercing each to
// its exact signature: the host passes `&oxide_rt::host::TensorMap<T, D>` on both executors.
#![deny(warnings)]

mod kernels {
    use oxide_rt::device::*;

    #[kernel(block(128), cluster(2, 1, 1))]
    pub fn tiles(a: TensorMap<f32, 2>, scale: f32, b: TensorMap<Bf16, 3>, mut out: DisjointSlice<f32>) {
        let _ = (a.box_bytes(), b.box_len());
        if let Some(o) = out.get_mut(thread::index()) {
            *o = scale * cluster::ctarank() as f32;
        }
    }
}

use oxide_rt::cuda::{CudaSlice, CudaStream};
use oxide_rt::host::TensorMap;
use oxide_rt::{Bf16, Dim3, Error, LaunchConfig};
use std::sync::Arc;

type R = Result<(), Error>;

fn main() {
    let _: fn(&Arc<CudaStream>, Dim3, Dim3, &TensorMap<'_, f32, 2>, f32, &TensorMap<'_, Bf16, 3>, &mut CudaSlice<f32>) -> R =
        kernels::launch_tiles;
    let _: fn(LaunchConfig, &TensorMap<'_, f32, 2>, f32, &TensorMap<'_, Bf16, 3>, &mut [f32]) -> R = kernels::cpu_tiles_with;
}
