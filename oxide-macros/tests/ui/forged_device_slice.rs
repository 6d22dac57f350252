// A safe impl of cudarc's `DevicePtr`/`DeviceSlice` may report any pointer and length; the
// launchers take only cudarc's own buffers (sealed `DeviceInput`), so this cannot reach a kernel.
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceSlice, SyncOnDrop};
use std::sync::Arc;

mod kernels {
    use oxide_rt::device::*;

    #[kernel]
    pub fn copy(x: &[f32], mut y: DisjointSlice<f32>) {
        let i = thread::index();
        if let (Some(y), Some(x)) = (y.get_mut(i), x.get(i.get())) {
            *y = *x;
        }
    }
}

/// Claims ten times the elements of the allocation it wraps.
struct Longer(CudaSlice<f32>);

impl DeviceSlice<f32> for Longer {
    fn len(&self) -> usize {
        self.0.len() * 10
    }
    fn stream(&self) -> &Arc<CudaStream> {
        self.0.stream()
    }
}

impl DevicePtr<f32> for Longer {
    fn device_ptr<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        self.0.device_ptr(stream)
    }
}

fn run(stream: &Arc<CudaStream>, x: Longer, y: &mut CudaSlice<f32>) {
    let _ = kernels::launch_copy(stream, 1u32, 32u32, &x, y);
}

fn main() {}
