//! The `#[kernel]` item as oxide sees it: arguments classified by how they cross to the device.

use proc_macro2::TokenStream;
use syn::spanned::Spanned;
use syn::{Error, FnArg, Ident, ItemFn, Pat, Type};

pub struct Kernel<'a> {
    pub item: &'a ItemFn,
    pub name: &'a Ident,
    pub args: Vec<Arg<'a>>,
    pub launch_bounds: Option<LaunchBounds>,
    pub is_unsafe: bool,
}

pub struct LaunchBounds {
    pub max_threads: u32,
    pub min_blocks: u32,
}

pub struct Arg<'a> {
    pub ident: Ident,
    pub ty: &'a Type,
    pub kind: ArgKind<'a>,
}

pub enum ArgKind<'a> {
    /// Passed by value (scalars, `#[repr(C)]` argument structs).
    Value,
    /// `&[T]`: read-only device slice, pointer + length on the device.
    SliceIn { elem: &'a Type },
    /// `DisjointSlice<T>`: per-thread output slice, pointer + length on the device.
    SliceOut { elem: &'a Type },
    /// Syntax the validator rejects; kept so every error is reported at once.
    Invalid,
}

impl<'a> Kernel<'a> {
    pub fn from_syn(attr_args: TokenStream, item: &'a ItemFn) -> Result<Kernel<'a>, Error> {
        let launch_bounds = parse_attr_args(attr_args)?;
        let mut args = Vec::new();
        for (i, input) in item.sig.inputs.iter().enumerate() {
            match input {
                FnArg::Receiver(_) => {} // reported by valid.rs
                FnArg::Typed(pt) => {
                    let ident = match &*pt.pat {
                        Pat::Ident(p) => p.ident.clone(),
                        _ => Ident::new(&format!("__oxide_arg{i}"), pt.pat.span()),
                    };
                    args.push(Arg { ident, ty: &pt.ty, kind: classify(&pt.ty) });
                }
            }
        }
        Ok(Kernel { item, name: &item.sig.ident, args, launch_bounds, is_unsafe: item.sig.unsafety.is_some() })
    }
}

fn classify(ty: &Type) -> ArgKind<'_> {
    match ty {
        Type::Reference(r) if r.mutability.is_none() => match &*r.elem {
            Type::Slice(s) => ArgKind::SliceIn { elem: &s.elem },
            _ => ArgKind::Invalid,
        },
        Type::Reference(_) => ArgKind::Invalid,
        Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else { return ArgKind::Invalid };
            if last.ident == "DisjointSlice" {
                if let syn::PathArguments::AngleBracketed(ab) = &last.arguments {
                    let mut types = ab.args.iter().filter_map(|a| match a {
                        syn::GenericArgument::Type(t) => Some(t),
                        _ => None,
                    });
                    if let (Some(elem), None) = (types.next(), types.next()) {
                        return ArgKind::SliceOut { elem };
                    }
                }
                return ArgKind::Invalid;
            }
            ArgKind::Value
        }
        _ => ArgKind::Value,
    }
}

/// `#[kernel]` or `#[kernel(launch_bounds(256))]` / `#[kernel(launch_bounds(256, 2))]`.
fn parse_attr_args(args: TokenStream) -> Result<Option<LaunchBounds>, Error> {
    if args.is_empty() {
        return Ok(None);
    }
    let mut bounds = None;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("launch_bounds") {
            let content;
            syn::parenthesized!(content in meta.input);
            let nums = syn::punctuated::Punctuated::<syn::LitInt, syn::Token![,]>::parse_terminated(&content)?;
            let vals: Vec<u32> = nums.iter().map(|n| n.base10_parse::<u32>()).collect::<Result<_, _>>()?;
            match vals.as_slice() {
                [max] if (1..=1024).contains(max) => bounds = Some(LaunchBounds { max_threads: *max, min_blocks: 0 }),
                [max, min] if (1..=1024).contains(max) => bounds = Some(LaunchBounds { max_threads: *max, min_blocks: *min }),
                _ => {
                    return Err(Error::new(
                        nums.span(),
                        "`launch_bounds(..)` takes the maximum threads per block (1..=1024) and optionally the minimum blocks per SM; hint: `#[kernel(launch_bounds(256))]` or `#[kernel(launch_bounds(256, 2))]`",
                    ))
                }
            }
            Ok(())
        } else {
            Err(meta.error("unknown `#[kernel]` argument; hint: the only argument is `launch_bounds(max_threads[, min_blocks])`"))
        }
    });
    syn::parse::Parser::parse2(parser, args)?;
    Ok(bounds)
}
