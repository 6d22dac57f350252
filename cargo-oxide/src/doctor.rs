//! `cargo oxide doctor`: every component the device pipeline and the runtime use, where it was
//! found, what is missing and the one command that fixes it.

use crate::Result;
use std::path::PathBuf;
use std::process::ExitCode;

pub fn run() -> Result<ExitCode> {
    let mut b = oxide_build::Build::new();
    b.cargo_metadata(false);
    // Tests point discovery's distribution-rustc directories at a sandbox.
    let bins: Option<Vec<PathBuf>> = std::env::var_os("OXIDE_SYSTEM_BINS").map(|v| std::env::split_paths(&v).collect());
    if let Some(bins) = &bins {
        b.system_bins(&bins.iter().map(PathBuf::as_path).collect::<Vec<_>>());
    }
    let report = b.doctor();
    println!("oxide doctor: device toolchain (kernels → PTX) and runtime (PTX → GPU)");
    for c in &report.checks {
        print_check(c.component, c.found.as_deref(), &c.detail, c.fix.as_deref(), c.required);
    }
    let libcuda = report.check("libcuda").and_then(|c| c.found.clone());
    let (gpu, detail, fix) = gpu(libcuda.is_some());
    print_check("GPU + driver", gpu.as_deref(), &detail, fix.as_deref(), false);
    println!();
    if report.ok() {
        let tc = report.toolchain.as_ref().map(|t| format!(" ({}, {})", t.rustc_version, t.origin)).unwrap_or_default();
        println!("kernels can be built here{tc}.");
        Ok(ExitCode::SUCCESS)
    } else {
        println!(
            "kernels cannot be built here: install what is MISSING above, or use prebuilt kernels \
             (`.prebuilt(\"kernels-prebuilt\")` in build.rs, made by `cargo oxide build` elsewhere)."
        );
        Ok(ExitCode::FAILURE)
    }
}

fn print_check(component: &str, found: Option<&str>, detail: &str, fix: Option<&str>, required: bool) {
    let status = match (found, required) {
        (Some(_), _) => "ok",
        (None, true) => "MISSING",
        (None, false) => "missing",
    };
    println!("  {status:<8} {component:<13} {}", found.unwrap_or(detail));
    if found.is_some() && !detail.is_empty() {
        println!("  {:<8} {:<13} {detail}", "", "");
    }
    if let (None, Some(fix)) = (found, fix) {
        println!("  {:<8} {:<13} fix: {fix}", "", "");
    }
}

/// The driver version and first GPU, through the same loader the runtime uses.
fn gpu(libcuda_found: bool) -> (Option<String>, String, Option<String>) {
    if !libcuda_found {
        return (None, "not checked: no libcuda".into(), None);
    }
    // SAFETY: only tries to dlopen the driver library; no symbols are called.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return (None, "libcuda was found but does not load".into(), Some("reinstall the NVIDIA driver".into()));
    }
    let mut version: std::ffi::c_int = 0;
    // SAFETY: the library is present (checked above); the out-pointer is a valid c_int.
    let rc = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    let driver = if rc == cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        format!("driver API CUDA {}.{}", version / 1000, (version % 1000) / 10)
    } else {
        format!("driver version unknown ({rc:?})")
    };
    match oxide_rt::host::Gpu::new(0) {
        Ok(g) => (Some(format!("{} — {driver}", g.describe())), String::new(), None),
        Err(e) => (
            None,
            format!("{driver}; no usable GPU: {e}"),
            Some("check `nvidia-smi`; kernels run on the CPU executor meanwhile".into()),
        ),
    }
}
