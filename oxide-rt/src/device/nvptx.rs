//! NVPTX backend of the device API: PTX special registers and intrinsics.

use crate::dim::Dim3;
use core::arch::nvptx;

#[inline(always)]
pub fn thread_idx() -> Dim3 {
    // SAFETY: special-register reads have no preconditions inside a kernel.
    unsafe {
        Dim3::new(nvptx::_thread_idx_x() as u32, nvptx::_thread_idx_y() as u32, nvptx::_thread_idx_z() as u32)
    }
}

#[inline(always)]
pub fn block_idx() -> Dim3 {
    // SAFETY: special-register reads have no preconditions inside a kernel.
    unsafe { Dim3::new(nvptx::_block_idx_x() as u32, nvptx::_block_idx_y() as u32, nvptx::_block_idx_z() as u32) }
}

#[inline(always)]
pub fn block_dim() -> Dim3 {
    // SAFETY: special-register reads have no preconditions inside a kernel.
    unsafe { Dim3::new(nvptx::_block_dim_x() as u32, nvptx::_block_dim_y() as u32, nvptx::_block_dim_z() as u32) }
}

#[inline(always)]
pub fn grid_dim() -> Dim3 {
    // SAFETY: special-register reads have no preconditions inside a kernel.
    unsafe { Dim3::new(nvptx::_grid_dim_x() as u32, nvptx::_grid_dim_y() as u32, nvptx::_grid_dim_z() as u32) }
}

#[inline(always)]
pub fn sync_threads() {
    // SAFETY: `bar.sync 0`; CUDA's rule that all threads of the block reach it is documented
    // on `sync::sync_threads`.
    unsafe { nvptx::_syncthreads() }
}

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: `trap` aborts the kernel; the host sees a launch failure.
    unsafe { nvptx::trap() }
}
