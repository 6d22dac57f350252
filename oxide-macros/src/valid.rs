//! Checks on a parsed `#[kernel]`: every error is spanned on the user's tokens and all of them
//! are reported together.

use crate::ast::{ArgKind, Kernel};
use proc_macro2::Span;
use quote::ToTokens;
use syn::{Error, FnArg, ReturnType, Type};

/// Argument names the generated launchers use for their own parameters.
pub const RESERVED: [&str; 4] = ["stream", "grid", "block", "config"];

/// Owning host types: a kernel argument cannot carry them to the device.
const HOST_CONTAINERS: [&str; 11] =
    ["Vec", "String", "Box", "Rc", "Arc", "HashMap", "HashSet", "BTreeMap", "BTreeSet", "VecDeque", "CudaSlice"];

/// Where an error points: a whole piece of syntax (first to last token, as
/// `Error::new_spanned` does), or one span.
pub struct At(proc_macro2::TokenStream);

pub fn at(t: &impl ToTokens) -> At {
    At(t.to_token_stream())
}

impl From<Span> for At {
    fn from(span: Span) -> At {
        At(quote::quote_spanned!(span=> x))
    }
}

impl At {
    pub fn error(self, msg: String) -> Error {
        Error::new_spanned(self.0, msg)
    }
}

