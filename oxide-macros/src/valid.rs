//! Checks on a parsed `#[kernel]`: every error is spanned on the user's tokens and all of them
//! are reported together.

use crate::ast::{ArgKind, Kernel};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Error, FnArg, ReturnType, Type};

pub fn check(k: &Kernel<'_>) -> Result<(), Error> {
    let mut errors: Vec<Error> = Vec::new();
    let mut err = |span: proc_macro2::Span, msg: String| errors.push(Error::new(span, msg));
    let sig = &k.item.sig;

    if let Some(a) = &sig.asyncness {
        err(a.span(), "a kernel cannot be `async`; hint: remove `async`, a kernel runs to completion on every thread".into());
    }
    if let Some(c) = &sig.constness {
        err(c.span(), "a kernel cannot be `const fn`; hint: remove `const`".into());
    }
    if let Some(abi) = &sig.abi {
        err(abi.span(), "a kernel must not name an ABI; hint: remove the `extern`, `#[kernel]` generates the `ptx-kernel` entry".into());
    }
    if let Some(v) = &sig.variadic {
        err(v.span(), "a kernel cannot be variadic; hint: pass a slice instead".into());
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        if !matches!(&**ty, Type::Tuple(t) if t.elems.is_empty()) {
            err(ty.span(), format!(
                "a kernel returns nothing, found `-> {}`; hint: write results into a `DisjointSlice<T>` argument",
                ty.to_token_stream()
            ));
        }
    }
    for g in &sig.generics.params {
        match g {
            syn::GenericParam::Lifetime(l) => err(l.span(), format!(
                "lifetime parameter `{}` on a kernel is not supported; hint: remove it, kernel arguments borrow only for the launch",
                l.lifetime
            )),
            _ => err(g.span(), format!(
                "generic parameter `{}` on a kernel is not supported; hint: write one kernel per element type",
                g.to_token_stream()
            )),
        }
    }
    if let Some(wc) = &sig.generics.where_clause {
        err(wc.span(), "a `where` clause on a kernel is not supported; hint: remove it".into());
    }
    for input in &sig.inputs {
        if let FnArg::Receiver(r) = input {
            err(r.span(), "a kernel cannot take `self`; hint: make it a free function in the kernels module".into());
        }
    }
    for arg in &k.args {
        if ["stream", "grid", "block", "config"].contains(&arg.ident.to_string().as_str()) {
            err(arg.ident.span(), format!(
                "argument name `{}` is taken by the generated launcher's own parameter; hint: rename the argument",
                arg.ident
            ));
        }
        check_arg(arg.ty, &arg.kind, &mut err);
    }

    let mut errors = errors.into_iter();
    match errors.next() {
        None => Ok(()),
        Some(mut first) => {
            first.extend(errors);
            Err(first)
        }
    }
}

fn check_arg(ty: &Type, kind: &ArgKind<'_>, err: &mut impl FnMut(proc_macro2::Span, String)) {
    let shown = ty.to_token_stream().to_string();
    match (kind, ty) {
        (ArgKind::Invalid, Type::Reference(r)) if r.mutability.is_some() => err(ty.span(), format!(
            "`{shown}` would be shared mutably by every GPU thread (aliasing); hint: take `DisjointSlice<T>` for per-thread output"
        )),
        (ArgKind::Invalid, Type::Reference(_)) => err(ty.span(), format!(
            "kernel arguments cannot borrow `{shown}`; hint: pass `&[T]` for device data or the value itself"
        )),
        (ArgKind::Invalid, _) => err(ty.span(), format!("`{shown}` is not a valid output slice; hint: write `DisjointSlice<T>`")),
        (ArgKind::SliceIn { elem }, Type::Reference(r)) => {
            if let Some(l) = &r.lifetime {
                err(l.span(), format!(
                    "lifetime `{l}` cannot be honoured on the device: the slice lives only for the launch; hint: write `&[T]`"
                ));
            }
            check_value_type(elem, err);
        }
        (ArgKind::SliceOut { elem }, _) => check_value_type(elem, err),
        (ArgKind::Value, _) => check_value_type(ty, err),
        _ => {}
    }
}

/// Types that cannot cross to the device by value: owning host containers, trait objects.
fn check_value_type(ty: &Type, err: &mut impl FnMut(proc_macro2::Span, String)) {
    let shown = ty.to_token_stream().to_string();
    match ty {
        Type::ImplTrait(_) => err(ty.span(), format!(
            "`{shown}` cannot be a kernel argument; hint: use a concrete type, kernels are compiled ahead of time"
        )),
        Type::TraitObject(_) => err(ty.span(), format!("trait object `{shown}` cannot cross to the device; hint: use a concrete type")),
        Type::Ptr(_) => err(ty.span(), format!(
            "raw pointer `{shown}` is not a kernel argument; hint: pass `&[T]` or `DisjointSlice<T>`"
        )),
        Type::Reference(_) => err(ty.span(), format!("kernel data cannot hold the reference `{shown}`; hint: pass `&[T]`")),
        Type::Path(p) => {
            if let Some(last) = p.path.segments.last() {
                let name = last.ident.to_string();
                if ["Vec", "String", "Box", "Rc", "Arc", "HashMap", "BTreeMap", "VecDeque"].contains(&name.as_str()) {
                    err(ty.span(), format!(
                        "`{shown}` owns host memory and cannot be a kernel argument; hint: copy it to the GPU and pass `&[T]`"
                    ));
                }
            }
        }
        _ => {}
    }
}
