//! The `#[kernel]` item as oxide sees it: arguments classified by how they cross to the device,
//! and the attribute's options (`launch_bounds`, `block`, `dims`, `name`, `instantiate`).

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Error, FnArg, Ident, ItemFn, Pat, Type};

pub struct Kernel<'a> {
    pub item: &'a ItemFn,
    /// The Rust function; launchers are named after it (`launch_<name>`, ...).
    pub name: &'a Ident,
    /// The exported PTX symbol: the function's name or `#[kernel(name = "...")]`.
    pub export: String,
    pub export_span: Span,
    pub args: Vec<Arg>,
    pub launch_bounds: Option<LaunchBounds>,
    /// `#[kernel(block(x, y, z))]`: every launch uses exactly this block shape.
    pub block: Option<BlockShape>,
    /// `#[kernel(cluster(x, y, z))]`: every launch forms thread-block clusters of this shape.
    pub cluster: Option<ClusterShape>,
    /// `#[kernel(dims = N)]`: launches use only the first N dimensions (enforced by the
    /// launchers), which the device entry tells the optimiser so index math drops the rest.
    pub dims: u8,
    /// `#[kernel(instantiate(f32, f64))]`: one entry per concrete type (list) for a generic kernel.
    pub instantiate: Vec<Instance>,
    pub instantiate_span: Option<Span>,
    pub unsafe_fn: bool,
    /// Attribute errors, reported together with the validator's.
    pub attr_errors: Vec<Error>,
}

/// `cluster(x[, y[, z]])`: integer literals, at most 8 blocks in all.
pub struct ClusterShape {
    pub dims: [u32; 3],
}

pub struct LaunchBounds {
    pub max_threads: u32,
    pub min_blocks: u32,
}

/// `block(x[, y[, z]])`: const expressions (`u32`), missing extents are 1.
pub struct BlockShape {
    pub extents: [syn::Expr; 3],
    /// The values of extents written as integer literals (for checks at expansion time).
    pub literals: [Option<u64>; 3],
    pub span: Span,
}

/// One entry of `instantiate(..)`: a type, or a tuple of types for several type parameters.
pub struct Instance {
    pub types: Vec<Type>,
    /// The entry as written, for errors.
    pub tokens: TokenStream,
    pub span: Span,
}

#[derive(Clone)]
pub struct Arg {
    pub ident: Ident,
    /// Whether the user wrote a plain identifier (others get a generated name).
    pub user_named: bool,
    pub ty: Type,
    pub kind: ArgKind,
}

#[derive(Clone)]
pub enum ArgKind {
    /// Passed by value (scalars, `#[repr(C)]` argument structs).
    Value,
    /// `&[T]`: read-only device slice, pointer + length on the device. `atomic`: the elements
    /// are atomics (interior mutability), so the slice is neither `noalias` nor read-only.
    /// `matrix`: a `Matrix<T>`, whose `[cols, rows]` from the host follow pointer and length.
    SliceIn { elem: Type, atomic: bool, matrix: bool },
    /// An output type (`DisjointSlice<T>`, ...): pointer + length on the device, plus the
    /// host-built shape words of the shaped ones.
    SliceOut { elem: Type, shape: OutShape },
    /// `TensorMap<T, D>`: a TMA tensor map, passed by value in parameter space (128 bytes) plus
    /// its box; the host passes `&oxide_rt::host::TensorMap<T, D>`.
    TensorMap { elem: Type, dims: TokenStream },
    /// Syntax the validator rejects; kept so every error is reported at once.
    Invalid,
}

/// Which host-built shape an output carries to the device.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum OutShape {
    /// None: the type's ownership rule needs only the thread's position.
    Flat,
    /// `DisjointSlice2d<T>`, `DisjointRows<T>`, `DisjointTiles<T, ..>`: the host passes
    /// `Slice2d::new(buf, cols)`.
    D2,
    /// `DisjointSlice3d<T>`: the host passes `Slice3d::new(buf, cols, rows)`.
    D3,
    /// `DisjointXorPairs<T>`, `DisjointButterflies<T>`: the host passes `Pairs::new(buf, d)`.
    Pairs,
    /// `DisjointAppend<T>`: the host passes `Append::new(buf, count)`; the device gets the
    /// counter's address as the first shape word.
    Append,
}