pub fn check(k: &Kernel<'_>) -> Result<(), Error> {
    let mut errors: Vec<Error> = k.attr_errors.clone();
    let mut err = |at: At, msg: String| errors.push(at.error(msg));
    let sig = &k.item.sig;

    if let Some(a) = &sig.asyncness {
        err(
            at(&a),
            "a kernel cannot be `async`; hint: remove `async`, a kernel runs to completion on every thread".into(),
        );
    }
    if let Some(c) = &sig.constness {
        err(at(&c), "a kernel cannot be `const fn`; hint: remove `const`".into());
    }
    if let Some(abi) = &sig.abi {
        err(
            at(&abi),
            "a kernel must not name an ABI; hint: remove the `extern`, `#[kernel]` generates the `ptx-kernel` entry"
                .into(),
        );
    }
    if let Some(v) = &sig.variadic {
        err(at(&v), "a kernel cannot be variadic; hint: pass a slice instead".into());
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        if !matches!(&**ty, Type::Tuple(t) if t.elems.is_empty()) {
            err(
                at(&ty),
                format!(
                    "a kernel returns nothing, found `-> {}`; hint: write results into a `DisjointSlice<T>` argument",
                    show(ty)
                ),
            );
        }
    }
    if !is_symbol(&k.export) {
        err(
            k.export_span.into(),
            format!(
                "`{}` is not a valid kernel symbol; hint: use letters, digits and `_`, not starting with a digit",
                k.export
            ),
        );
    }

    if let Some(b) = &k.block {
        // Beside `block(..)`, `launch_bounds` only adds its minimum of resident blocks (the
        // register budget); a maximum below the block's threads would refuse every launch.
        if let (Some(lb), [Some(x), Some(y), Some(z)]) = (&k.launch_bounds, b.literals) {
            if u64::from(lb.max_threads) < x * y * z {
                err(b.span.into(), format!(
                    "`block(..)` has {} threads, more than `launch_bounds({}, ..)` allows, so every launch would be refused; hint: with `block(..)`, write `launch_bounds({}, min_blocks)` only to ask for `min_blocks` resident blocks",
                    x * y * z, lb.max_threads, x * y * z
                ));
            }
        }
        for (axis, i) in [("y", 1), ("z", 2)] {
            if usize::from(k.dims) <= i && b.literals[i].is_some_and(|v| v != 1) {
                err(at(&b.extents[i]), format!(
                    "`block(..)` has {axis} = {} but the kernel is declared `dims = {}`, which makes every launch's {axis} extent 1; hint: raise `dims` or drop the extent",
                    show(&b.extents[i]), k.dims
                ));
            }
        }
    }

    let type_params = sig.generics.type_params().count();
    for g in &sig.generics.params {
        match g {
            syn::GenericParam::Lifetime(l) => err(at(&l), format!(
                "lifetime parameter `{}` on a kernel is not supported; hint: remove it, kernel arguments borrow only for the launch",
                l.lifetime
            )),
            syn::GenericParam::Const(c) => err(at(&c), format!(
                "const generic parameter `{}` on a kernel is not supported; hint: pass `{}` as an ordinary argument",
                show(c), c.ident
            )),
            syn::GenericParam::Type(t) if k.instantiate.is_empty() => err(at(&t.ident), format!(
                "generic parameter `{}` needs concrete types to compile for the GPU; hint: list them with `#[kernel(instantiate(f32, f64))]`, which exports one kernel per type",
                t.ident
            )),
            syn::GenericParam::Type(_) => {}
        }
    }
    if let (Some(wc), 0) = (&sig.generics.where_clause, type_params) {
        err(at(&wc), "a `where` clause on a non-generic kernel has nothing to constrain; hint: remove it".into());
    }
    if let (Some(span), 0) = (k.instantiate_span, type_params) {
        err(
            span.into(),
            "`instantiate(..)` is only for generic kernels and this one has no type parameters; hint: remove it".into(),
        );
    }
    if type_params > 0 {
        // Two entries with one suffix would export one symbol twice (`scale_f32` for both
        // `f32` and `crate::f32`, or `f32` listed twice).
        let suffixes: Vec<String> = k.instantiate.iter().map(crate::ast::instance_suffix).collect();
        for (i, inst) in k.instantiate.iter().enumerate() {
            if let Some(first) = suffixes[..i].iter().position(|s| *s == suffixes[i]) {
                err(
                    at(&inst.tokens),
                    format!(
                        "`{}` is instantiated twice (entries {} and {} both export `{}_{}`); hint: list each type once",
                        show(&inst.tokens),
                        first + 1,
                        i + 1,
                        k.export,
                        suffixes[i]
                    ),
                );
            }
        }
        for inst in &k.instantiate {
            if inst.types.len() != type_params {
                err(at(&inst.tokens), format!(
                    "this instantiation gives {} type(s) for {type_params} type parameter(s); hint: write one type per parameter, a tuple `(f32, u32)` for several",
                    inst.types.len()
                ));
            }
            for t in &inst.types {
                let plain = matches!(t, Type::Path(p) if p.qself.is_none()
                    && p.path.segments.last().is_some_and(|s| s.arguments.is_none()));
                if !plain {
                    err(at(&t), format!(
                        "`instantiate` takes type names (they become the kernel's name suffix), found `{}`; hint: name it with a `type` alias",
                        show(t)
                    ));
                }
            }
        }
    }
    for input in &sig.inputs {
        if let FnArg::Receiver(r) = input {
            err(
                at(&r),
                format!("a kernel cannot take `{}`; hint: make it a free function in the kernels module", show(r)),
            );
        }
    }
    for arg in &k.args {
        let name = arg.ident.to_string();
        if arg.user_named && RESERVED.contains(&name.as_str()) {
            err(
                at(&arg.ident),
                format!(
                "argument name `{name}` is taken by the generated launcher's own parameter; hint: rename the argument"
            ),
            );
        } else if arg.user_named && name.to_ascii_lowercase().starts_with("__oxide") {
            err(
                at(&arg.ident),
                format!("argument name `{name}` is reserved for generated code; hint: rename the argument"),
            );
        }
        check_arg(&arg.ty, &arg.kind, &mut err);
    }

    combine(errors)
}

/// All collected errors as one `syn::Error` (reported together), or `Ok` when there are none.
pub fn combine(errors: Vec<Error>) -> Result<(), Error> {
    let mut errors = errors.into_iter();
    match errors.next() {
        None => Ok(()),
        Some(mut first) => {
            first.extend(errors);
            Err(first)
        }
    }
}

