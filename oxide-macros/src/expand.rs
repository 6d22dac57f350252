//! Code generation for a validated `#[kernel]`.

use crate::ast::{atomic_host_elem, Arg, ArgKind, Concrete, Kernel, OutShape};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::ItemFn;

pub fn kernel(k: &Kernel<'_>) -> TokenStream {
    let item = k.item;
    let mut out = quote! {
        #[allow(dead_code)]
        #item
    };
    out.extend(block_assertions(k));
    for c in k.concrete() {
        out.extend(name_marker(&c));
        out.extend(device_entry(k, &c));
        out.extend(arg_layout_proof(&c));
        out.extend(host_launchers(k, &c));
    }
    out
}

/// Two kernels exporting one symbol from one module collide on this item, so rustc reports
/// "the name `__oxide_kernel_name_<symbol>_used_twice` is defined multiple times" at both names.
/// (Across modules the device build reports the duplicate symbol; see the crate docs.)
fn name_marker(c: &Concrete) -> TokenStream {
    let marker = syn::Ident::new(&format!("__oxide_kernel_name_{}_used_twice", c.export), c.span);
    quote_spanned! {c.span=>
        #[doc(hidden)]
        #[allow(dead_code, non_upper_case_globals)]
        const #marker: () = ();
    }
}

