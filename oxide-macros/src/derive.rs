//! `#[derive(KernelArg)]`: a `#[repr(C)]` struct passed to kernels by value.
//!
//! Checks (all errors spanned and collected): a struct, `#[repr(C)]`, no generics, at least one
//! field, kernel-safe field types. Emits `KernelArg` (+ cudarc's `DeviceRepr` on the host), a
//! `KernelArg` assertion per field, and the layout proof:
//! * nvptx64: a meta record `__oxide_layout_<Struct>_<hash>: [u64; 2 + fields]` =
//!   `[size, align, offset of each field]`, which oxide-build copies into its manifest. The
//!   hash of the definition keeps two structs of one name in different modules of the kernels
//!   crate from clashing on one symbol;
//! * host: when `$OXIDE_MANIFEST` is set (the crate is built by oxide-build), constant
//!   assertions that the host's size, alignment and offsets equal that record.

use crate::valid::{at, check_value_type, show, At};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Error, Fields, Member};

pub fn kernel_arg(input: &DeriveInput) -> TokenStream {
    let p = quote!(::oxide_rt::__private);
    let name = &input.ident;
    let errors = check(input);
    // No padding when the fields' sizes add up to the struct's and none has padding itself.
    let padding_free = match (&errors, &input.data) {
        (Ok(()), Data::Struct(data)) => {
            let tys: Vec<&syn::Type> = data.fields.iter().map(|f| &f.ty).collect();
            quote! {
                const PADDING_FREE: bool = ::core::mem::size_of::<Self>() == 0 #(+ ::core::mem::size_of::<#tys>())*
                    #(&& <#tys as #p::KernelArg>::PADDING_FREE)*;
            }
        }
        _ => TokenStream::new(),
    };
    let impls = quote! {
        // `#[derive(KernelArg)]` accepted the struct: `#[repr(C)]`, no generics, every field a
        // `KernelArg` (asserted below); its host layout is checked against nvptx64's below
        // whenever the crate is built by oxide-build.
        // SAFETY: so it is plain `#[repr(C)]` data of `KernelArg` fields, with no invalid values.
        unsafe impl #p::KernelArg for #name { #padding_free }
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: as above; the bytes of the value are exactly what the kernel reads.
        unsafe impl #p::DeviceRepr for #name {}
    };
    if let Err(e) = errors {
        // The impls stay so uses of the struct do not cascade into more errors.
        let e = e.to_compile_error();
        return quote! { #e #impls };
    }
    let Data::Struct(data) = &input.data else { return impls };
    let members: Vec<Member> = data.fields.members().collect();
    let field_asserts = data.fields.iter().map(|f| {
        let ty = &f.ty;
        quote_spanned! {ty.span()=> #p::assert_kernel_arg::<#ty>(); }
    });
    let record = format_ident!("__oxide_layout_{}_{:08x}", name, definition_hash(input));
    let n = members.len() + 2;
    let proof = host_proof(name, &record.to_string(), &data.fields);
    quote! {
        #impls
        const _: () = { #(#field_asserts)* };

        #[cfg(target_arch = "nvptx64")]
        #[doc(hidden)]
        #[used]
        #[unsafe(no_mangle)]
        #[unsafe(link_section = "oxide.meta")]
        #[allow(non_upper_case_globals)]
        static #record: [u64; #n] = [
            ::core::mem::size_of::<#name>() as u64,
            ::core::mem::align_of::<#name>() as u64,
            #(::core::mem::offset_of!(#name, #members) as u64),*
        ];

        #proof
    }
}

/// FNV-1a over the struct's definition (name, attributes other than docs, fields), token by
/// token: the host and the device expand the same source, and token text (unlike
/// `TokenStream::to_string`'s spacing) does not depend on the compiler version.
fn definition_hash(input: &DeriveInput) -> u32 {
    fn walk(tokens: TokenStream, h: &mut u32) {
        for t in tokens {
            let text = match t {
                proc_macro2::TokenTree::Group(g) => {
                    eat(&format!("{:?}", g.delimiter()), h);
                    walk(g.stream(), h);
                    continue;
                }
                proc_macro2::TokenTree::Ident(i) => i.to_string(),
                proc_macro2::TokenTree::Punct(p) => p.as_char().to_string(),
                proc_macro2::TokenTree::Literal(l) => l.to_string(),
            };
            eat(&text, h);
        }
    }
    fn eat(text: &str, h: &mut u32) {
        for b in text.bytes().chain([0]) {
            *h = (*h ^ b as u32).wrapping_mul(0x0100_0193);
        }
    }
    let mut h = 0x811c_9dc5;
    eat(&input.ident.to_string(), &mut h);
    for attr in input.attrs.iter().filter(|a| !a.path().is_ident("doc")) {
        walk(quote!(#attr), &mut h);
    }
    if let Data::Struct(data) = &input.data {
        for f in &data.fields {
            let (name, ty) = (&f.ident, &f.ty);
            walk(quote!(#name : #ty), &mut h);
        }
    }
    h
}

fn member_name(m: &Member) -> String {
    match m {
        Member::Named(i) => i.to_string(),
        Member::Unnamed(i) => i.index.to_string(),
    }
}

/// The host half of the layout proof, from the record in `$OXIDE_MANIFEST`.
fn host_proof(name: &syn::Ident, record: &str, fields: &Fields) -> TokenStream {
    let members: Vec<Member> = fields.members().collect();
    let Some(path) = crate::manifest::path() else {
        return TokenStream::new(); // not built by oxide-build: nothing to compare against
    };
    let host_error = |msg: String| {
        let e = Error::new(name.span(), msg).to_compile_error();
        quote! { #[cfg(not(target_arch = "nvptx64"))] const _: () = { #e }; }
    };
    let values = match crate::manifest::read_record(&path, record) {
        Ok(Some(v)) => v,
        Ok(None) => {
            return host_error(format!(
                "`{name}` derives `KernelArg` but the device build has no layout record for it (`{record}` is missing from {}); \
                 hint: define the struct in the kernels module (or a module it declares) so it is compiled for the GPU too",
                path.display()
            ))
        }
        Err(why) => return host_error(why),
    };
    if values.len() != members.len() + 2 {
        return host_error(format!(
            "the layout record `{record}` has {} entries but `{name}` has {} fields: {} is stale; hint: rebuild so the build script runs again",
            values.len(),
            members.len(),
            path.display()
        ));
    }
    let (size, align) = (values[0] as usize, values[1] as usize);
    let size_msg = format!(
        "kernel argument `{name}` differs between host and GPU: its size is not {size} bytes as on nvptx64; hint: use fixed-width field types and explicit padding"
    );
    let align_msg = format!(
        "kernel argument `{name}` differs between host and GPU: its alignment is not {align} as on nvptx64; hint: add `#[repr(C, align({align}))]`"
    );
    // One constant per check, spanned on what it checks, so a mismatch points at the field.
    let field_checks = fields.iter().zip(&members).zip(&values[2..]).map(|((f, m), off)| {
        let off = *off as usize;
        let msg = format!(
            "kernel argument `{name}` differs between host and GPU: field `{}` is not at offset {off} as on nvptx64; hint: use fixed-width field types and explicit padding",
            member_name(m)
        );
        let place = f.ident.as_ref().map_or_else(|| f.ty.span(), |i| i.span());
        quote_spanned! {place=>
            #[cfg(not(target_arch = "nvptx64"))]
            const _: () = ::core::assert!(::core::mem::offset_of!(#name, #m) == #off, #msg);
        }
    });
    quote_spanned! {name.span()=>
        #[cfg(not(target_arch = "nvptx64"))]
        const _: () = ::core::assert!(::core::mem::size_of::<#name>() == #size, #size_msg);
        #[cfg(not(target_arch = "nvptx64"))]
        const _: () = ::core::assert!(::core::mem::align_of::<#name>() == #align, #align_msg);
        #(#field_checks)*
    }
}

fn check(input: &DeriveInput) -> Result<(), Error> {
    let mut errors: Vec<Error> = Vec::new();
    let mut err = |at: At, msg: String| errors.push(at.error(msg));
    let name = &input.ident;

    let fields = match &input.data {
        Data::Struct(s) => Some(&s.fields),
        Data::Enum(e) => {
            err(at(&e.enum_token), format!(
                "enum `{name}` cannot derive `KernelArg`: an enum's tag has values the device cannot trust; hint: pass a `u32` and match on it in the kernel"
            ));
            None
        }
        Data::Union(u) => {
            err(
                at(&u.union_token),
                format!("union `{name}` cannot derive `KernelArg`; hint: use a `#[repr(C)]` struct"),
            );
            None
        }
    };

    // `#[repr(C)]`, optionally with `align(N)` / `packed`: the layout is then defined by the C
    // rules on both targets (and checked against the device anyway).
    let mut has_c = false;
    let mut repr_attr = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("repr")) {
        repr_attr = Some(attr);
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("C") {
                has_c = true;
            }
            if meta.input.peek(syn::token::Paren) {
                let _content;
                syn::parenthesized!(_content in meta.input);
            }
            Ok(())
        });
    }
    if !has_c {
        let found = match repr_attr {
            Some(_) => "its `#[repr(..)]` lacks `C`",
            None => "it has Rust's default layout, which may differ between host and GPU",
        };
        err(
            repr_attr.map_or_else(|| at(name), at),
            format!(
            "`{name}` must be `#[repr(C)]` to derive `KernelArg`: {found}; hint: add `#[repr(C)]` above `struct {name}`"
        ),
        );
    }

    for g in &input.generics.params {
        err(at(&g), format!(
            "`{name}` cannot derive `KernelArg` with generic parameter `{}`: each layout is proven for one concrete struct; hint: define one struct per field type",
            show(g)
        ));
    }

    if let Some(fields) = fields {
        if fields.is_empty() {
            let place = match fields {
                Fields::Unit => at(name),
                _ => at(fields),
            };
            err(place, format!(
                "`{name}` has no fields: an empty kernel argument carries nothing and the GPU ABI may drop it; hint: remove the argument"
            ));
        }
        for (f, m) in fields.iter().zip(fields.members()) {
            let field = member_name(&m);
            check_value_type(&f.ty, &mut |at, msg| err(at, format!("field `{field}` of `{name}`: {msg}")));
        }
    }

    crate::valid::combine(errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(input: DeriveInput) -> Vec<String> {
        match check(&input) {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn accepts_repr_c_plain_data() {
        assert!(errors(syn::parse_quote!(
            #[repr(C)]
            struct P {
                a: f32,
                b: [u32; 4],
                c: usize,
                d: Inner,
            }
        ))
        .is_empty());
        assert!(errors(syn::parse_quote!(
            #[derive(Clone)]
            #[repr(C, align(16))]
            struct P(f64, i8);
        ))
        .is_empty());
    }

    #[test]
    fn rejects_bad_structs_with_all_errors() {
        let e = errors(syn::parse_quote!(
            #[repr(transparent)]
            struct P<T> {
                a: &'static f32,
                b: bool,
                c: *const u8,
                d: Vec<T>,
                e: (u8, u8),
                f: [char; 2],
            }
        ));
        let want = [
            "lacks `C`",
            "generic parameter `T`",
            "field `a`",
            "field `b`",
            "field `c`",
            "field `d`",
            "field `e`",
            "field `f`",
        ];
        assert_eq!(e.len(), want.len(), "{e:#?}");
        for (e, w) in e.iter().zip(want) {
            assert!(e.contains(w) && e.contains("hint: "), "{e} lacks {w}");
        }
        let e = errors(syn::parse_quote!(
            struct U;
        ));
        assert_eq!(e.len(), 2, "{e:#?}");
        assert!(e[0].contains("default layout") && e[1].contains("no fields"), "{e:#?}");
        let e = errors(syn::parse_quote!(
            #[repr(C)]
            enum E {
                A,
            }
        ));
        assert!(e.len() == 1 && e[0].contains("enum `E`"), "{e:#?}");
    }
}