fn is_symbol(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn check_arg(ty: &Type, kind: &ArgKind, err: &mut impl FnMut(At, String)) {
    let shown = show(ty);
    match (kind, ty) {
        (ArgKind::Invalid, Type::Reference(r)) if r.mutability.is_some() => err(at(&ty), format!(
            "`{shown}` would be shared mutably by every GPU thread (aliasing); hint: take an output type that says which thread owns which element: \
             `DisjointSlice<T>` (one element per thread), `DisjointSlice2d<T>` / `DisjointSlice3d<T>` (row-major by the thread's (x, y[, z]), width from the host), \
             `DisjointChunks<T, N>` / `DisjointStrided<T, N>` (N elements per thread), `DisjointRows<T>` (a row per block), `DisjointTiles<T, TH, TW>` (a tile per block), `DisjointMmaTiles<T, BM, BN, WM, WN>` / `DisjointWgmmaTiles` / `DisjointPersistentWgmmaTiles` (tensor-core accumulators), `DisjointAppend<T>` (claimed by `push`: compaction), \
             `DisjointPerWarp<T>` / `DisjointPerBlock<T>` (one element per warp / block), `DisjointXorPairs<T>` / `DisjointButterflies<T>` (sorting-network and FFT pairs), \
             or atomics for outputs many threads update (`&[AtomicU32]`, `Matrix<AtomicF32>`); README \"Writing outputs\" shows each"
        )),
        (ArgKind::Invalid, Type::Reference(_)) => err(at(&ty), format!(
            "kernel arguments cannot borrow `{shown}`; hint: pass `&[T]` for device data or the value itself"
        )),
        (ArgKind::Invalid, Type::Path(p)) if p.path.segments.last().is_some_and(|s| s.ident == "Matrix") => err(at(&ty), format!(
            "`{shown}` is not a valid matrix argument; hint: write `Matrix<T>` with one element type, e.g. `Matrix<f32>` (read-only) or `Matrix<AtomicF32>` (shared updates)"
        )),
        (ArgKind::Invalid, Type::Path(p)) if p.path.segments.last().is_some_and(|s| s.ident == "TensorMap") => err(at(&ty), format!(
            "`{shown}` is not a valid tensor map argument; hint: write `TensorMap<T, D>` with the element type and the number of dimensions (1 to 5), e.g. `TensorMap<Bf16, 2>`"
        )),
        (ArgKind::Invalid, _) => err(at(&ty), format!("`{shown}` is not a valid output slice; hint: write `DisjointSlice<T>`")),
        (ArgKind::SliceIn { elem, .. }, Type::Reference(r)) => {
            if let Some(l) = r.lifetime.as_ref().filter(|l| l.ident != "_") {
                err(at(&l), format!(
                    "lifetime `{l}` cannot be honoured on the device: the slice is borrowed only for the launch; hint: write `&[{}]`",
                    show(elem)
                ));
            }
            check_value_type(elem, err);
        }
        (ArgKind::SliceIn { elem, matrix: true, .. }, Type::Path(p)) => {
            // `Matrix<'static, T>` would let the kernel keep references into the caller's buffer
            // past the launch (the CPU executor's launcher lends a host slice).
            let args = p.path.segments.last().into_iter().flat_map(|s| match &s.arguments {
                syn::PathArguments::AngleBracketed(ab) => ab.args.iter().collect(),
                _ => Vec::new(),
            });
            for a in args {
                if let syn::GenericArgument::Lifetime(l) = a {
                    if l.ident != "_" {
                        err(at(&l), format!(
                            "lifetime `{l}` cannot be honoured on the device: the matrix is borrowed only for the launch; hint: write `Matrix<{}>`",
                            show(elem)
                        ));
                    }
                }
            }
            check_value_type(elem, err);
        }
        (ArgKind::SliceOut { elem, .. }, Type::Path(p)) => {
            let lifetimes = p.path.segments.last().into_iter().flat_map(|s| match &s.arguments {
                syn::PathArguments::AngleBracketed(ab) => ab.args.iter().collect(),
                _ => Vec::new(),
            });
            for l in lifetimes {
                match l {
                    syn::GenericArgument::Lifetime(l) if l.ident != "_" => err(at(&l), format!(
                        "lifetime `{l}` cannot be honoured on the device: the output is borrowed only for the launch; hint: write `DisjointSlice<{}>`",
                        show(elem)
                    )),
                    // A literal zero size (`DisjointTiles<T, 0, 32>`, `DisjointChunks<T, 0>`) would own nothing; named
                    // constants are checked when the kernel is compiled.
                    syn::GenericArgument::Const(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. }))
                        if n.base10_parse::<u64>().is_ok_and(|v| v == 0) =>
                    {
                        let name = p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
                        err(at(&n), format!("`{name}` sizes must be at least 1; hint: a tile, chunk or group of 0 elements would own nothing"))
                    }
                    _ => {}
                }
            }
            check_value_type(elem, err);
        }
        (ArgKind::TensorMap { elem, dims }, _) => {
            if let Ok(lit) = syn::parse2::<syn::LitInt>(dims.clone()) {
                if !matches!(lit.base10_parse::<u8>(), Ok(1..=5)) {
                    err(at(&lit), format!(
                        "`{shown}`: a TMA tensor map has 1 to 5 dimensions, not {lit}; hint: map the tensor with at most 5 (merge contiguous ones)"
                    ));
                }
            }
            check_value_type(elem, err);
        }
        (ArgKind::Value, Type::Path(p)) if has_lifetime(p) => err(at(&ty), format!(
            "`{shown}` borrows (it has a lifetime), so it is not a value a kernel can take; `#[kernel]` knows its inputs \
             and outputs by their names (`&[T]`, `Matrix<T>`, `TensorMap<T, D>`, `DisjointSlice<T>`, the other `Disjoint*` \
             types), not through a type alias; hint: write the type itself in the signature"
        )),
        (ArgKind::Value, _) => check_value_type(ty, err),
        _ => {}
    }
}

