//! TMA, the Tensor Memory Accelerator (sm_90): one thread copies a whole box of a tensor
//! between global and shared memory, in the background, described by a *tensor map* that the
//! host built ([`oxide_rt::host::TensorMap`](crate::host::TensorMap)).
//!
//! A kernel takes the map as an argument of type [`TensorMap<T, D>`] (`D` = 1..=5 dimensions);
//! the launcher passes the host's `&TensorMap<T, D>` by value in parameter space (128 bytes,
//! 64-byte aligned, what CUDA calls a `__grid_constant__` parameter), and the device reaches it
//! by its parameter address. Loads complete on an [`Mbarrier`]: the issuing thread announces the
//! box's bytes with [`Mbarrier::arrive_expect_tx`], and every thread waits for the phase.
//!
//! | operation | PTX instruction | needs |
//! | --- | --- | --- |
//! | [`TensorMap::load`] (`D` = 1..5) | `cp.async.bulk.tensor.Dd.shared::cluster.global.mbarrier::complete_tx::bytes` | sm_90 |
//! | [`TensorMap::store`] | `cp.async.bulk.tensor.Dd.global.shared::cta.bulk_group` | sm_90 |
//! | [`store_commit`] | `cp.async.bulk.commit_group` | sm_90 |
//! | [`store_wait`], [`store_wait_read`] | `cp.async.bulk.wait_group N`, `cp.async.bulk.wait_group.read N` | sm_90 |
//!
//! ```ignore
//! #[kernel(block(128))]
//! pub fn tile_sum(a: TensorMap<f32, 2>, mut out: DisjointSlice<f32>) {
//!     let tile = shared_array!(align(128) f32, 64 * 32);
//!     let bars = mbarriers!(1).init_async(1);
//!     let b = thread::block_idx();
//!     if thread::thread_idx().x == 0 {
//!         bars.get(0).arrive_expect_tx(a.box_bytes());
//!         a.load(tile, [0, 32 * b.x as i32], bars.get(0));   // innermost coordinate first
//!     }
//!     bars.get(0).wait_parity(0);
//!     // ... tile holds rows 32 b.x .. 32 b.x + 32, columns 0..64 (zeros outside the tensor)
//! }
//! ```
//!
//! # The rules
//! Coordinates are in elements, innermost dimension first, and may lie partly or wholly
//! outside the tensor: those elements of the box read as zero (loads) or are not written
//! (stores). The innermost coordinate times the element size must be a multiple of 16 bytes
//! (e.g. of 4 for `f32`, of 8 for `Bf16`): on any other the hardware raises an
//! illegal-instruction fault, which ends the CUDA context; oxide checks it and panics instead.
//! The shared tile must hold the whole box and start aligned to 128 bytes (256, 512 or 1024
//! with a 32, 64 or 128-byte swizzle): [`shared_array!`](crate::shared_array)`(align(N) T, len)`
//! declares such a tile, and [`dynamic_shared_aligned`](super::shared::dynamic_shared_aligned)
//! cuts one from dynamic shared memory (the only kind above 48 KiB). Both are checked (a panic
//! otherwise, after the load's barrier got the box's bytes so no waiter hangs), so a TMA copy
//! never writes outside its tile. Reading a loaded tile before its barrier phase completed, or
//! writing a tile a store still reads (before [`store_wait_read`]), is a race, as in CUDA.
//!
//! On the CPU executor the copies run at once, with the GPU's layout (box elements innermost
//! first, zeros outside the tensor, the swizzle's 16-byte chunk permutation), completing the
//! barrier's transaction bytes as the hardware does: `cpu_*` launchers take maps of host memory
//! (`oxide_rt::host::TensorMap::host` / `host_mut`), `launch_*` maps of device memory.

use super::mbarrier::Mbarrier;
use super::shared::{SharedElem, SharedSlice};
use core::marker::PhantomData;

#[cfg(not(target_arch = "nvptx64"))]
use super::cpu_hopper as imp;
#[cfg(target_arch = "nvptx64")]
use super::nvptx_hopper as imp;

/// What the launcher passes beside the map itself: the box's extents (innermost first, 1 past
/// the rank), its size in bytes, the swizzle span in bytes (0 for none), the rank, and whether
/// the host allowed stores (an exclusive borrow).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct TensorMapInfo {
    pub box_dims: [u32; 5],
    pub box_bytes: u32,
    pub swizzle: u32,
    pub rank: u32,
    pub writable: u32,
}

