//! oxide's proc macros.
//!
//! # `#[kernel]`
//! One function in a kernels module becomes
//! * on nvptx64, an exported `ptx-kernel` entry whose slices travel as pointer + length, and
//! * on the host, `launch_<name>` / `launch_<name>_with` (typed, checked launches through
//!   cudarc) and `cpu_<name>` / `cpu_<name>_with` (the same kernel on the CPU executor).
//!
//! Options: `#[kernel(launch_bounds(max_threads[, min_blocks]), name = "symbol", instantiate(..))]`.
//!
//! **Names.** The exported PTX symbol is the function's name, or `name = "symbol"`. It must be
//! unique in the whole kernels module tree: two kernels of one symbol in one module are a
//! compile error naming `__oxide_kernel_name_<symbol>_used_twice`; in different modules the
//! device build fails with a duplicate-symbol error — rename one with `name = "..."`. The host
//! launchers keep the function's name (`name` changes only the symbol they launch).
//!
//! **Generic kernels.** `#[kernel(instantiate(f32, f64))] pub fn scale<T: ..>(..)` exports one
//! kernel per listed type, suffixed with the type's name: symbols `scale_f32`, `scale_f64`, and
//! launchers `launch_scale_f32[_with]`, `cpu_scale_f32[_with]`, ... with `T` replaced in every
//! argument. Several type parameters take tuples: `instantiate((f32, u32))` → `scale_f32_u32`.
//!
//! **Arguments.** By value: types implementing `KernelArg` (integers, floats, arrays of them,
//! `#[derive(KernelArg)]` structs); `&[T]` input slices; `DisjointSlice<T>` outputs.
//!
//! # `#[derive(KernelArg)]`
//! For `#[repr(C)]` structs of kernel-safe fields; proves that the host layout equals the
//! nvptx64 layout (see `derive.rs`). The struct must live in the kernels module.
//!
//! Structure: `ast` (from syn) → `valid` (spanned checks, all errors collected) → `expand`.

mod ast;
mod derive;
mod expand;
mod valid;

use proc_macro::TokenStream;

#[proc_macro_attribute]
pub fn kernel(args: TokenStream, input: TokenStream) -> TokenStream {
    let item = syn::parse_macro_input!(input as syn::ItemFn);
    let kernel = ast::Kernel::from_syn(args.into(), &item);
    match valid::check(&kernel) {
        Ok(()) => expand::kernel(&kernel).into(),
        Err(err) => expand::fallback(&item, err).into(),
    }
}

#[proc_macro_derive(KernelArg)]
pub fn derive_kernel_arg(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    derive::kernel_arg(&input).into()
}
