//! `#[kernel]`: one function in a kernels module becomes
//! * on nvptx64, an exported `ptx-kernel` entry whose slices travel as pointer + length, and
//! * on the host, `launch_<name>` / `launch_<name>_with` (typed, checked launches through
//!   cudarc) and `cpu_<name>` / `cpu_<name>_with` (the same kernel on the CPU executor).
//!
//! Structure: `ast` (from syn) → `valid` (spanned checks, all errors collected) → `expand`.

mod ast;
mod expand;
mod valid;

use proc_macro::TokenStream;

#[proc_macro_attribute]
pub fn kernel(args: TokenStream, input: TokenStream) -> TokenStream {
    let item = syn::parse_macro_input!(input as syn::ItemFn);
    let args = proc_macro2::TokenStream::from(args);
    match ast::Kernel::from_syn(args, &item).and_then(|k| valid::check(&k).map(|()| k)) {
        Ok(kernel) => expand::kernel(&kernel).into(),
        Err(err) => expand::fallback(&item, err).into(),
    }
}
