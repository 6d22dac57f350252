//! Every environment read of oxide-build goes through [`Env`], which tells cargo to rerun the
//! build script when the variable changes, and which tests can isolate from the real process
//! environment.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Clone, Debug, Default)]
pub(crate) struct Env {
    /// Values that replace the process environment (`None` = unset).
    overrides: BTreeMap<String, Option<OsString>>,
    /// Ignore the process environment entirely (tests).
    isolated: bool,
    /// Print `cargo:rerun-if-env-changed` for each variable read.
    pub(crate) emit_rerun: bool,
    /// Where distribution toolchains live (tests point this at shims).
    pub(crate) system_bins: Option<Vec<PathBuf>>,
}

impl Env {
    pub(crate) fn set(&mut self, key: &str, value: Option<OsString>) {
        self.overrides.insert(key.to_string(), value);
    }

    pub(crate) fn isolate(&mut self) {
        self.isolated = true;
    }

    pub(crate) fn var_os(&self, key: &str) -> Option<OsString> {
        if self.emit_rerun {
            println!("cargo:rerun-if-env-changed={key}");
        }
        match self.overrides.get(key) {
            Some(v) => v.clone(),
            None if self.isolated => None,
            None => std::env::var_os(key),
        }
        .filter(|v| !v.is_empty())
    }

    pub(crate) fn var(&self, key: &str) -> Option<String> {
        self.var_os(key).and_then(|v| v.into_string().ok())
    }

    pub(crate) fn path(&self, key: &str) -> Option<PathBuf> {
        self.var_os(key).map(PathBuf::from)
    }

    pub(crate) fn system_bins(&self) -> Vec<PathBuf> {
        self.system_bins.clone().unwrap_or_else(|| vec!["/usr/bin".into(), "/usr/local/bin".into()])
    }

    /// The directories of `PATH`, in order.
    pub(crate) fn path_dirs(&self) -> Vec<PathBuf> {
        self.var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default()
    }

    /// Finds an executable named `name` on `PATH`.
    pub(crate) fn which(&self, name: &str) -> Option<PathBuf> {
        self.path_dirs().into_iter().map(|d| d.join(name)).find(|p| is_executable(p))
    }
}

pub(crate) fn is_executable(p: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}
