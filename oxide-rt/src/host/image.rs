//! Which image of an embedded kernels module a GPU loads: the cubin ptxas built for exactly
//! this device's architecture when there is one (no JIT, no driver-version dependence), else
//! the PTX, which the driver JIT-compiles. The choice is recorded per context so tests and tools
//! can ask what ran ([`loaded_image`]); `OXIDE_LOG=1` prints it. `OXIDE_FORCE_PTX=1` skips
//! the cubins (to exercise or compare the JIT path on a GPU that has one).

use super::Error;
use crate::EmbeddedModule;
use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaModule};
use std::fmt;
use std::sync::{Arc, Mutex};

/// The image a kernels module was loaded from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImageKind {
    /// The ahead-of-time cubin for the device's architecture, e.g. `sm_90`.
    Cubin { arch: String },
    /// The PTX (generated for `ptx_target`), JIT-compiled by the driver for `device`.
    Ptx { ptx_target: String, device: String },
}

impl fmt::Display for ImageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImageKind::Cubin { arch } => write!(f, "loaded cubin {arch}"),
            ImageKind::Ptx { ptx_target, device } => write!(f, "JIT-compiled PTX ({ptx_target}) for {device}"),
        }
    }
}

/// `sm_XY` of the context's device.
pub(crate) fn device_arch(ctx: &CudaContext) -> Result<String, Error> {
    let get = |a| {
        ctx.attribute(a).map_err(|source| Error::Driver { what: format!("reading device attribute {a:?}"), source })
    };
    let major = get(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = get(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    Ok(format!("sm_{major}{minor}"))
}

/// The cubin built for exactly `arch` (`sm_90` also takes an `sm_90a` cubin, which runs only
/// on that architecture).
pub(crate) fn pick_cubin<'m>(
    cubins: &'m [(&'static str, &'static [u8])],
    arch: &str,
) -> Option<(&'static str, &'m [u8])> {
    let exact = cubins.iter().find(|(a, _)| *a == arch);
    let specific = || cubins.iter().find(|(a, _)| a.strip_suffix('a') == Some(arch));
    exact.or_else(specific).map(|(a, b)| (*a, *b))
}

/// The `.target` of a PTX module (`sm_80`), for messages.
pub(crate) fn ptx_target(ptx: &str) -> String {
    ptx.lines()
        .find_map(|l| l.trim().strip_prefix(".target "))
        .and_then(|t| t.split([',', ' ']).next())
        .unwrap_or("unknown target")
        .to_string()
}

pub(super) fn log_enabled() -> bool {
    std::env::var("OXIDE_LOG").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// What was loaded into which context (keyed by the context's address, like the module cache).
static LOADED: Mutex<Vec<(usize, ImageKind)>> = Mutex::new(Vec::new());

/// The image the most recent kernels module loaded into `ctx` came from, or `None` before any
/// kernel was launched in it.
pub fn loaded_image(ctx: &Arc<CudaContext>) -> Option<ImageKind> {
    loaded_images(ctx).pop()
}

/// Every kernels module loaded into `ctx` so far, in load order (one per crate with kernels).
pub fn loaded_images(ctx: &Arc<CudaContext>) -> Vec<ImageKind> {
    let key = Arc::as_ptr(ctx) as usize;
    let loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    loaded.iter().filter(|(k, _)| *k == key).map(|(_, i)| i.clone()).collect()
}

/// Loads `module` into `ctx`: the matching cubin, else the PTX. A cubin the driver rejects
/// (e.g. one built by a newer ptxas than the driver knows) falls back to the PTX too.
/// `ptx_error` turns a PTX load failure into the runtime's error (with the JIT log).
pub(crate) fn load(
    ctx: &Arc<CudaContext>,
    module: &'static EmbeddedModule,
    ptx_error: impl FnOnce(cudarc::driver::DriverError) -> Error,
) -> Result<Arc<CudaModule>, Error> {
    let arch = device_arch(ctx)?;
    let mut note = String::new();
    let force_ptx = std::env::var("OXIDE_FORCE_PTX").is_ok_and(|v| !v.is_empty() && v != "0");
    if force_ptx {
        note = " (OXIDE_FORCE_PTX=1)".into();
    } else if let Some((cubin_arch, bytes)) = pick_cubin(module.cubins, &arch) {
        match ctx.load_module(cudarc::nvrtc::Ptx::from_binary(bytes.to_vec())) {
            Ok(m) => {
                record(ctx, ImageKind::Cubin { arch: cubin_arch.to_string() });
                return Ok(m);
            }
            Err(e) => note = format!(" (the {cubin_arch} cubin was rejected: {e})"),
        }
    } else if !module.cubins.is_empty() {
        let have: Vec<&str> = module.cubins.iter().map(|(a, _)| *a).collect();
        note = format!(" (no cubin for {arch}; embedded: {})", have.join(", "));
    }
    let m = ctx.load_module(cudarc::nvrtc::Ptx::from_src(module.ptx)).map_err(ptx_error)?;
    let kind = ImageKind::Ptx { ptx_target: ptx_target(module.ptx), device: arch };
    if log_enabled() && !note.is_empty() {
        eprintln!("oxide: kernels module: {kind}{note}");
        record_quiet(ctx, kind);
    } else {
        record(ctx, kind);
    }
    Ok(m)
}

fn record(ctx: &Arc<CudaContext>, kind: ImageKind) {
    if log_enabled() {
        eprintln!("oxide: kernels module: {kind}");
    }
    record_quiet(ctx, kind);
}

fn record_quiet(ctx: &Arc<CudaContext>, kind: ImageKind) {
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    loaded.push((Arc::as_ptr(ctx) as usize, kind));
}

#[cfg(test)]
mod tests {
    use super::*;

    static SM80: [u8; 2] = [1, 2];
    static SM90A: [u8; 1] = [3];

    #[test]
    fn picks_the_exact_arch_then_the_arch_specific_variant() {
        let cubins: &[(&'static str, &'static [u8])] = &[("sm_80", &SM80), ("sm_90a", &SM90A)];
        assert_eq!(pick_cubin(cubins, "sm_80"), Some(("sm_80", &SM80[..])));
        assert_eq!(pick_cubin(cubins, "sm_90"), Some(("sm_90a", &SM90A[..])));
        assert_eq!(pick_cubin(cubins, "sm_86"), None, "an sm_86 GPU JIT-compiles the PTX");
        assert_eq!(pick_cubin(&[], "sm_90"), None);
    }

    #[test]
    fn reads_the_ptx_target_and_formats_the_log_line() {
        assert_eq!(ptx_target("//\n.version 8.0\n.target sm_80\n.address_size 64\n"), "sm_80");
        assert_eq!(ptx_target(".target sm_90a, debug\n"), "sm_90a");
        assert_eq!(ImageKind::Cubin { arch: "sm_90".into() }.to_string(), "loaded cubin sm_90");
        let jit = ImageKind::Ptx { ptx_target: "sm_80".into(), device: "sm_90".into() };
        assert_eq!(jit.to_string(), "JIT-compiled PTX (sm_80) for sm_90");
    }
}