/// A concrete kernel to emit: the kernel itself, or one instantiation of a generic kernel.
pub struct Concrete {
    /// Exported PTX symbol, e.g. `scale_f32`.
    pub export: String,
    /// Launcher base name, e.g. `scale_f32` (`launch_scale_f32`, `cpu_scale_f32`, ...).
    pub launcher: Ident,
    /// `::<f32>` for instantiations, empty otherwise.
    pub turbofish: TokenStream,
    pub args: Vec<Arg>,
    /// Where errors about this kernel's name point: the name, or the `instantiate` entry.
    pub span: Span,
}

impl<'a> Kernel<'a> {
    pub fn from_syn(attr_args: TokenStream, item: &'a ItemFn) -> Kernel<'a> {
        let mut attr = Attr::default();
        let mut attr_errors = Vec::new();
        if let Err(e) = syn::parse::Parser::parse2(|input: syn::parse::ParseStream<'_>| attr.parse(input), attr_args) {
            attr_errors.push(e);
        }
        let mut args = Vec::new();
        for (i, input) in item.sig.inputs.iter().enumerate() {
            match input {
                FnArg::Receiver(_) => {} // reported by valid.rs
                FnArg::Typed(pt) => {
                    let (ident, user_named) = match &*pt.pat {
                        Pat::Ident(p) => (p.ident.clone(), true),
                        _ => (Ident::new(&format!("__oxide_arg{i}"), pt.pat.span()), false),
                    };
                    let ty = (*pt.ty).clone();
                    args.push(Arg { ident, user_named, kind: classify(&ty), ty });
                }
            }
        }
        let (export, export_span) = match attr.name {
            Some(lit) => (lit.value(), lit.span()),
            // `r#type` exports `type`, as `#[no_mangle]` would.
            None => (item.sig.ident.unraw().to_string(), item.sig.ident.span()),
        };
        Kernel {
            item,
            name: &item.sig.ident,
            export,
            export_span,
            args,
            launch_bounds: attr.launch_bounds,
            block: attr.block,
            cluster: attr.cluster,
            dims: attr.dims.unwrap_or(3),
            instantiate: attr.instantiate,
            instantiate_span: attr.instantiate_span,
            unsafe_fn: item.sig.unsafety.is_some(),
            attr_errors,
        }
    }

    /// The kernels to emit: one for a plain kernel, one per `instantiate` entry for a generic one.
    pub fn concrete(&self) -> Vec<Concrete> {
        if self.instantiate.is_empty() {
            return vec![Concrete {
                export: self.export.clone(),
                launcher: self.name.clone(),
                turbofish: TokenStream::new(),
                args: self.args.clone(),
                span: self.export_span,
            }];
        }
        let params: Vec<&Ident> = self.item.sig.generics.type_params().map(|p| &p.ident).collect();
        self.instantiate
            .iter()
            .map(|inst| {
                let suffix = instance_suffix(inst);
                let mut subst = Subst { params: &params, types: &inst.types };
                let args = self
                    .args
                    .iter()
                    .map(|a| {
                        let mut ty = a.ty.clone();
                        subst.visit_type_mut(&mut ty);
                        Arg { ident: a.ident.clone(), user_named: a.user_named, kind: classify(&ty), ty }
                    })
                    .collect();
                let types = &inst.types;
                Concrete {
                    export: format!("{}_{suffix}", self.export),
                    launcher: Ident::new(&format!("{}_{suffix}", self.name.unraw()), self.name.span()),
                    turbofish: quote::quote!(::<#(#types),*>),
                    args,
                    span: inst.span,
                }
            })
            .collect()
    }
}

/// `f32` -> `f32`; `(f32, u32)` -> `f32_u32`; `my::Vec3` -> `Vec3`. Only called after
/// validation accepted the entry (every type a path).
pub fn instance_suffix(inst: &Instance) -> String {
    inst.types
        .iter()
        .map(|t| match t {
            Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default(),
            _ => String::new(),
        })
        .collect::<Vec<_>>()
        .join("_")
}

/// Replaces a kernel's type parameters by the instantiation's types in an argument type.
struct Subst<'p> {
    params: &'p [&'p Ident],
    types: &'p [Type],
}