/// Whether the path's last segment has a lifetime argument (`Out<'_>`).
fn has_lifetime(p: &syn::TypePath) -> bool {
    p.path.segments.last().is_some_and(|s| match &s.arguments {
        syn::PathArguments::AngleBracketed(ab) => {
            ab.args.iter().any(|a| matches!(a, syn::GenericArgument::Lifetime(_)))
        }
        _ => false,
    })
}

/// Types that cannot cross to the device by value: owning host containers, trait objects,
/// pointers, and scalars with invalid bit patterns. The `KernelArg` bound the launchers assert
/// catches the rest (e.g. a struct without `#[derive(KernelArg)]`).
pub fn check_value_type(ty: &Type, err: &mut impl FnMut(At, String)) {
    let shown = show(ty);
    match ty {
        Type::ImplTrait(_) => err(at(&ty), format!(
            "`{shown}` cannot be a kernel argument; hint: use a concrete type, kernels are compiled ahead of time"
        )),
        Type::TraitObject(_) => err(at(&ty), format!("trait object `{shown}` cannot cross to the device; hint: use a concrete type")),
        Type::Ptr(_) => err(at(&ty), format!(
            "raw pointer `{shown}` is not a kernel argument; hint: pass `&[T]` or `DisjointSlice<T>`"
        )),
        Type::Reference(_) => err(at(&ty), format!(
            "the reference `{shown}` would point into host memory from the device; hint: pass the value itself, or the data as a `&[T]` kernel argument"
        )),
        Type::Slice(_) => err(at(&ty), format!("`{shown}` has no size known to the launcher; hint: pass `&{shown}`")),
        Type::Tuple(t) if !t.elems.is_empty() => err(at(&ty), format!(
            "tuple `{shown}` has no fixed layout shared by host and device; hint: use a `#[repr(C)]` struct with `#[derive(KernelArg)]`"
        )),
        Type::BareFn(_) => err(at(&ty), format!("function pointer `{shown}` cannot be called on the device; hint: pass data, not code")),
        Type::Array(a) => check_value_type(&a.elem, err),
        Type::Path(p) => {
            if let Some(last) = p.path.segments.last() {
                let name = last.ident.to_string();
                if HOST_CONTAINERS.contains(&name.as_str()) {
                    err(at(&ty), format!(
                        "`{shown}` owns host memory and cannot be a kernel argument; hint: copy it to the GPU and pass `&[T]`"
                    ));
                } else if name == "bool" && p.path.segments.len() == 1 {
                    err(at(&ty), "`bool` is not a kernel argument type (a byte other than 0 or 1 would be undefined behaviour on the device); hint: use `u32` or `u8` holding 0 or 1".into());
                } else if name == "char" && p.path.segments.len() == 1 {
                    err(at(&ty), "`char` is not a kernel argument type (not every `u32` is a valid `char`); hint: pass a `u32` code point".into());
                } else if (name == "u128" || name == "i128") && p.path.segments.len() == 1 {
                    err(at(&ty), format!("`{name}` is not a kernel argument type (PTX has no 128-bit parameters); hint: split it into two `u64`"));
                }
            }
        }
        _ => {}
    }
}

