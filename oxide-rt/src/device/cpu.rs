//! Host backend of the device API: the CPU executor sets a per-OS-thread context before it
//! runs each simulated GPU thread, and the device functions read it.

use crate::dim::Dim3;
use std::cell::Cell;

#[derive(Clone, Copy, Debug)]
pub(crate) struct ThreadCtx {
    pub thread_idx: Dim3,
    pub block_idx: Dim3,
    pub block_dim: Dim3,
    pub grid_dim: Dim3,
}

thread_local! {
    static CTX: Cell<Option<ThreadCtx>> = const { Cell::new(None) };
}

pub(crate) fn set_ctx(ctx: Option<ThreadCtx>) {
    CTX.with(|c| c.set(ctx));
}

fn ctx() -> ThreadCtx {
    match CTX.with(|c| c.get()) {
        Some(ctx) => ctx,
        // A device function called outside a launch is a programming error in host code, like
        // calling `threadIdx` from a CUDA host function (which does not even compile there).
        None => panic!("oxide device API called outside a kernel launch; use the kernel's cpu_<name> launcher"),
    }
}

pub fn thread_idx() -> Dim3 {
    ctx().thread_idx
}

pub fn block_idx() -> Dim3 {
    ctx().block_idx
}

pub fn block_dim() -> Dim3 {
    ctx().block_dim
}

pub fn grid_dim() -> Dim3 {
    ctx().grid_dim
}

pub fn sync_threads() {
    crate::host::cpu::barrier();
}