impl VisitMut for Subst<'_> {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::Path(p) = ty {
            if p.qself.is_none() && p.path.leading_colon.is_none() && p.path.segments.len() == 1 {
                let seg = &p.path.segments[0];
                if seg.arguments.is_none() {
                    if let Some(i) = self.params.iter().position(|id| **id == seg.ident) {
                        if let Some(t) = self.types.get(i) {
                            *ty = t.clone();
                            return;
                        }
                    }
                }
            }
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

pub fn classify(ty: &Type) -> ArgKind {
    match ty {
        Type::Reference(r) if r.mutability.is_none() => match &*r.elem {
            Type::Slice(s) => {
                ArgKind::SliceIn { elem: (*s.elem).clone(), atomic: atomic_host_elem(&s.elem).is_some(), matrix: false }
            }
            _ => ArgKind::Invalid,
        },
        Type::Reference(_) => ArgKind::Invalid,
        Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else { return ArgKind::Invalid };
            // `DisjointSlice<T>`, `DisjointChunks<T, N>` and `DisjointStrided<T, N>` (N may
            // parse as a type).
            let chunks = [
                "DisjointChunks",
                "DisjointStrided",
                "DisjointTiles",
                "DisjointMmaTiles",
                "DisjointWgmmaTiles",
                "DisjointPersistentWgmmaTiles",
            ]
            .iter()
            .any(|n| last.ident == n);
            let shape = match last.ident.to_string().as_str() {
                "DisjointSlice2d"
                | "DisjointRows"
                | "DisjointTiles"
                | "DisjointMmaTiles"
                | "DisjointWgmmaTiles"
                | "DisjointPersistentWgmmaTiles" => Some(OutShape::D2),
                "DisjointSlice3d" => Some(OutShape::D3),
                "DisjointXorPairs" | "DisjointButterflies" => Some(OutShape::Pairs),
                "DisjointAppend" => Some(OutShape::Append),
                "DisjointSlice" | "DisjointChunks" | "DisjointStrided" | "DisjointPerWarp" | "DisjointPerBlock" => {
                    Some(OutShape::Flat)
                }
                _ => None,
            };
            if last.ident == "TensorMap" {
                if let syn::PathArguments::AngleBracketed(ab) = &last.arguments {
                    let args: Vec<&syn::GenericArgument> = ab.args.iter().collect();
                    if let [syn::GenericArgument::Type(elem), dims] = args[..] {
                        let dims = match dims {
                            syn::GenericArgument::Const(e) => quote::quote!(#e),
                            syn::GenericArgument::Type(t) => quote::quote!(#t),
                            _ => return ArgKind::Invalid,
                        };
                        return ArgKind::TensorMap { elem: elem.clone(), dims };
                    }
                }
                return ArgKind::Invalid;
            }
            if last.ident == "Matrix" {
                if let syn::PathArguments::AngleBracketed(ab) = &last.arguments {
                    let mut types = ab.args.iter().filter_map(|a| match a {
                        syn::GenericArgument::Type(t) => Some(t),
                        _ => None,
                    });
                    if let (Some(elem), None) = (types.next(), types.next()) {
                        let atomic = atomic_host_elem(elem).is_some();
                        return ArgKind::SliceIn { elem: elem.clone(), atomic, matrix: true };
                    }
                }
                return ArgKind::Invalid;
            }
            if let Some(shape) = shape {
                if let syn::PathArguments::AngleBracketed(ab) = &last.arguments {
                    let mut types = ab.args.iter().filter_map(|a| match a {
                        syn::GenericArgument::Type(t) => Some(t),
                        _ => None,
                    });
                    let (first, second) = (types.next(), types.next());
                    if let (Some(elem), None, _) | (Some(elem), Some(_), true) = (first, second, chunks) {
                        return ArgKind::SliceOut { elem: elem.clone(), shape };
                    }
                }
                return ArgKind::Invalid;
            }
            ArgKind::Value
        }
        _ => ArgKind::Value,
    }
}

#[derive(Default)]
struct Attr {
    launch_bounds: Option<LaunchBounds>,
    block: Option<BlockShape>,
    cluster: Option<ClusterShape>,
    dims: Option<u8>,
    name: Option<syn::LitStr>,
    instantiate: Vec<Instance>,
    instantiate_span: Option<Span>,
}

const ATTR_HINT: &str = "hint: `#[kernel]` takes `launch_bounds(max_threads[, min_blocks])`, `block(x[, y[, z]])`, `cluster(x[, y[, z]])`, `dims = 1|2|3`, `name = \"symbol\"` and `instantiate(type, ..)`";

impl Attr {
    /// `launch_bounds(256[, 2])`, `name = "sym"`, `instantiate(f32, (f64, u32))`, comma separated.
    fn parse(&mut self, input: syn::parse::ParseStream<'_>) -> syn::Result<()> {
        while !input.is_empty() {
            let key: Ident = input
                .parse()
                .map_err(|e| Error::new(e.span(), format!("expected a `#[kernel]` option; {ATTR_HINT}")))?;
            if key == "launch_bounds" {
                self.launch_bounds = Some(parse_launch_bounds(&key, input)?);
            } else if key == "block" {
                self.block = Some(parse_block(&key, input)?);
            } else if key == "cluster" {
                self.cluster = Some(parse_cluster(&key, input)?);
            } else if key == "name" {
                input.parse::<syn::Token![=]>()?;
                self.name = Some(input.parse()?);
            } else if key == "dims" {
                input.parse::<syn::Token![=]>()?;
                let lit: syn::LitInt = input.parse()?;
                match lit.base10_parse::<u8>() {
                    Ok(d @ 1..=3) => self.dims = Some(d),
                    _ => return Err(Error::new(lit.span(), "`dims` is the number of launch dimensions the kernel uses, 1, 2 or 3; hint: `#[kernel(dims = 1)]`")),
                }
            } else if key == "instantiate" {
                let content;
                let paren = syn::parenthesized!(content in input);
                let list = syn::punctuated::Punctuated::<Type, syn::Token![,]>::parse_terminated(&content)?;
                self.instantiate_span = Some(paren.span.join());
                for t in list {
                    let span = t.span();
                    let tokens = quote::ToTokens::to_token_stream(&t);
                    let types = match t {
                        Type::Tuple(tt) if !tt.elems.is_empty() => tt.elems.into_iter().collect(),
                        Type::Paren(p) => vec![*p.elem],
                        t => vec![t],
                    };
                    self.instantiate.push(Instance { types, tokens, span });
                }
                if self.instantiate.is_empty() {
                    return Err(Error::new(
                        paren.span.join(),
                        "`instantiate()` lists no types; hint: `#[kernel(instantiate(f32, f64))]`",
                    ));
                }
            } else {
                return Err(Error::new(key.span(), format!("unknown `#[kernel]` option `{key}`; {ATTR_HINT}")));
            }
            if !input.is_empty() {
                input.parse::<syn::Token![,]>()?;
            }
        }
        Ok(())
    }
}

/// `key(a, b, ..)`: the comma-separated expressions and the parentheses' span; `missing` is
/// the error (on `key`) when no parentheses follow.
fn parenthesized_exprs(
    key: &Ident,
    input: syn::parse::ParseStream<'_>,
    missing: &str,
) -> syn::Result<(Vec<syn::Expr>, proc_macro2::extra::DelimSpan)> {
    if !input.peek(syn::token::Paren) {
        return Err(Error::new(key.span(), missing));
    }
    let content;
    let paren = syn::parenthesized!(content in input);
    let exprs = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated(&content)?;
    Ok((exprs.into_iter().collect(), paren.span))
}

fn parse_block(key: &Ident, input: syn::parse::ParseStream<'_>) -> syn::Result<BlockShape> {
    const HINT: &str = "hint: `#[kernel(block(256))]` or `#[kernel(block(32, 8))]`";
    let (exprs, paren) =
        parenthesized_exprs(key, input, &format!("`block` needs the block's extents in parentheses; {HINT}"))?;
    if exprs.is_empty() || exprs.len() > 3 {
        return Err(Error::new(paren.join(), format!("`block(..)` takes one to three extents (x, y, z); {HINT}")));
    }
    let literal = |e: &syn::Expr| match e {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => i.base10_parse::<u64>().ok(),
        _ => None,
    };
    let mut literals = [Some(1), Some(1), Some(1)];
    for (i, e) in exprs.iter().enumerate() {
        literals[i] = literal(e);
        if literals[i].is_some_and(|v| !(1..=1024).contains(&v)) {
            return Err(Error::new(
                e.span(),
                format!("a block extent must be in 1..=1024, found `{}`; {HINT}", crate::valid::show(e)),
            ));
        }
    }
    if let [Some(x), Some(y), Some(z)] = literals {
        if x * y * z > 1024 {
            return Err(Error::new(
                paren.join(),
                format!("`block(..)` of {} threads: a block has at most 1024; {HINT}", x * y * z),
            ));
        }
    }
    let one: syn::Expr = syn::parse_quote!(1);
    let extents = [0, 1, 2].map(|i| exprs.get(i).cloned().unwrap_or_else(|| one.clone()));
    Ok(BlockShape { extents, literals, span: paren.join() })
}

fn parse_cluster(key: &Ident, input: syn::parse::ParseStream<'_>) -> syn::Result<ClusterShape> {
    const HINT: &str = "hint: `#[kernel(cluster(2))]` or `#[kernel(cluster(2, 2))]`: at most 8 blocks per cluster";
    let (exprs, paren) = parenthesized_exprs(
        key,
        input,
        &format!("`cluster` needs the cluster's extents in blocks in parentheses; {HINT}"),
    )?;
    if exprs.is_empty() || exprs.len() > 3 {
        return Err(Error::new(paren.join(), format!("`cluster(..)` takes one to three extents (x, y, z); {HINT}")));
    }
    let mut dims = [1u32; 3];
    for (i, e) in exprs.iter().enumerate() {
        match e {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(lit), .. }) => match lit.base10_parse::<u32>() {
                Ok(v @ 1..=8) => dims[i] = v,
                _ => {
                    return Err(Error::new(
                        lit.span(),
                        format!("a cluster extent must be in 1..=8, found `{lit}`; {HINT}"),
                    ))
                }
            },
            other => {
                return Err(Error::new(
                    other.span(),
                    format!("`cluster` takes integer literals, found `{}`; {HINT}", crate::valid::show(other)),
                ))
            }
        }
    }
    let blocks = dims[0] * dims[1] * dims[2];
    if blocks > 8 {
        return Err(Error::new(
            paren.join(),
            format!("`cluster(..)` of {blocks} blocks: a cluster has at most 8; {HINT}"),
        ));
    }
    Ok(ClusterShape { dims })
}

