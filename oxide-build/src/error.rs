//! oxide-build's error: what failed, the command that failed (if any), and how to fix it.

use std::fmt;
use std::process::Command;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A required environment variable or setting is missing or malformed.
    Config,
    /// No device toolchain (rustc + cargo able to build `core` for nvptx64) was found.
    ToolchainNotFound,
    /// A device toolchain was found but it lacks the standard library sources.
    MissingRustSrc,
    /// A tool could not be started.
    ToolExec,
    /// rustc rejected the kernels module.
    KernelCompile,
    /// The LLVM IR stage found something it cannot lower.
    Ir,
    /// llc failed to produce PTX.
    Llc,
    /// ptxas rejected the PTX.
    Ptxas,
    /// libdevice is needed but was not found.
    MissingLibdevice,
    /// A kernel uses an operation the oldest architecture of the build does not have.
    Arch,
    /// Reading or writing a file failed.
    Io,
    /// nvcc rejected a CUDA C++ source.
    CudaCompile,
    /// A CUDA C++ kernel's signature or a shared header cannot be read or mapped to Rust.
    CudaBindings,
    /// A shared struct's layout differs between C, the host and nvptx64.
    Layout,
}

#[derive(Clone, Debug)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into() }
    }

    pub(crate) fn io(what: impl fmt::Display, err: std::io::Error) -> Error {
        Error::new(ErrorKind::Io, format!("{what}: {err}"))
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The full command line of `cmd`, as a user would paste it into a shell.
pub(crate) fn command_line(cmd: &Command) -> String {
    let mut parts: Vec<String> = cmd
        .get_envs()
        .filter_map(|(k, v)| {
            let k = k.to_string_lossy();
            // Only the variables that change what the tool does; PATH/HOME are noise.
            let shown = matches!(&*k, "RUSTC" | "RUSTC_BOOTSTRAP" | "CARGO_TARGET_DIR" | "CARGO_ENCODED_RUSTFLAGS");
            Some(format!("{k}={}", quote(&v.filter(|_| shown)?.to_string_lossy())))
        })
        .collect();
    parts.push(quote(&cmd.get_program().to_string_lossy()));
    parts.extend(cmd.get_args().map(|a| quote(&a.to_string_lossy())));
    parts.join(" ")
}

fn quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_=./:,+@%".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''").replace('\x1f', "\\x1f"))
    }
}
