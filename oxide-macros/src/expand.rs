//! Code generation for a validated `#[kernel]`.

use crate::ast::{ArgKind, Kernel};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ItemFn;

pub fn kernel(k: &Kernel<'_>) -> TokenStream {
    let item = k.item;
    let device = device_entry(k);
    let host = host_launchers(k);
    quote! {
        #[allow(dead_code)]
        #item
        #device
        #host
    }
}

/// After an error: the user's function unchanged (so its callers still type-check) plus the errors.
pub fn fallback(item: &ItemFn, err: syn::Error) -> TokenStream {
    let errors = err.to_compile_error();
    quote! {
        #errors
        #[allow(dead_code)]
        #item
    }
}

fn device_entry(k: &Kernel<'_>) -> TokenStream {
    let name = k.name;
    let export = name.to_string();
    let entry = format_ident!("__oxide_entry_{}", name);
    let mut params = Vec::new();
    let mut call = Vec::new();
    for a in &k.args {
        let id = &a.ident;
        let (ptr, len) = (format_ident!("__{}_ptr", id), format_ident!("__{}_len", id));
        match &a.kind {
            ArgKind::Value | ArgKind::Invalid => {
                let ty = a.ty;
                params.push(quote! { #id: #ty });
                call.push(quote! { #id });
            }
            ArgKind::SliceIn { elem } => {
                params.push(quote! { #ptr: *const #elem, #len: usize });
                // SAFETY: the host launcher passed a shared borrow of a device slice of
                // exactly `len` elements that outlives the launch.
                call.push(quote! { unsafe { ::oxide_rt::__private::slice_from_raw(#ptr, #len) } });
            }
            ArgKind::SliceOut { elem } => {
                params.push(quote! { #ptr: *mut #elem, #len: usize });
                // SAFETY: the host launcher passed an exclusive borrow of a device slice of
                // `len` elements; each thread writes only at its unique ThreadIndex.
                call.push(quote! { unsafe { ::oxide_rt::__private::DisjointSlice::from_raw(#ptr, #len) } });
            }
        }
    }
    let call_body = if k.is_unsafe {
        // SAFETY: the caller of the `unsafe` launcher upheld the kernel's contract.
        quote! { unsafe { #name(#(#call),*) } }
    } else {
        quote! { #name(#(#call),*) }
    };
    let bounds = k.launch_bounds.as_ref().map(|b| {
        let (max, min) = (b.max_threads, b.min_blocks);
        let meta = format_ident!("__oxide_launch_bounds_{}", name);
        quote! {
            #[cfg(target_arch = "nvptx64")]
            #[used]
            #[unsafe(no_mangle)]
            #[unsafe(link_section = "oxide.meta")]
            static #meta: [u32; 2] = [#max, #min];
        }
    });
    quote! {
        #[cfg(target_arch = "nvptx64")]
        #[doc(hidden)]
        #[unsafe(export_name = #export)]
        pub unsafe extern "ptx-kernel" fn #entry(#(#params),*) {
            #call_body
        }
        #bounds
    }
}

fn host_launchers(k: &Kernel<'_>) -> TokenStream {
    let name = k.name;
    let export = name.to_string();
    let vis = &k.item.vis;
    let p = quote!(::oxide_rt::__private);
    let (launch, launch_with) = (format_ident!("launch_{}", name), format_ident!("launch_{}_with", name));
    let (cpu, cpu_with) = (format_ident!("cpu_{}", name), format_ident!("cpu_{}_with", name));
    let unsafety = k.is_unsafe.then(|| quote!(unsafe));

    let mut gpu_params = Vec::new();
    let mut gpu_prep = Vec::new();
    let mut gpu_push = Vec::new();
    let mut cpu_params = Vec::new();
    let mut cpu_prep = Vec::new();
    let mut cpu_call = Vec::new();
    let mut names = Vec::new();
    for a in &k.args {
        let id = &a.ident;
        names.push(quote!(#id));
        let (ptr, len) = (format_ident!("__{}_ptr", id), format_ident!("__{}_len", id));
        let guard = format_ident!("__{}_guard", id);
        match &a.kind {
            ArgKind::Value | ArgKind::Invalid => {
                let ty = a.ty;
                gpu_params.push(quote! { #id: #ty });
                gpu_push.push(quote! { #p::PushKernelArg::arg(&mut __args, &#id); });
                cpu_params.push(quote! { #id: #ty });
                cpu_call.push(quote! { #id });
            }
            ArgKind::SliceIn { elem } => {
                gpu_params.push(quote! { #id: &impl #p::DevicePtr<#elem> });
                gpu_prep.push(quote! {
                    let (#ptr, #guard) = #p::DevicePtr::device_ptr(#id, __stream);
                    let #len: usize = #p::DeviceSlice::len(#id);
                });
                gpu_push.push(quote! { #p::PushKernelArg::arg(&mut __args, &#ptr); #p::PushKernelArg::arg(&mut __args, &#len); });
                cpu_params.push(quote! { #id: &[#elem] });
                cpu_call.push(quote! { #id });
            }
            ArgKind::SliceOut { elem } => {
                gpu_params.push(quote! { #id: &mut impl #p::DevicePtrMut<#elem> });
                gpu_prep.push(quote! {
                    let #len: usize = #p::DeviceSlice::len(#id);
                    let (#ptr, #guard) = #p::DevicePtrMut::device_ptr_mut(#id, __stream);
                });
                gpu_push.push(quote! { #p::PushKernelArg::arg(&mut __args, &#ptr); #p::PushKernelArg::arg(&mut __args, &#len); });
                cpu_params.push(quote! { #id: &mut [#elem] });
                cpu_prep.push(quote! {
                    let #len: usize = #id.len();
                    let #ptr = #p::SendPtr(#id.as_mut_ptr());
                });
                // SAFETY: `ptr`/`len` come from an exclusive borrow held for the whole launch;
                // each simulated thread writes only at its own unique ThreadIndex.
                cpu_call.push(quote! { unsafe { #p::DisjointSlice::from_raw(#ptr.get(), #len) } });
            }
        }
    }
    let call_kernel = if k.is_unsafe {
        // SAFETY: the caller of this `unsafe` launcher upheld the kernel's contract.
        quote! { unsafe { #name(#(#cpu_call),*) } }
    } else {
        quote! { #name(#(#cpu_call),*) }
    };
    let doc_launch = format!(
        "Launches kernel `{export}` on `stream` with `grid` blocks of `block` threads.\n\n\
         Checks the configuration against the device first and returns `Err` instead of launching."
    );
    let doc_cpu = format!("Runs kernel `{export}` on the CPU executor with the same geometry and checks as the GPU.");
    quote! {
        #[cfg(not(target_arch = "nvptx64"))]
        #[doc = #doc_launch]
        #[allow(clippy::too_many_arguments)]
        #vis #unsafety fn #launch(
            stream: &#p::Arc<#p::CudaStream>,
            grid: impl ::core::convert::Into<::oxide_rt::Dim3>,
            block: impl ::core::convert::Into<::oxide_rt::Dim3>,
            #(#gpu_params),*
        ) -> ::core::result::Result<(), ::oxide_rt::Error> {
            #unsafety { #launch_with(stream, ::oxide_rt::LaunchConfig::new(grid, block), #(#names),*) }
        }

        #[cfg(not(target_arch = "nvptx64"))]
        #[doc = #doc_launch]
        #[allow(clippy::too_many_arguments)]
        #vis #unsafety fn #launch_with(
            stream: &#p::Arc<#p::CudaStream>,
            config: ::oxide_rt::LaunchConfig,
            #(#gpu_params),*
        ) -> ::core::result::Result<(), ::oxide_rt::Error> {
            static KERNEL: #p::Kernel = #p::Kernel::new(#p::module!(), #export);
            let __stream: &#p::CudaStream = stream;
            let (__func, __cfg) = KERNEL.prepare(__stream, &config)?;
            #(#gpu_prep)*
            let mut __args = __stream.launch_builder(&__func);
            #(#gpu_push)*
            // SAFETY: the arguments pushed above are exactly the parameters of the generated
            // `ptx-kernel` entry, in order and with the same types (scalars by value, slices as
            // pointer + length); the slice borrows outlive the launch, and the stream records
            // their use so later frees and writes wait for the kernel.
            unsafe { __args.launch(__cfg) }
                .map(|_| ())
                .map_err(|source| #p::launch_error(#export, source))
        }

        #[cfg(not(target_arch = "nvptx64"))]
        #[doc = #doc_cpu]
        #[allow(clippy::too_many_arguments)]
        #vis #unsafety fn #cpu(
            grid: impl ::core::convert::Into<::oxide_rt::Dim3>,
            block: impl ::core::convert::Into<::oxide_rt::Dim3>,
            #(#cpu_params),*
        ) -> ::core::result::Result<(), ::oxide_rt::Error> {
            #unsafety { #cpu_with(::oxide_rt::LaunchConfig::new(grid, block), #(#names),*) }
        }

        #[cfg(not(target_arch = "nvptx64"))]
        #[doc = #doc_cpu]
        #[allow(clippy::too_many_arguments)]
        #vis #unsafety fn #cpu_with(
            config: ::oxide_rt::LaunchConfig,
            #(#cpu_params),*
        ) -> ::core::result::Result<(), ::oxide_rt::Error> {
            static KERNEL: #p::CpuKernel = #p::CpuKernel::new(#p::module!(), #export);
            #(#cpu_prep)*
            #p::cpu_launch(&KERNEL, config, || { #call_kernel; })
        }
    }
}