fn parse_launch_bounds(key: &Ident, input: syn::parse::ParseStream<'_>) -> syn::Result<LaunchBounds> {
    const HINT: &str = "hint: `#[kernel(launch_bounds(256))]` or `#[kernel(launch_bounds(256, 2))]`";
    let (nums, paren) = parenthesized_exprs(
        key,
        input,
        &format!("`launch_bounds` needs the maximum threads per block in parentheses; {HINT}"),
    )?;
    let mut vals = Vec::new();
    for n in &nums {
        match n {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => {
                vals.push((i.base10_parse::<u32>()?, i.span()))
            }
            other => {
                return Err(Error::new(
                    other.span(),
                    format!("`launch_bounds` takes integer literals, found `{}`; {HINT}", crate::valid::show(other)),
                ))
            }
        }
    }
    match vals.as_slice() {
        [(max, _)] | [(max, _), _] if (1..=1024).contains(max) => {
            Ok(LaunchBounds { max_threads: *max, min_blocks: vals.get(1).map_or(0, |v| v.0) })
        }
        [(max, span)] | [(max, span), _] => Err(Error::new(
            *span,
            format!("`launch_bounds({max})`: the maximum threads per block must be in 1..=1024; {HINT}"),
        )),
        _ => Err(Error::new(
            paren.join(),
            format!(
            "`launch_bounds(..)` takes the maximum threads per block and optionally the minimum blocks per SM; {HINT}"
        ),
        )),
    }
}