// SAFETY: `#[repr(C)]` of nine `u32`s: no padding, every bit pattern valid, the same layout on the host and nvptx64, so the pushed bytes are the value the entry reads.
#[cfg(not(target_arch = "nvptx64"))]
unsafe impl cudarc::driver::DeviceRepr for TensorMapInfo {}

/// On the CPU executor, what a kernel's [`TensorMap`] points at: a tensor in host memory
/// (`oxide_rt::host::TensorMap::host`), which the executor's TMA copies read and write.
#[cfg(not(target_arch = "nvptx64"))]
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct CpuTensorMap {
    /// The tensor's first element, its size in bytes, and whether stores may write it.
    pub base: *mut u8,
    pub elem: usize,
    pub writable: bool,
    /// Extents and strides (elements) of the tensor, the box's extents and the swizzle span in
    /// bytes (0 for none), innermost first; `rank` of the 5 are used.
    pub rank: usize,
    pub dims: [u64; 5],
    pub strides: [u64; 5],
    pub box_dims: [u32; 5],
    pub swizzle: u32,
}

/// The 128 bytes of a tensor map as the kernel's parameter list declares them; the IR stage of
/// oxide-build makes the parameter 64-byte aligned, and the kernel reads only its address.
#[doc(hidden)]
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct TensorMapParam(pub [u64; 16]);

/// A TMA tensor map of a `D`-dimensional tensor of `T`, as a kernel receives it (see the
/// [module docs](self)). `Copy`: every thread holds the same one.
pub struct TensorMap<T, const D: usize> {
    addr: u64,
    info: TensorMapInfo,
    _t: PhantomData<T>,
}

impl<T, const D: usize> Clone for TensorMap<T, D> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const D: usize> Copy for TensorMap<T, D> {}

