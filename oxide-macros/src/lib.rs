//! oxide's proc macros, used through `oxide_rt` (`oxide_rt::kernel`, `oxide_rt::KernelArg`,
//! and `use oxide_rt::device::*;` in a kernels module).
//!
//! * [`macro@kernel`]: a function of the kernels module becomes a GPU kernel with typed
//!   launchers for the GPU and the CPU executor (options and argument kinds are listed there).
//! * [`macro@KernelArg`]: a `#[repr(C)]` struct passed to kernels by value.
//!
//! Structure: `ast` (from syn) → `valid` (spanned checks, all errors collected) → `expand`.

mod ast;
mod derive;
mod expand;
mod manifest;
mod valid;

use proc_macro::TokenStream;

/// Turns a function of the kernels module into a GPU kernel plus typed launchers.
///
/// ```ignore
/// // src/kernels.rs, built for the GPU by build.rs: oxide_build::kernels("src/kernels.rs").compile();
/// use oxide_rt::device::*;
///
/// #[kernel]
/// pub fn saxpy(a: f32, x: &[f32], mut y: DisjointSlice<f32>) {
///     let i = thread::index();
///     if let (Some(yi), Some(xi)) = (y.get_mut(i), x.get(i.get())) {
///         *yi = a * xi + *yi;
///     }
/// }
///
/// // src/main.rs: `mod kernels;`, then
/// kernels::launch_saxpy(&gpu.stream, grid, block, 2.0, &x_gpu, &mut y_gpu)?; // on the GPU
/// kernels::cpu_saxpy(grid, block, 2.0, &x, &mut y)?; // the same kernel on the CPU
/// ```
///
/// The README's "Your own crate" is this crate in full (built and run by cargo-oxide's tests).
///
/// # What it generates
///
/// For `#[kernel] pub fn k(..)`:
/// * on nvptx64, an exported `ptx-kernel` entry (slices travel as pointer + length);
/// * on the host, four launchers with the function's visibility, each returning
///   `Result<(), oxide_rt::Error>`: a geometry, shared-memory size or buffer the kernel cannot
///   take is an `Err` naming the kernel, never a panic, and so is a kernel that panicked (from
///   `oxide_rt::host::synchronize(&stream)` on the GPU, from the launcher on the CPU):
///   * `launch_k(stream, grid, block, args..)` and `launch_k_with(stream, config, args..)` on the
///     GPU (`stream: &Arc<oxide_rt::cuda::CudaStream>`, e.g. `&oxide_rt::host::Gpu::new(0)?.stream`);
///   * `cpu_k(grid, block, args..)` and `cpu_k_with(config, args..)` on the CPU executor.
///
///   `grid`/`block` take a `u32`, `(u32, u32)` or `(u32, u32, u32)`; the `_with` forms take an
///   `oxide_rt::LaunchConfig`, which also carries the dynamic shared memory a kernel reads with
///   `shared::dynamic_shared` (`LaunchConfig::new(grid, block).shared_mem_bytes(n)`).
///
/// An `unsafe fn` kernel (one taking raw pointers) gets `unsafe` launchers.
///
/// # Options
///
/// `#[kernel(option, ..)]`, comma separated:
///
/// | option | effect |
/// | --- | --- |
/// | `dims = 1`, `2` or `3` | the launchers refuse geometries using more dimensions, and the device index math drops the rest |
/// | `block(x[, y[, z]])` | the only block shape (constants allowed): the launchers refuse any other, the PTX carries `.reqntid`, and `thread::block_dim()` is a constant on the device, so tile indexing by `thread_idx()` needs no bounds check |
/// | `cluster(x[, y[, z]])` | thread-block clusters of this shape (literals, at most 8 blocks; sm_90): the PTX carries `.reqnctapercluster`, the launchers (GPU and CPU) refuse a grid that is not a whole number of clusters, and the CPU executor runs the blocks of each cluster together (see `oxide_rt::device::cluster`) |
/// | `launch_bounds(max_threads[, min_blocks])` | the launchers refuse larger blocks; the PTX carries `.maxntid` (and `.minnctapersm`), which lets ptxas budget registers |
/// | `name = "symbol"` | the kernel's PTX symbol (default: the function's name); the launchers keep the function's name |
/// | `instantiate(T, ..)` | one kernel per listed type of a generic kernel (see below) |
///
/// **Names.** A symbol must be unique in the whole kernels module tree: two kernels of one
/// symbol in one module are a compile error naming `__oxide_kernel_name_<symbol>_used_twice`; in
/// different modules the device build fails with a duplicate-symbol error — rename one with
/// `name = "..."`.
///
/// **Generic kernels.** `#[kernel(instantiate(f32, f64))] pub fn scale<T: ..>(..)` exports one
/// kernel per listed type, suffixed with the type's name: symbols `scale_f32`, `scale_f64`, and
/// launchers `launch_scale_f32[_with]`, `cpu_scale_f32[_with]`, … with `T` replaced in every
/// argument. Several type parameters take tuples: `instantiate((f32, u32))` → `scale_f32_u32`.
///
/// # Arguments
///
/// What each launcher takes for each kind of kernel argument (the output types' exact ownership
/// rules are in their docs, `oxide_rt::device::*`):
///
/// | kernel argument | `launch_*` (GPU) takes | `cpu_*` takes | who may write |
/// | --- | --- | --- | --- |
/// | scalar, array of scalars, `#[derive(KernelArg)] #[repr(C)]` struct | the value | the value | nobody (by value) |
/// | `&[T]` (read-only input) | `&CudaSlice<T>` / `&CudaView<T>` | `&[T]` | nobody |
/// | `&[AtomicU32]`, `&[AtomicF32]`, … (shared output) | `&mut CudaSlice<u32>`, `&mut CudaSlice<f32>`, … (the plain type; `&mut`: the kernel writes it, so later uses on any stream wait for the launch) | `&[AtomicU32]`, `&[AtomicF32]`, … | every thread, atomically |
/// | `Matrix<T>` (row-major input) | `Matrix::new(&buf, rows, cols)` | `Matrix::new(&vec[..], rows, cols)` | nobody |
/// | `Matrix<AtomicF32>`, … (row-major shared output) | `MatrixMut::new(&mut buf, rows, cols)`, `buf` of the plain type | `Matrix::new(&atomics[..], rows, cols)` | every thread, atomically |
/// | `TensorMap<T, D>` (TMA, `D` = 1..=5; sm_90) | `&oxide_rt::host::TensorMap<T, D>` of a device buffer (`TensorMap::new`) | the same type, of host memory (`TensorMap::host`, `host_mut`) | the block's TMA stores, through a map from `TensorMap::new_mut` |
/// | `DisjointSlice<T>` | `&mut CudaSlice<T>` / `&mut CudaViewMut<T>` | `&mut [T]` | thread `i` element `i` (`thread::index()`) |
/// | `DisjointSlice2d<T>` | `Slice2d::new(&mut buf, cols)` | `Slice2d::new(&mut vec, cols)` | thread `(x, y)` element `y * cols + x` |
/// | `DisjointSlice3d<T>` | `Slice3d::new(&mut buf, cols, rows)` | `Slice3d::new(&mut vec, cols, rows)` | thread `(x, y, z)` element `(z * rows + y) * cols + x` |
/// | `DisjointRows<T>` | `Slice2d::new(&mut buf, cols)` | `Slice2d::new(&mut vec, cols)` | block `b` row `b`; its thread `t` columns `t, t+B, …` |
/// | `DisjointTiles<T, TH, TW, G, DOWN>` | `Slice2d::new(&mut buf, cols)` | `Slice2d::new(&mut vec, cols)` | block `(bx, by)` the `TH x TW` tile at `(by*TH, bx*TW)` (`DOWN`: `(bx*TH, by*TW)`); its thread `(tx, ty)` rows and columns in groups of `G`, round-robin |
/// | `DisjointMmaTiles<T, BM, BN, WM, WN>` | `Slice2d::new(&mut buf, cols)` | `Slice2d::new(&mut vec, cols)` | block `(bx, by)` the `BM x BN` tile at `(by*BM, bx*BN)`; its warp `w` the `WM x WN` sub-tile `w`; its lane the elements of its MMA accumulator fragments |
/// | `DisjointWgmmaTiles<T, BM, BN, WG0, GROUP>` | `Slice2d::new(&mut buf, cols)` | `Slice2d::new(&mut vec, cols)` | block `(bx, by)` a `BM x BN` tile (in groups of `GROUP` tile-rows); its warpgroup `WG0 + c` rows `64c..64c+64` of it; its thread the elements of its wgmma accumulator |
/// | `DisjointPersistentWgmmaTiles<T, BM, BN, WG0, GROUP>` | `Slice2d::new(&mut buf, cols)` | `Slice2d::new(&mut vec, cols)` | block `b` of `B` tiles `b, b + B, …` in turn (`next_tile()`); in each, as `DisjointWgmmaTiles` |
/// | `DisjointAppend<T>` | `Append::new(&mut buf, &mut count)`, `count` a `CudaSlice<u64>` | `Append::new(&mut vec, &mut count)`, `count` a `[u64]` | whoever pushes: each `push` claims the next element |
/// | `DisjointPerWarp<T>` | as `DisjointSlice` | as `DisjointSlice` | warp `w` of the launch element `w`, by its lane 0 |
/// | `DisjointPerBlock<T>` | as `DisjointSlice` | as `DisjointSlice` | block `b` element `b`, by its thread 0 |
/// | `DisjointXorPairs<T>` | `Pairs::new(&mut buf, d)` | `Pairs::new(&mut vec, d)` | thread `i` the pair `(i, i ^ d)` when `i < i ^ d` |
/// | `DisjointButterflies<T>` | `Pairs::new(&mut buf, h)` | `Pairs::new(&mut vec, h)` | thread `t` the pair `(i0, i0 + h)`, `i0 = (t / h) * 2h + t % h` |
/// | `DisjointChunks<T, N>` | as `DisjointSlice` | as `DisjointSlice` | thread `i` elements `i*N..(i+1)*N` |
/// | `DisjointStrided<T, N>` | as `DisjointSlice` | as `DisjointSlice` | `N` per thread, interleaved in the block (coalesced) |
///
/// `CudaSlice`/`CudaView`/`CudaViewMut` are cudarc's, re-exported as `oxide_rt::cuda`;
/// `Matrix`, `Slice2d`, `Slice3d`, `Pairs` and `Append` are
/// `oxide_rt::{Matrix, Slice2d, Slice3d, Pairs, Append}`.
/// A `&mut [T]` shared by all threads would be a data race and is not accepted; raw pointers only
/// in `unsafe fn` kernels.
#[proc_macro_attribute]
pub fn kernel(args: TokenStream, input: TokenStream) -> TokenStream {
    let item = syn::parse_macro_input!(input as syn::ItemFn);
    let kernel = ast::Kernel::from_syn(args.into(), &item);
    match valid::check(&kernel) {
        Ok(()) => expand::kernel(&kernel).into(),
        Err(err) => expand::fallback(&item, err).into(),
    }
}

/// For a `#[repr(C)]` struct passed to kernels by value: checks that every field is a kernel
/// argument type and proves at compile time that the host layout equals the nvptx64 layout (a
/// mismatch is a compile error). The struct must be defined in the kernels module.
///
/// ```ignore
/// #[derive(Clone, Copy, KernelArg)]
/// #[repr(C)]
/// pub struct Params { pub scale: f32, pub n: u32 }
/// ```
#[proc_macro_derive(KernelArg)]
pub fn derive_kernel_arg(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    derive::kernel_arg(&input).into()
}
