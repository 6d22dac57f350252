//! Finding libnccl. cudarc opens it by name at run time (`libnccl.so` and a few versioned
//! names), but NCCL's pip wheels (the ones PyTorch pins, `nvidia-nccl-cu12`/`-cu13`) ship only
//! `site-packages/nvidia/nccl/lib/libnccl.so.2`, and no name cudarc tries matches that. So with
//! `OXIDE_NCCL_LIB=/path/to/libnccl.so.2` this program links `libnccl.so` to it in a temporary
//! folder and runs itself again with that folder on `LD_LIBRARY_PATH` (the dynamic loader reads
//! `LD_LIBRARY_PATH` only when a process starts).

use std::path::PathBuf;

/// Set in the environment of the re-run, so it does not loop.
const RERUN: &str = "OXIDE_NCCL_RERUN";

/// Whether cudarc can open libnccl now (never runs the program again).
pub fn present() -> bool {
    // SAFETY: only tries to dlopen the library; no symbol is called.
    unsafe { cudarc::nccl::sys::is_culib_present() }
}

/// Whether cudarc can open libnccl. Without it but with `OXIDE_NCCL_LIB`, does not return: the
/// program runs again (or an `Err` says why it cannot).
pub fn available() -> Result<bool, String> {
    if present() {
        return Ok(true);
    }
    let Some(lib) = std::env::var_os("OXIDE_NCCL_LIB").map(PathBuf::from) else { return Ok(false) };
    if std::env::var_os(RERUN).is_some() {
        return Err(format!(
            "OXIDE_NCCL_LIB={} could not be loaded as libnccl (is it NCCL's libnccl.so.2, built for this machine?)",
            lib.display()
        ));
    }
    if !lib.is_file() {
        return Err(format!("OXIDE_NCCL_LIB={} is not a file; point it at libnccl.so.2", lib.display()));
    }
    rerun_with(&lib)
}

/// Runs this program again with a `libnccl.so` that links to `lib` on the loader's path.
fn rerun_with(lib: &std::path::Path) -> Result<bool, String> {
    use std::os::unix::process::CommandExt;
    let dir = std::env::temp_dir().join(format!("oxide-nccl-{}", std::process::id()));
    let link = dir.join("libnccl.so");
    let made = std::fs::create_dir_all(&dir).and_then(|_| {
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(lib, &link)
    });
    made.map_err(|e| format!("linking {} to {}: {e}", link.display(), lib.display()))?;
    let mut path = std::ffi::OsString::from(&dir);
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
        path.push(":");
        path.push(old);
    }
    let exe = std::env::current_exe().map_err(|e| format!("finding this program to run it again: {e}"))?;
    let e = std::process::Command::new(&exe)
        .args(std::env::args_os().skip(1))
        .env("LD_LIBRARY_PATH", path)
        .env(RERUN, "1")
        .exec();
    Err(format!("running {} again with libnccl on LD_LIBRARY_PATH: {e}", exe.display()))
}

/// What to do when NCCL is missing, for the error of a run over several GPUs.
pub const MISSING: &str = "NCCL was not found (cudarc looks for libnccl.so on the loader's path): install NCCL, \
     or point OXIDE_NCCL_LIB at a libnccl.so.2, e.g. the one in a Python environment's \
     site-packages/nvidia/nccl/lib/ (`python3 -c \"import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__ or nvidia.nccl.__path__[0]))\"`)";