/// Tokens as a user would write them: `&mut [f32]`, not `& mut [f32]`.
pub fn show(t: &impl ToTokens) -> String {
    let mut s = t.to_token_stream().to_string();
    for (from, to) in [
        ("& '", "&'"),
        ("& ", "&"),
        ("* const", "*const"),
        ("* mut", "*mut"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
        (" ;", ";"),
        (":: ", "::"),
        (" ::", "::"),
        ("( ", "("),
        (" )", ")"),
        (" :", ":"),
    ] {
        s = s.replace(from, to);
    }
    // `Fn (u32)` -> `Fn(u32)`: no space between a name and its parenthesised arguments.
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ' ' && chars.peek() == Some(&'(') && out.ends_with(|p: char| p.is_alphanumeric() || p == '_') {
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::TokenStream;
    use syn::ItemFn;

    fn errors(attr: TokenStream, item: ItemFn) -> Vec<String> {
        let k = Kernel::from_syn(attr, &item);
        match check(&k) {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn shows_types_as_written() {
        let t: Type = syn::parse_quote!(&'static mut [Vec<f32>]);
        assert_eq!(show(&t), "&'static mut [Vec<f32>]");
        let t: Type = syn::parse_quote!(*const core::ffi::c_void);
        assert_eq!(show(&t), "*const core::ffi::c_void");
        let t: Type = syn::parse_quote!(impl Fn(u32) -> u32);
        assert_eq!(show(&t), "impl Fn(u32) -> u32");
    }

    #[test]
    fn valid_kernels_pass() {
        assert!(errors(
            TokenStream::new(),
            syn::parse_quote!(
                pub fn k(a: f32, x: &[f32], y: DisjointSlice<f32>) {}
            )
        )
        .is_empty());
        assert!(errors(
            quote::quote!(instantiate(f32, f64)),
            syn::parse_quote!(
                pub fn k<T: Copy>(a: T, x: &'_ [T], y: DisjointSlice<'_, T>)
                where
                    T: Default,
                {
                }
            )
        )
        .is_empty());
    }

    #[test]
    fn all_errors_of_one_item_are_collected() {
        let e = errors(
            quote::quote!(launch_bounds(4096)),
            syn::parse_quote!(
                async fn k(grid: u32, x: &mut [f32], s: String, b: bool) -> u32 {}
            ),
        );
        assert_eq!(e.len(), 7, "{e:#?}");
        for (e, want) in
            e.iter().zip(["launch_bounds(4096)", "`async`", "`-> u32`", "`grid`", "`&mut [f32]`", "`String`", "`bool`"])
        {
            assert!(e.contains(want), "{e} lacks {want}");
        }
        assert!(e.iter().all(|e| e.contains("hint: ")), "{e:#?}");
    }

    #[test]
    fn generic_rules() {
        let e = errors(
            TokenStream::new(),
            syn::parse_quote!(
                fn k<T>(a: T) {}
            ),
        );
        assert!(e.len() == 1 && e[0].contains("instantiate(f32, f64)"), "{e:?}");
        let e = errors(
            quote::quote!(instantiate(f32)),
            syn::parse_quote!(
                fn k(a: f32) {}
            ),
        );
        assert!(e.len() == 1 && e[0].contains("only for generic kernels"), "{e:?}");
        let e = errors(
            quote::quote!(instantiate(f32, [u8; 2])),
            syn::parse_quote!(
                fn k<T>(a: T) {}
            ),
        );
        assert!(e.len() == 1 && e[0].contains("`[u8; 2]`"), "{e:?}");
        let e = errors(
            quote::quote!(instantiate((f32, u32))),
            syn::parse_quote!(
                fn k<T>(a: T) {}
            ),
        );
        assert!(e.len() == 1 && e[0].contains("2 type(s) for 1"), "{e:?}");
        let e = errors(
            TokenStream::new(),
            syn::parse_quote!(
                fn k<const N: usize>(a: [f32; N]) {}
            ),
        );
        assert!(e.len() == 1 && e[0].contains("`const N: usize`"), "{e:?}");
    }

    #[test]
    fn symbol_names_are_checked() {
        let e = errors(
            quote::quote!(name = "9lives"),
            syn::parse_quote!(
                fn k() {}
            ),
        );
        assert!(e.len() == 1 && e[0].contains("`9lives`"), "{e:?}");
        assert!(errors(
            quote::quote!(name = "my_k2"),
            syn::parse_quote!(
                fn k() {}
            )
        )
        .is_empty());
    }

    #[test]
    fn device_lifetimes_are_rejected() {
        let e = errors(
            TokenStream::new(),
            syn::parse_quote!(
                fn k(x: &'static [f32], y: DisjointSlice<'static, f32>, m: Matrix<'static, f32>) {}
            ),
        );
        assert_eq!(e.len(), 3, "{e:?}");
        assert!(e.iter().all(|e| e.contains("`'static`")), "{e:?}");
    }
}
