//! Every environment read of oxide-build goes through [`Env`], which tells cargo to rerun the
//! build script when the variable changes, and which tests can isolate from the real process
//! environment.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Mutex;

#[derive(Clone, Debug, Default)]
pub(crate) struct Env {
    /// Values that replace the process environment (`None` = unset).
    overrides: BTreeMap<String, Option<OsString>>,
    /// Ignore the process environment entirely (tests).
    isolated: bool,
    /// Print `cargo:rerun-if-env-changed` for each variable read.
    pub(crate) emit_rerun: bool,
    /// While buffering, the variables read (see [`Env::buffer_rerun`]).
    rerun: RerunBuffer,
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
        if self.emit_rerun && !self.rerun.push(key) {
            println!("cargo:rerun-if-env-changed={key}");
        }
        match self.overrides.get(key) {
            Some(v) => v.clone(),
            None if self.isolated => None,
            None => std::env::var_os(key),
        }
        .filter(|v| !v.is_empty())
    }

    /// Holds back the `cargo:rerun-if-env-changed` lines until [`Env::flush_rerun`]: cargo
    /// shows a failed build script's whole stdout, where dozens of them would bury the error,
    /// and it reruns a failed script anyway, so they only matter after a success.
    pub(crate) fn buffer_rerun(&self) {
        self.rerun.start();
    }

    /// Stops buffering; prints each variable read since [`Env::buffer_rerun`] once when
    /// `print`, else drops them.
    pub(crate) fn flush_rerun(&self, print: bool) {
        for key in self.rerun.take() {
            if print {
                println!("cargo:rerun-if-env-changed={key}");
            }
        }
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

/// The variables read while buffering, in first-read order, each once (`None`: not buffering).
#[derive(Debug, Default)]
struct RerunBuffer(Mutex<Option<Vec<String>>>);

impl RerunBuffer {
    fn start(&self) {
        *self.lock() = Some(Vec::new());
    }

    /// Records `key`; false when not buffering (the caller prints it at once).
    fn push(&self, key: &str) -> bool {
        match self.lock().as_mut() {
            Some(keys) => {
                if !keys.iter().any(|k| k == key) {
                    keys.push(key.to_string());
                }
                true
            }
            None => false,
        }
    }

    fn take(&self) -> Vec<String> {
        self.lock().take().unwrap_or_default()
    }

    /// The buffer stays usable even if a panic poisoned the lock: it holds plain strings.
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Vec<String>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Clone for RerunBuffer {
    fn clone(&self) -> Self {
        RerunBuffer(Mutex::new(self.lock().clone()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_while_buffering_are_kept_once_in_order_and_printed_at_once_otherwise() {
        let mut env = Env { emit_rerun: true, ..Env::default() };
        env.isolate();
        env.buffer_rerun();
        for key in ["B", "A", "B", "PATH", "A"] {
            env.var_os(key);
        }
        assert_eq!(env.rerun.take(), ["B", "A", "PATH"]);
        // Not buffering: the caller prints the line itself.
        assert!(!env.rerun.push("C"));
        env.buffer_rerun();
        env.var_os("D");
        env.flush_rerun(false);
        assert!(env.rerun.take().is_empty() && !env.rerun.push("E"), "flushing ends buffering");
    }
}