/// The host element type of a `&[Atomic..]` input: `AtomicU32` -> `u32`, `AtomicF32` -> `f32`
/// (any path ending so, without generics). Every atomic has its plain type's size and
/// alignment, so the host passes a buffer of plain values, e.g. a `CudaSlice<u32>`.
/// The name of a path type's last segment (`DisjointSlice2d` of `oxide_rt::device::DisjointSlice2d<f32>`).
pub fn last_ident(ty: &Type) -> Option<String> {
    let Type::Path(p) = ty else { return None };
    Some(p.path.segments.last()?.ident.to_string())
}

pub fn atomic_host_elem(ty: &Type) -> Option<TokenStream> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last().filter(|s| s.arguments.is_none())?;
    let plain = match last.ident.to_string().as_str() {
        "AtomicU8" => quote::quote!(u8),
        "AtomicI8" => quote::quote!(i8),
        "AtomicU16" => quote::quote!(u16),
        "AtomicI16" => quote::quote!(i16),
        "AtomicU32" => quote::quote!(u32),
        "AtomicI32" => quote::quote!(i32),
        "AtomicU64" => quote::quote!(u64),
        "AtomicI64" => quote::quote!(i64),
        "AtomicUsize" => quote::quote!(usize),
        "AtomicIsize" => quote::quote!(isize),
        "AtomicF32" => quote::quote!(f32),
        "AtomicF64" => quote::quote!(f64),
        _ => return None,
    };
    Some(plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(attr: TokenStream, item: &ItemFn) -> Kernel<'_> {
        Kernel::from_syn(attr, item)
    }

    #[test]
    fn classifies_arguments() {
        let item: ItemFn = syn::parse_quote!(
            fn k(a: f32, x: &[u32], y: DisjointSlice<f64>, z: &mut [f32], (p, q): (f32, f32)) {}
        );
        let k = kernel(TokenStream::new(), &item);
        let kinds: Vec<&str> = k
            .args
            .iter()
            .map(|a| match a.kind {
                ArgKind::Value => "value",
                ArgKind::SliceIn { .. } => "in",
                ArgKind::SliceOut { .. } => "out",
                ArgKind::TensorMap { .. } => "tensor map",
                ArgKind::Invalid => "invalid",
            })
            .collect();
        assert_eq!(kinds, ["value", "in", "out", "invalid", "value"]);
        assert!(!k.args[4].user_named && k.args[4].ident.to_string().starts_with("__oxide_arg"));
    }

    #[test]
    fn parses_all_options() {
        let item: ItemFn = syn::parse_quote!(
            fn scale<T>(a: T, x: &[T], y: DisjointSlice<T>) {}
        );
        let k = kernel(quote::quote!(launch_bounds(128, 4), name = "scl", instantiate(f32, f64)), &item);
        assert!(k.attr_errors.is_empty());
        let lb = k.launch_bounds.as_ref().map(|b| (b.max_threads, b.min_blocks));
        assert_eq!(lb, Some((128, 4)));
        assert_eq!(k.export, "scl");
        let c = k.concrete();
        assert_eq!(c.iter().map(|c| c.export.as_str()).collect::<Vec<_>>(), ["scl_f32", "scl_f64"]);
        assert_eq!(c[1].launcher.to_string(), "scale_f64");
        assert!(
            matches!(&c[1].args[1].kind, ArgKind::SliceIn { elem, atomic: false, .. } if crate::valid::show(elem) == "f64")
        );
        assert!(
            matches!(&c[1].args[2].kind, ArgKind::SliceOut { elem, shape: OutShape::Flat } if crate::valid::show(elem) == "f64")
        );
        assert_eq!(crate::valid::show(&c[0].args[0].ty), "f32");
    }

    #[test]
    fn tuple_instances_name_every_type() {
        let item: ItemFn = syn::parse_quote!(
            fn k<A, B>(a: A, b: &[B]) {}
        );
        let k = kernel(quote::quote!(instantiate((f32, u32))), &item);
        let c = k.concrete();
        assert_eq!(c[0].export, "k_f32_u32");
        assert_eq!(crate::valid::show(&c[0].args[1].ty), "&[u32]");
    }

    #[test]
    fn bad_launch_bounds_are_reported() {
        let item: ItemFn = syn::parse_quote!(
            fn k() {}
        );
        for attr in [
            quote::quote!(launch_bounds(0)),
            quote::quote!(launch_bounds(2048)),
            quote::quote!(launch_bounds),
            quote::quote!(launch_bounds(1, 2, 3)),
            quote::quote!(bounds(3)),
        ] {
            let k = kernel(attr.clone(), &item);
            assert_eq!(k.attr_errors.len(), 1, "{attr}");
        }
    }
}