/// `block(..)` extents that are not literals (e.g. `block(BX, BY)`) are checked when the
/// constants are known: each at least 1, at most 1024 threads, none beyond `dims`.
fn block_assertions(k: &Kernel<'_>) -> Option<TokenStream> {
    let b = k.block.as_ref()?;
    let [x, y, z] = &b.extents;
    let dims = k.dims;
    let size = format!(
        "#[kernel(block(..))] of `{}`: every extent must be at least 1 and a block has at most 1024 threads",
        k.name
    );
    let beyond = format!("#[kernel(block(..))] of `{}`: an extent beyond `dims = {dims}` must be 1", k.name);
    Some(quote_spanned! {b.span=>
        #[allow(clippy::unnecessary_cast)]
        const _: () = {
            let (x, y, z) = ((#x) as u64, (#y) as u64, (#z) as u64);
            ::core::assert!(x >= 1 && y >= 1 && z >= 1 && x * y * z <= 1024, #size);
            ::core::assert!((#dims >= 2 || y == 1) && (#dims >= 3 || z == 1), #beyond);
        };
    })
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

fn device_entry(k: &Kernel<'_>, c: &Concrete) -> TokenStream {
    let name = k.name;
    let turbofish = &c.turbofish;
    let export = &c.export;
    let entry = format_ident!("__oxide_entry_{}", export);
    let mut params = Vec::new();
    let mut call = Vec::new();
    // The type of every parameter before the current one: a tensor map's PTX parameter index
    // counts those that take space (rustc passes no zero-sized parameter).
    let mut param_tys: Vec<TokenStream> = Vec::new();
    let mut grid_constants: Vec<TokenStream> = Vec::new();
    // The element size of every plain `&[T]` / `Matrix<T>` input, in order (`__oxide_in_*`).
    let mut input_sizes: Vec<TokenStream> = Vec::new();
    for a in &c.args {
        let id = &a.ident;
        if let ArgKind::SliceIn { elem, atomic: false, .. } = &a.kind {
            input_sizes.push(quote! { ::core::mem::size_of::<#elem>() as u64 });
        }
        // Pointer names tell the IR stage what it may assume: `__oxide_in_*` (plain inputs) and
        // `__oxide_out_*` (outputs) never alias anything; `__oxide_atomic_*` (inputs of atomics,
        // which threads write and which may be passed twice) get no such promise.
        let dir = match &a.kind {
            ArgKind::SliceOut { .. } => "out",
            ArgKind::SliceIn { atomic: true, .. } => "atomic",
            _ => "in",
        };
        let (ptr, len) = (format_ident!("__oxide_{}_{}", dir, id), format_ident!("__oxide_{}_{}_len", dir, id));
        match &a.kind {
            ArgKind::Value | ArgKind::Invalid => {
                let ty = &a.ty;
                params.push(quote! { #id: #ty });
                param_tys.push(quote!(#ty));
                call.push(quote! { #id });
            }
            ArgKind::TensorMap { elem, dims } => {
                let (map, info) = (format_ident!("__oxide_tmap_{}", id), format_ident!("__oxide_tmap_info_{}", id));
                let index = quote! { { 0u32 #(+ (::core::mem::size_of::<#param_tys>() != 0) as u32)* } };
                params.push(
                    quote! { #map: ::oxide_rt::__private::TensorMapParam, #info: ::oxide_rt::__private::TensorMapInfo },
                );
                param_tys.push(quote!(::oxide_rt::__private::TensorMapParam));
                param_tys.push(quote!(::oxide_rt::__private::TensorMapInfo));
                grid_constants.push(index.clone());
                // The map stays in parameter space (the IR stage makes it 64-byte aligned and
                // never copies it): the kernel gets its address, as CUDA's `__grid_constant__`.
                call.push(quote! {{
                    let _ = #map;
                    let __oxide_addr = ::oxide_rt::__oxide_param_address!(#export, #index);
                    // SAFETY: the address of this launch's map parameter, which the launcher filled from a `TensorMap<T, D>` of these types, and its box.
                    unsafe { ::oxide_rt::device::TensorMap::<#elem, { #dims }>::__from_param(__oxide_addr, #info) }
                }});
            }
            ArgKind::SliceIn { elem, matrix: false, .. } => {
                params.push(quote! { #ptr: *const #elem, #len: usize });
                param_tys.push(quote!(*const #elem));
                param_tys.push(quote!(usize));
                // SAFETY: the host launcher passed a shared borrow of a device slice of exactly `len` elements that outlives the launch.
                call.push(quote! { unsafe { ::oxide_rt::__private::slice_from_raw(#ptr, #len) } });
            }
            ArgKind::SliceIn { elem, matrix: true, .. } => {
                let (s0, s1) = (format_ident!("__oxide_shape0_{}", id), format_ident!("__oxide_shape1_{}", id));
                params.push(quote! { #ptr: *const #elem, #len: usize, #s0: usize, #s1: usize });
                param_tys.extend([quote!(*const #elem), quote!(usize), quote!(usize), quote!(usize)]);
                // SAFETY: the host launcher passed a shared borrow of `len` elements that outlives the launch and a shape it checked (rows * cols <= len, both fit u32).
                call.push(quote! { unsafe { ::oxide_rt::device::Matrix::from_raw(#ptr, #len, [#s0, #s1]) } });
            }
            ArgKind::SliceOut { elem, shape } => {
                params.push(quote! { #ptr: *mut #elem, #len: usize });
                param_tys.extend([quote!(*mut #elem), quote!(usize)]);
                let words = shape_words(*shape);
                let names: Vec<_> = (0..words).map(|w| format_ident!("__oxide_shape{}_{}", w, id)).collect();
                params.extend(names.iter().map(|s| quote! { #s: usize }));
                param_tys.extend(names.iter().map(|_| quote!(usize)));
                let zeros = (words..3).map(|_| quote!(0));
                let shape = quote!([#(#names,)* #(#zeros),*]);
                let ty = &a.ty;
                let out = quote!(<#ty as ::oxide_rt::__private::OutputSlice>);
                // SAFETY: the launcher passed an exclusive borrow of `len` elements and a shape that is a kernel argument (the same in every thread: sizes checked to fit u32, or `DisjointAppend`'s counter); each thread writes only its own elements.
                call.push(quote! { unsafe { #out::from_raw(#ptr, #len, #shape) } });
            }
        }
    }
    let call_body = if k.unsafe_fn {
        // SAFETY: the caller of the `unsafe` launcher upheld the kernel's contract.
        quote! { unsafe { self::#name #turbofish(#(#call),*) } }
    } else {
        quote! { self::#name #turbofish(#(#call),*) }
    };
    // `dims = N`: the launchers refuse geometries using more dimensions, so the entry may tell
    // the optimiser the unused ones are 1 (extents) and 0 (indices).
    let dims = k.dims;
    let call_body = if dims < 3 {
        // SAFETY: the host launchers (GPU and CPU) reject any launch whose grid or block uses a dimension beyond `dims`, so these facts hold in every launch of this entry.
        quote! { unsafe { ::oxide_rt::__private::assume_dims::<#dims>() }; #call_body }
    } else {
        call_body
    };
    // `block(x, y, z)`: the launchers accept only this shape, so the entry may state it (and
    // that thread indices are below it); ptxas gets `.reqntid` through the meta record.
    let (call_body, block_meta) = match &k.block {
        Some(b) => {
            let [x, y, z] = &b.extents;
            let meta = format_ident!("__oxide_block_{}", export);
            (
                // SAFETY: the host launchers (GPU and CPU) reject any launch whose block is not exactly `block(..)`, and the driver enforces the `.reqntid` that oxide-build emits.
                quote! { unsafe { ::oxide_rt::__private::assume_block::<{ #x }, { #y }, { #z }>() }; #call_body },
                Some(meta_static(&meta, quote!([u32; 3]), quote!([#x, #y, #z]))),
            )
        }
        None => (call_body, None),
    };
    // `launch_bounds(max, ..)`: the launchers refuse larger blocks (and ptxas gets `.maxntid`), so
    // the entry may state that every thread index and extent is at most `max`.
    let call_body = match &k.launch_bounds {
        Some(b) => {
            let max = b.max_threads;
            // SAFETY: the host launchers (GPU and CPU) reject any launch whose block has more than `max` threads, and the driver enforces the `.maxntid` that oxide-build emits.
            quote! { unsafe { ::oxide_rt::__private::assume_max_threads::<{ #max }>() }; #call_body }
        }
        None => call_body,
    };
    let bounds = k.launch_bounds.as_ref().map(|b| {
        let (max, min) = (b.max_threads, b.min_blocks);
        let meta = format_ident!("__oxide_launch_bounds_{}", export);
        meta_static(&meta, quote!([u32; 2]), quote!([#max, #min]))
    });
    // `cluster(x, y, z)`: the entry sets up each block's exit barrier and the exit waits on it
    // (early returns included), so no block exits while another may still reach its shared memory.
    let call_body = match &k.cluster {
        Some(_) => quote! {
            ::oxide_rt::__private::cluster_enter();
            #call_body;
            ::oxide_rt::__private::cluster_exit();
        },
        None => call_body,
    };
    // `cluster(x, y, z)`: `.reqnctapercluster` through a meta record, as `block(..)` above.
    let cluster_meta = k.cluster.as_ref().map(|c| {
        let meta = format_ident!("__oxide_cluster_{}", export);
        let [x, y, z] = c.dims;
        meta_static(&meta, quote!([u32; 3]), quote!([#x, #y, #z]))
    });
    // The inputs' element sizes: the IR stage bounds a read it moves by its input's length.
    let sizes_meta = (!input_sizes.is_empty()).then(|| {
        let meta = format_ident!("__oxide_input_sizes_{}", export);
        let n = input_sizes.len();
        meta_static(&meta, quote!([u64; #n]), quote!([#(#input_sizes),*]))
    });
    // Each argument's element (or value) size and alignment as the device sees them: the host
    // expansion proves its own agree (`arg_layout_proof`).
    let layout_meta = (!c.args.is_empty()).then(|| {
        let meta = format_ident!("__oxide_arg_layout_{}", export);
        let n = 2 * c.args.len();
        let words = c.args.iter().map(|a| {
            let t = layout_type(a);
            quote! { ::core::mem::size_of::<#t>() as u64, ::core::mem::align_of::<#t>() as u64 }
        });
        meta_static(&meta, quote!([u64; #n]), quote!([#(#words),*]))
    });
    // Which parameters hold tensor maps: the IR stage makes them 64-byte aligned `byval`.
    let grid_meta = (!grid_constants.is_empty()).then(|| {
        let meta = format_ident!("__oxide_grid_constant_{}", export);
        let n = grid_constants.len();
        meta_static(&meta, quote!([u32; #n]), quote!([#(#grid_constants),*]))
    });
    quote! {
        #[cfg(target_arch = "nvptx64")]
        #[doc(hidden)]
        #[unsafe(export_name = #export)]
        pub unsafe extern "ptx-kernel" fn #entry(#(#params),*) {
            #call_body
        }
        #bounds
        #block_meta
        #cluster_meta
        #grid_meta
        #sizes_meta
        #layout_meta
    }
}

/// The type whose size and alignment host and device must agree on for argument `a`: the
/// element of a slice, output, matrix or tensor map (the launcher lends buffers of the host's
/// element type, the device indexes them with its own), or the value itself.
fn layout_type(a: &Arg) -> &syn::Type {
    match &a.kind {
        ArgKind::SliceIn { elem, .. } | ArgKind::SliceOut { elem, .. } | ArgKind::TensorMap { elem, .. } => elem,
        ArgKind::Value | ArgKind::Invalid => &a.ty,
    }
}

/// How many shape words an output of this shape passes after its pointer and length (the
/// device type's `from_raw` gets them padded with zeros to three).
fn shape_words(shape: OutShape) -> usize {
    match shape {
        OutShape::Flat => 0,
        OutShape::D2 | OutShape::Pairs | OutShape::Append => 2,
        OutShape::D3 => 3,
    }
}

/// The host half of the argument layout proof: a `cfg(target_arch)` alias, or a `--cfg` only
/// the device build gets (`Build::cfg`), can give an argument's type another size on the GPU,
/// and the launcher would lend buffers of the host's element size to a kernel that indexes
/// them with the device's. Each argument's type must have the size and alignment the device
/// build recorded (`__oxide_arg_layout_<kernel>` in `$OXIDE_MANIFEST`).
fn arg_layout_proof(c: &Concrete) -> TokenStream {
    let Some(path) = crate::manifest::path().filter(|_| !c.args.is_empty()) else {
        return TokenStream::new(); // not built by oxide-build: nothing to compare against
    };
    let export = &c.export;
    let error = |msg: String| {
        let e = syn::Error::new(c.span, msg).to_compile_error();
        quote! { #[cfg(not(target_arch = "nvptx64"))] const _: () = { #e }; }
    };
    let record = format!("__oxide_arg_layout_{export}");
    let values = match crate::manifest::read_record(&path, &record) {
        Ok(Some(v)) => v,
        Ok(None) => {
            return match crate::manifest::lists_kernel(&path, export) {
                // Not in this device build (its launch fails to find it): nothing to compare.
                Ok(false) => TokenStream::new(),
                Ok(true) => error(format!(
                    "the device build in {} has kernel `{export}` but no record of its argument layout (`{record}`): it was \
                     made by an older oxide-build; hint: rebuild the kernels (a prebuilt directory: `cargo oxide build` again)",
                    path.display()
                )),
                Err(why) => error(why),
            };
        }
        Err(why) => return error(why),
    };
    if values.len() != 2 * c.args.len() {
        return error(format!(
            "the argument layout record `{record}` describes {} argument(s), but `{export}` has {}: {} is stale; hint: \
             rebuild so the build script runs again",
            values.len() / 2,
            c.args.len(),
            path.display()
        ));
    }
    let checks = c.args.iter().zip(values.chunks(2)).map(|(a, v)| {
        let (t, size, align) = (layout_type(a), v[0] as usize, v[1] as usize);
        let msg = format!(
            "argument `{}` of kernel `{export}`: `{}` differs between host and GPU: it is not {size} bytes with alignment \
             {align} as in the device build (a `cfg(target_arch)` or device-only `cfg`?), so the launcher would lend \
             buffers the kernel indexes differently; hint: give the type one definition for both targets",
            a.ident,
            crate::valid::show(t),
        );
        quote_spanned! {t.span()=>
            #[cfg(not(target_arch = "nvptx64"))]
            const _: () = ::core::assert!(
                ::core::mem::size_of::<#t>() == #size && ::core::mem::align_of::<#t>() == #align,
                #msg
            );
        }
    });
    quote! { #(#checks)* }
}

/// A `#[link_section = "oxide.meta"]` static of the device build: data for oxide-build, which
/// reads it (`ir/meta_records.rs`) and drops it from the module.
fn meta_static(name: &syn::Ident, ty: TokenStream, value: TokenStream) -> TokenStream {
    quote! {
        #[cfg(target_arch = "nvptx64")]
        #[used]
        #[unsafe(no_mangle)]
        #[unsafe(link_section = "oxide.meta")]
        #[allow(non_upper_case_globals)]
        static #name: #ty = #value;
    }
}

/// A compile-time assertion that `ty`, whose host checks `#[kernel]` chose by the name written
/// in the signature, is oxide's type of that name (`name_const` is the type's own `NAME`): an
/// alias such as `use DisjointSlice2d as DisjointSlice3d` would get another type's shape.
fn named_as(ty: &syn::Type, name_const: TokenStream, what: &str) -> TokenStream {
    let Some(written) = crate::ast::last_ident(ty) else { return TokenStream::new() };
    let msg = format!(
        "`#[kernel]` treats `{written}` as oxide's {what} type `{written}`, but here that name is another type (an alias?): use oxide's `{written}` under its own name"
    );
    quote_spanned! {ty.span()=>
        const { ::core::assert!(::oxide_rt::__private::same_name(#name_const, #written), #msg) };
    }
}

fn host_launchers(k: &Kernel<'_>, c: &Concrete) -> TokenStream {
    let name = k.name;
    let dims = k.dims;
    let turbofish = &c.turbofish;
    let export = &c.export;
    let base = &c.launcher;
    let vis = &k.item.vis;
    let p = quote!(::oxide_rt::__private);
    let (launch, launch_with) = (format_ident!("launch_{}", base), format_ident!("launch_{}_with", base));
    let (cpu, cpu_with) = (format_ident!("cpu_{}", base), format_ident!("cpu_{}_with", base));
    let unsafety = k.unsafe_fn.then(|| quote!(unsafe));

    let mut gpu_params = Vec::new();
    let mut gpu_prep = Vec::new();
    let mut gpu_push = Vec::new();
    // The integer parameters by their names in `device_entry`, with the values pushed for
    // them: what the launch-wide test of an unchecked copy reads (`Kernel::unchecked_copy`).
    let mut gpu_values: Vec<TokenStream> = Vec::new();
    let mut cpu_params = Vec::new();
    let mut cpu_prep = Vec::new();
    let mut cpu_call = Vec::new();
    let mut names = Vec::new();
    let mut input_ranges = Vec::new();
    let mut has_atomic_input = false;
    for a in &c.args {
        let id = &a.ident;
        names.push(quote!(#id));
        let (ptr, len) = (format_ident!("__oxide_{}_ptr", id), format_ident!("__oxide_{}_len", id));
        let guard = format_ident!("__oxide_{}_guard", id);
        let arg_name = id.to_string();
        match &a.kind {
            ArgKind::Value | ArgKind::Invalid => {
                let ty = &a.ty;
                gpu_params.push(quote! { #id: #ty });
                // Spanned on the user's type: a missing `KernelArg` is reported there, once.
                gpu_push.push(quote_spanned! {ty.span()=> #p::push_value(&mut __oxide_args, &#id); });
                gpu_values.push(
                    quote! { (#arg_name, { use #p::{IntValue as _, NotInt as _}; (&#p::IntProbe(&#id)).int_value() }) },
                );
                cpu_params.push(quote! { #id: #ty });
                cpu_call.push(quote! { #id });
            }
            ArgKind::TensorMap { elem, dims } => {
                let map_ty = quote!(::oxide_rt::host::TensorMap<'_, #elem, { #dims }>);
                gpu_params.push(quote! { #id: &#map_ty });
                cpu_params.push(quote! { #id: &#map_ty });
                gpu_prep.push(quote! {
                    let #guard = #p::tensor_map_arg(#export, #arg_name, #id, __oxide_stream)?;
                    let (#ptr, #len) = #id.parts();
                });
                gpu_push.push(quote! { #p::PushKernelArg::arg(&mut __oxide_args, #ptr); #p::PushKernelArg::arg(&mut __oxide_args, #len); });
                cpu_prep.push(quote! { let #id = #p::tensor_map_on_cpu(#export, #arg_name, #id)?; });
                cpu_call.push(quote! { #id });
            }
            ArgKind::SliceIn { elem, atomic, matrix } => {
                // `&[AtomicU32]` on the device is a `CudaSlice<u32>` on the host (cudarc cannot
                // hold atomics; they have the plain type's layout).
                let host_elem = atomic_host_elem(elem).unwrap_or_else(|| quote!(#elem));
                input_ranges.push(quote! {
                    (#arg_name, #ptr, #len * ::core::mem::size_of::<#host_elem>(), #atomic)
                });
                has_atomic_input |= *atomic;
                let mut assert = quote_spanned! {elem.span()=> #p::assert_kernel_arg::<#host_elem>(); };
                if *atomic {
                    assert.extend(named_as(elem, quote!(<#elem as #p::AtomicElem>::NAME), "atomic"));
                }
                gpu_prep.push(assert.clone());
                cpu_prep.push(assert);
                let shape_ident = format_ident!("__oxide_{}_shape", id);
                // Atomics are written by the kernel: on the GPU the launch borrows their buffer
                // exclusively, so cudarc orders every later use of it (on any stream) after the
                // kernel, as for an output. The CPU executor's atomics are shared as they are.
                if *matrix {
                    // `Matrix::new(&buf, rows, cols)`: the buffer, and a shape checked against it.
                    if *atomic {
                        gpu_params.push(quote! { #id: ::oxide_rt::MatrixMut<'_, impl #p::DeviceOutput<#host_elem>> });
                        gpu_prep.push(quote! { let (#id, #shape_ident) = #id.into_parts(); });
                    } else {
                        gpu_params.push(quote! { #id: ::oxide_rt::Matrix<'_, impl #p::DeviceInput<#host_elem>> });
                        gpu_prep.push(quote! { let (#id, #shape_ident) = #id.parts(); });
                    }
                    cpu_params.push(quote! { #id: ::oxide_rt::Matrix<'_, [#elem]> });
                    cpu_prep.push(quote! { let (#id, #shape_ident) = #id.parts(); });
                } else if *atomic {
                    gpu_params.push(quote! { #id: &mut impl #p::DeviceOutput<#host_elem> });
                    cpu_params.push(quote! { #id: &[#elem] });
                } else {
                    gpu_params.push(quote! { #id: &impl #p::DeviceInput<#host_elem> });
                    cpu_params.push(quote! { #id: &[#elem] });
                }
                gpu_prep.push(if *atomic {
                    quote! { let (#ptr, #len, #guard) = #p::output_arg::<#host_elem>(#export, #arg_name, #id, __oxide_stream)?; }
                } else {
                    quote! { let (#ptr, #len, #guard) = #p::input_arg::<#host_elem>(#export, #arg_name, #id, __oxide_stream, __oxide_pad)?; }
                });
                gpu_push.push(quote! { #p::PushKernelArg::arg(&mut __oxide_args, &#ptr); #p::PushKernelArg::arg(&mut __oxide_args, &#len); });
                let dir = if *atomic { "atomic" } else { "in" };
                let len_name = format!("__oxide_{dir}_{arg_name}_len");
                gpu_values.push(quote! { (#len_name, ::core::option::Option::Some(#len as u64)) });
                if *matrix {
                    let (s0, s1) = (format!("__oxide_shape0_{arg_name}"), format!("__oxide_shape1_{arg_name}"));
                    gpu_values.push(quote! { (#s0, ::core::option::Option::Some(#shape_ident[0] as u64)) });
                    gpu_values.push(quote! { (#s1, ::core::option::Option::Some(#shape_ident[1] as u64)) });
                    gpu_prep.push(quote! { #p::check_matrix(#export, #arg_name, #len, #shape_ident)?; });
                    cpu_prep.push(quote! { #p::check_matrix(#export, #arg_name, #id.len(), #shape_ident)?; });
                    gpu_push.push(quote! {
                        #p::PushKernelArg::arg(&mut __oxide_args, &#shape_ident[0]);
                        #p::PushKernelArg::arg(&mut __oxide_args, &#shape_ident[1]);
                    });
                    // The matrix borrows the host slice (not an unbounded lifetime), so a kernel
                    // cannot keep it past the launch.
                    // SAFETY: a shared borrow of the slice held for the launch, and a shape `check_matrix` verified against its length.
                    cpu_call.push(quote! { unsafe { #p::cpu_matrix(#id, #shape_ident) } });
                } else {
                    cpu_call.push(quote! { #id });
                }
            }
            ArgKind::SliceOut { elem, shape } => {
                let shape_ident = format_ident!("__oxide_{}_shape", id);
                // Plain data only, on both executors: e.g. no `ThreadIndex` may be stored for
                // another thread (or launch) to use.
                let ty = &a.ty;
                let mut assert = quote_spanned! {elem.span()=> #p::assert_kernel_arg::<#elem>(); };
                assert.extend(named_as(ty, quote!(<#ty as #p::OutputSlice>::NAME), "output"));
                gpu_prep.push(assert.clone());
                cpu_prep.push(assert);
                let gpu_buf = match shape {
                    OutShape::Flat => {
                        gpu_params.push(quote! { #id: &mut impl #p::DeviceOutput<#elem> });
                        cpu_params.push(quote! { #id: &mut [#elem] });
                        cpu_prep.push(quote! { let #shape_ident: [usize; 3] = [0, 0, 0]; });
                        quote!(#id)
                    }
                    OutShape::Append => {
                        let count = format_ident!("__oxide_{}_count", id);
                        let count_guard = format_ident!("__oxide_{}_count_guard", id);
                        gpu_params.push(quote! { #id: ::oxide_rt::Append<'_, impl #p::DeviceOutput<#elem>, impl #p::DeviceOutput<u64>> });
                        cpu_params.push(quote! { #id: ::oxide_rt::Append<'_, [#elem], [u64]> });
                        gpu_prep.push(quote! {
                            let mut #id = #id;
                            let (#id, #count) = #id.split();
                            let (#count, __oxide_count_len, #count_guard) = #p::output_arg::<u64>(#export, #arg_name, #count, __oxide_stream)?;
                            #p::check_counter(#export, #arg_name, __oxide_count_len)?;
                            let #shape_ident: [usize; 3] = [#count as usize, 0, 0];
                        });
                        cpu_prep.push(quote! {
                            let mut #id = #id;
                            let (#id, #count) = #id.split();
                            #p::check_counter(#export, #arg_name, #count.len())?;
                            let #shape_ident: [usize; 3] = [#count.as_mut_ptr() as usize, 0, 0];
                        });
                        quote!(#id)
                    }
                    OutShape::D2 | OutShape::D3 | OutShape::Pairs => {
                        let host = match shape {
                            OutShape::D2 => quote!(::oxide_rt::Slice2d),
                            OutShape::D3 => quote!(::oxide_rt::Slice3d),
                            _ => quote!(::oxide_rt::Pairs),
                        };
                        gpu_params.push(quote! { #id: #host<'_, impl #p::DeviceOutput<#elem>> });
                        cpu_params.push(quote! { #id: #host<'_, [#elem]> });
                        let split = quote! {
                            let mut #id = #id;
                            let (#id, #shape_ident) = #p::Shaped::split(&mut #id);
                            #p::check_shape(#export, #arg_name, #shape_ident)?;
                        };
                        gpu_prep.push(split.clone());
                        cpu_prep.push(split);
                        quote!(#id)
                    }
                };
                gpu_prep.push(quote! {
                    let (#ptr, #len, #guard) = #p::output_arg::<#elem>(#export, #arg_name, #gpu_buf, __oxide_stream)?;
                });
                // A row-major output also gets its whole rows, `len / cols` (planes in 3-D),
                // worked out here once instead of in every thread.
                let rows = match shape {
                    OutShape::D2 => Some(quote! { let #shape_ident = #p::with_rows(#shape_ident, #len); }),
                    OutShape::D3 => Some(quote! { let #shape_ident = #p::with_planes(#shape_ident, #len); }),
                    _ => None,
                };
                gpu_prep.extend(rows.clone());
                gpu_push.push(quote! { #p::PushKernelArg::arg(&mut __oxide_args, &#ptr); #p::PushKernelArg::arg(&mut __oxide_args, &#len); });
                let len_name = format!("__oxide_out_{arg_name}_len");
                gpu_values.push(quote! { (#len_name, ::core::option::Option::Some(#len as u64)) });
                // The shape words follow the pointer and length, as in `device_entry`.
                for w in 0..shape_words(*shape) {
                    let name = format!("__oxide_shape{w}_{arg_name}");
                    gpu_values.push(quote! { (#name, ::core::option::Option::Some(#shape_ident[#w] as u64)) });
                    gpu_push.push(quote! { #p::PushKernelArg::arg(&mut __oxide_args, &#shape_ident[#w]); });
                }
                cpu_prep.push(quote! {
                    let #len: usize = #id.len();
                    let #ptr = #p::SendPtr(#id.as_mut_ptr());
                });
                cpu_prep.extend(rows);
                let ty = &a.ty;
                // SAFETY: `ptr`/`len` come from an exclusive borrow held for the launch and the shape from the host-built argument (the same for every thread); each thread writes only its own elements.
                cpu_call.push(quote! { unsafe { <#ty as #p::OutputSlice>::from_raw(#ptr.get(), #len, #shape_ident) } });
            }
        }
    }
    // An input of atomics and a plain input are both shared borrows on the host: make sure they
    // are not one buffer (the kernel would read memory other threads write).
    if has_atomic_input && input_ranges.len() > 1 {
        gpu_prep.push(quote! { #p::check_inputs_apart(#export, &[#(#input_ranges),*])?; });
    }
    let call_kernel = if k.unsafe_fn {
        // SAFETY: the caller of this `unsafe` launcher upheld the kernel's contract.
        quote! { unsafe { self::#name #turbofish(#(#cpu_call),*) } }
    } else {
        quote! { self::#name #turbofish(#(#cpu_call),*) }
    };
    let check_block = k.block.as_ref().map(|b| {
        let [x, y, z] = &b.extents;
        quote! { #p::check_block(#export, [#x, #y, #z], &config)?; }
    });
    let check_cluster = k.cluster.as_ref().map(|c| {
        let [x, y, z] = c.dims;
        quote! { #p::check_cluster(#export, [#x, #y, #z], &config)?; }
    });
    let doc_launch = format!(
        "Launches kernel `{export}` on `stream` with `grid` blocks of `block` threads.\n\n\
         Checks the configuration against the device first and returns `Err` instead of launching."
    );
    let mut cpu_kernel = quote! { #p::CpuKernel::new(#p::module!(), #export) };
    if let Some(b) = &k.launch_bounds {
        let max = b.max_threads;
        cpu_kernel.extend(quote! { .with_max_threads(#max) });
    }
    if let Some(c) = &k.cluster {
        let [x, y, z] = c.dims;
        cpu_kernel.extend(quote! { .with_cluster([#x, #y, #z]) });
    }
    let doc_cpu = format!("Runs kernel `{export}` on the CPU executor with the same geometry and checks as the GPU.");
    quote! {
        #[cfg(not(target_arch = "nvptx64"))]
        #[doc = #doc_launch]
        #[allow(clippy::too_many_arguments, non_snake_case, dead_code)]
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
        #[allow(clippy::too_many_arguments, non_snake_case, dead_code)]
        #vis #unsafety fn #launch_with(
            stream: &#p::Arc<#p::CudaStream>,
            config: ::oxide_rt::LaunchConfig,
            #(#gpu_params),*
        ) -> ::core::result::Result<(), ::oxide_rt::Error> {
            static __OXIDE_KERNEL: #p::Kernel = #p::Kernel::new(#p::module!(), #export);
            let __oxide_stream: &#p::CudaStream = stream;
            #p::check_dims(#export, #dims, &config)?;
            #check_block
            #check_cluster
            let (__oxide_func, __oxide_cfg, __oxide_pad) = __OXIDE_KERNEL.prepare(stream, &config)?;
            #(#gpu_prep)*
            let __oxide_func = __OXIDE_KERNEL.unchecked_copy(stream, &config, __oxide_func, &[#(#gpu_values),*])?;
            let mut __oxide_args = __oxide_stream.launch_builder(&__oxide_func);
            #(#gpu_push)*
            // The arguments pushed above are exactly the parameters of the generated `ptx-kernel`
            // entry, in order and with the same types (scalars by value, slices as pointer +
            // length); the stream records the slices' use so later frees and writes wait.
            // SAFETY: so the launch matches the kernel's signature and its borrows outlive it.
            unsafe { __oxide_args.launch(__oxide_cfg) }
                .map(|_| ())
                .map_err(|source| #p::launch_error(#export, source))
        }

        #[cfg(not(target_arch = "nvptx64"))]
        #[doc = #doc_cpu]
        #[allow(clippy::too_many_arguments, non_snake_case, dead_code)]
        #vis #unsafety fn #cpu(
            grid: impl ::core::convert::Into<::oxide_rt::Dim3>,
            block: impl ::core::convert::Into<::oxide_rt::Dim3>,
            #(#cpu_params),*
        ) -> ::core::result::Result<(), ::oxide_rt::Error> {
            #unsafety { #cpu_with(::oxide_rt::LaunchConfig::new(grid, block), #(#names),*) }
        }

        #[cfg(not(target_arch = "nvptx64"))]
        #[doc = #doc_cpu]
        #[allow(clippy::too_many_arguments, non_snake_case, dead_code)]
        #vis #unsafety fn #cpu_with(
            config: ::oxide_rt::LaunchConfig,
            #(#cpu_params),*
        ) -> ::core::result::Result<(), ::oxide_rt::Error> {
            static __OXIDE_KERNEL: #p::CpuKernel = #cpu_kernel;
            #p::check_dims(#export, #dims, &config)?;
            #check_block
            #check_cluster
            #(#cpu_prep)*
            #p::cpu_launch(&__OXIDE_KERNEL, config, || { #call_kernel; })
        }
    }
}