impl<T: SharedElem, const D: usize> TensorMap<T, D> {
    /// # Safety
    /// `addr` is the generic address of the kernel parameter holding the launcher's map of `D`
    /// dimensions of `T`, and `info` its box (what the generated kernel entry passes).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn __from_param(addr: u64, info: TensorMapInfo) -> Self {
        const { assert!(D >= 1 && D <= 5, "a TMA tensor map has 1 to 5 dimensions") };
        TensorMap { addr, info, _t: PhantomData }
    }

    /// The box's extents in elements, innermost dimension first.
    #[inline(always)]
    pub fn box_dims(self) -> [u32; D] {
        core::array::from_fn(|i| self.info.box_dims[i])
    }

    /// Elements in one box.
    #[inline(always)]
    pub fn box_len(self) -> usize {
        self.info.box_bytes as usize / core::mem::size_of::<T>()
    }

    /// Bytes of one box: what a load adds to its barrier's transaction count.
    #[inline(always)]
    pub fn box_bytes(self) -> u32 {
        self.info.box_bytes
    }

    /// The generic address of the map in parameter space, for inline PTX (`asm!`).
    #[inline(always)]
    pub fn as_u64(self) -> u64 {
        self.addr
    }

    /// Where a tile must start: 128 bytes, or the swizzle pattern's span (8 rows of it).
    #[inline(always)]
    fn tile_align(self) -> usize {
        if self.info.swizzle == 0 {
            128
        } else {
            8 * self.info.swizzle as usize
        }
    }

    /// The tile's address after the checks that keep a copy inside it and the hardware from
    /// faulting; on a failure, `bar` (a load's barrier) first gets the box's bytes, so the
    /// block's waiters are released instead of hanging, and the launch then reports the panic.
    #[inline(always)]
    #[track_caller]
    fn checked_tile(self, tile: SharedSlice<T>, inner: i32, bar: Option<Mbarrier>) -> *mut T {
        let p = tile.as_ptr();
        let align = self.tile_align();
        let size = core::mem::size_of::<T>() as i64;
        let fault = if tile.len() < self.box_len() {
            1
        } else if (p as usize) % align != 0 {
            2
        } else if (inner as i64 * size) % 16 != 0 {
            3
        } else {
            0
        };
        if fault != 0 {
            if let Some(bar) = bar {
                bar.complete_tx(self.box_bytes());
            }
            bad_tile(fault, tile.len(), self.box_len(), align, inner);
        }
        p
    }

    /// Starts loading the box at `coords` (elements, innermost first) into `tile`, completing
    /// `bar`'s transaction bytes when it lands (PTX `cp.async.bulk.tensor.Dd...complete_tx`,
    /// sm_90). One thread issues it; announce [`box_bytes`](Self::box_bytes) on `bar` first
    /// (or in the same phase). Panics when `tile` is shorter than the box or misaligned, or
    /// when `coords[0]` is not a multiple of 16 bytes (the GPU would fault: see the rules); the
    /// barrier then gets the box's bytes, so waiting threads are not left hanging.
    ///
    /// The block need not wait for the load before it exits: a copy still in flight then
    /// lands in no later block's memory or barrier (checked on the H200 with 21 120 blocks
    /// reusing the memory of blocks that left with 64 KiB in flight: `tests/hopper`,
    /// `tma_loads_in_flight_at_block_exit_stay_in_their_block`).
    #[inline(always)]
    #[track_caller]
    pub fn load(self, tile: SharedSlice<T>, coords: [i32; D], bar: Mbarrier) {
        let dst = self.checked_tile(tile, coords[0], Some(bar));
        // SAFETY: `addr` is this launch's map (from the entry), whose box fits `tile` (checked), `tile` is aligned (checked), `bar` a live barrier of this block; `D` is the map's rank (the type the launcher checked).
        unsafe { imp::tma_load::<D>(dst as *mut u8, self.addr, coords, bar.as_ptr()) }
    }

    /// Starts storing `tile` to the box at `coords` (PTX `cp.async.bulk.tensor.Dd.global.shared::cta.bulk_group`,
    /// sm_90); elements outside the tensor are not written. Panics unless the host built the map
    /// with `TensorMap::new_mut`. Call [`fence_proxy_async`](super::mbarrier::fence_proxy_async)
    /// after writing the tile and before the store, then [`store_commit`] and [`store_wait`].
    ///
    /// # Safety
    /// Nothing else in the launch, nor any kernel running beside it, accesses the box's elements
    /// of the tensor while the store is in flight: no other store to an overlapping box (another
    /// block's, or this thread's earlier one that [`store_wait`] has not retired) and no read of
    /// them through another argument. The coordinates are plain numbers a thread chooses, so no
    /// type can keep two blocks' boxes apart (give each block its own box, e.g. from its block
    /// index, as `DisjointTiles` does for ordinary stores).
    #[inline(always)]
    #[track_caller]
    pub unsafe fn store(self, tile: SharedSlice<T>, coords: [i32; D]) {
        if self.info.writable == 0 {
            read_only();
        }
        let src = self.checked_tile(tile, coords[0], None);
        // SAFETY: as in `load`; the tile holds the whole box.
        unsafe { imp::tma_store::<D>(src as *const u8, self.addr, coords) }
    }
}

/// Closes this thread's group of TMA stores (`cp.async.bulk.commit_group`, sm_90).
#[inline(always)]
#[track_caller]
pub fn store_commit() {
    imp::tma_store_commit()
}

/// Waits until at most `N` of this thread's store groups are in flight
/// (`cp.async.bulk.wait_group N`, sm_90): their writes are then visible in global memory.
#[inline(always)]
#[track_caller]
pub fn store_wait<const N: u32>() {
    imp::tma_store_wait::<N>()
}

/// Waits until at most `N` of this thread's store groups still read their tiles
/// (`cp.async.bulk.wait_group.read N`, sm_90): the tiles may then be written again.
#[inline(always)]
#[track_caller]
pub fn store_wait_read<const N: u32>() {
    imp::tma_store_wait_read::<N>()
}

#[cold]
#[inline(never)]
#[track_caller]
fn read_only() -> ! {
    panic!("TMA store through a read-only tensor map: build it with `TensorMap::new_mut` on the host")
}

#[cold]
#[inline(never)]
#[track_caller]
fn bad_tile(fault: u32, len: usize, box_len: usize, align: usize, inner: i32) -> ! {
    match fault {
        1 => panic!("a TMA tile of {len} elements cannot hold the map's box of {box_len}"),
        2 => {
            panic!("a TMA tile must start {align}-byte aligned: declare it with `shared_array!(align({align}) T, len)`")
        }
        _ => panic!("a TMA box's innermost coordinate ({inner}) must be a multiple of 16 bytes of elements"),
    }
}
