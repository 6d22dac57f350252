//! `cargo oxide new <path>`: a crate with one kernel that builds and runs on the GPU, or on the
//! CPU executor where there is none. The files are `cargo-oxide/template/`, which the README's
//! "Your own crate" section shows verbatim (a test keeps the two equal).

use crate::Result;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The template's package name and dependency values, replaced when scaffolding.
const TEMPLATE_NAME: &str = "name = \"hello-gpu\"";
const TEMPLATE_RT: &str = "oxide-rt = { path = \"../oxide/oxide-rt\" }";
const TEMPLATE_BUILD: &str = "oxide-build = { path = \"../oxide/oxide-build\" }";

/// The template's files, relative to the new crate's directory.
pub const FILES: [(&str, &str); 4] = [
    ("Cargo.toml", include_str!("../template/Cargo.toml.in")),
    ("build.rs", include_str!("../template/build.rs")),
    ("src/kernels.rs", include_str!("../template/src/kernels.rs")),
    ("src/main.rs", include_str!("../template/src/main.rs")),
];

/// Where the new crate's oxide dependencies come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// An oxide checkout (the directory holding `oxide-rt/` and `oxide-build/`).
    Checkout(PathBuf),
    /// The registry, at this version.
    Version(String),
}

pub fn run(dest: &Path, oxide: Option<&Path>) -> Result<ExitCode> {
    let name = package_name(dest)?;
    let source = match oxide {
        Some(dir) => Source::Checkout(checkout(dir).ok_or_else(|| {
            format!("{} is not an oxide checkout (no oxide-rt/ and oxide-build/ in it); pass the directory you cloned oxide into", dir.display())
        })?),
        None => find_checkout().map_or_else(|| Source::Version(env!("CARGO_PKG_VERSION").into()), Source::Checkout),
    };
    if dest.exists() && dest.read_dir().map_or(true, |mut d| d.next().is_some()) {
        return Err(format!("{} already exists and is not empty; pick a new directory", dest.display()));
    }
    for (rel, text) in scaffold(&name, &source)? {
        let path = dest.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    println!("created `{name}` in {}", dest.display());
    match &source {
        Source::Checkout(dir) => println!("  oxide-rt and oxide-build by path from {}", dir.display()),
        Source::Version(v) => {
            println!("  oxide-rt and oxide-build {v} from the registry (--path <oxide checkout> to use a clone)")
        }
    }
    if let Some(ws) = enclosing_workspace(dest) {
        println!(
            "  note: {} is a workspace: add the new crate to its `members` (or `exclude`) before building",
            ws.display()
        );
    }
    println!("  run it: cd {} && cargo run   (the GPU when present, else the CPU executor)", dest.display());
    Ok(ExitCode::SUCCESS)
}

/// The files of a new crate named `name`: the template with its name and dependencies replaced.
pub fn scaffold(name: &str, source: &Source) -> Result<Vec<(&'static str, String)>> {
    let (rt, build) = match source {
        Source::Checkout(dir) => (
            format!("{{ path = {} }}", toml_str(&dir.join("oxide-rt"))),
            format!("{{ path = {} }}", toml_str(&dir.join("oxide-build"))),
        ),
        Source::Version(v) => (format!("\"{v}\""), format!("\"{v}\"")),
    };
    let mut files = Vec::new();
    for (rel, text) in FILES {
        let text = if rel == "Cargo.toml" {
            let text = replace_once(text, TEMPLATE_NAME, &format!("name = \"{name}\""))?;
            let text = replace_once(&text, TEMPLATE_RT, &format!("oxide-rt = {rt}"))?;
            replace_once(&text, TEMPLATE_BUILD, &format!("oxide-build = {build}"))?
        } else {
            text.to_string()
        };
        files.push((rel, text));
    }
    Ok(files)
}

fn replace_once(text: &str, from: &str, to: &str) -> Result<String> {
    if !text.contains(from) {
        return Err(format!("the crate template has no `{from}` line; this cargo-oxide is broken, please report it"));
    }
    Ok(text.replacen(from, to, 1))
}

/// The package name for a crate in `dest`: its last path component, which must be a valid
/// cargo package name.
fn package_name(dest: &Path) -> Result<String> {
    let name = dest.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let valid = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && name.starts_with(|c: char| c.is_ascii_alphabetic());
    if !valid {
        return Err(format!(
            "`{}` cannot name a crate: use letters, digits, `-` and `_`, starting with a letter (e.g. `cargo oxide new hello-gpu`)",
            dest.display()
        ));
    }
    Ok(name.to_string())
}

/// `dir` (made absolute) when it holds oxide-rt and oxide-build.
fn checkout(dir: &Path) -> Option<PathBuf> {
    let dir = dir.canonicalize().ok()?;
    let has = |krate: &str| dir.join(krate).join("Cargo.toml").is_file();
    (has("oxide-rt") && has("oxide-build")).then_some(dir)
}

/// The oxide checkout around the current directory, else the one this cargo-oxide was built from
/// (`cargo install --path cargo-oxide`) when it still exists.
fn find_checkout() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok();
    let around_cwd = cwd.as_deref().and_then(|d| d.ancestors().find_map(checkout));
    around_cwd.or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).parent().and_then(checkout))
}

/// The nearest directory above `dest` whose Cargo.toml declares a workspace.
fn enclosing_workspace(dest: &Path) -> Option<PathBuf> {
    let dest = std::path::absolute(dest).ok()?;
    dest.ancestors()
        .skip(1)
        .map(|d| d.join("Cargo.toml"))
        .find(|m| std::fs::read_to_string(m).is_ok_and(|t| t.lines().any(|l| l.trim() == "[workspace]")))
}

/// A TOML basic string holding `path`.
fn toml_str(path: &Path) -> String {
    format!("\"{}\"", path.to_string_lossy().replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cargo_toml(source: &Source) -> String {
        let files = scaffold("my-app", source).unwrap();
        files.into_iter().find(|(rel, _)| *rel == "Cargo.toml").unwrap().1
    }

    #[test]
    fn a_checkout_gives_path_dependencies_and_the_name_is_replaced() {
        let toml = cargo_toml(&Source::Checkout(PathBuf::from("/src/ox\"ide")));
        assert!(toml.contains("name = \"my-app\"\n"), "{toml}");
        assert!(toml.contains("oxide-rt = { path = \"/src/ox\\\"ide/oxide-rt\" }\n"), "{toml}");
        assert!(toml.contains("oxide-build = { path = \"/src/ox\\\"ide/oxide-build\" }\n"), "{toml}");
        assert!(!toml.contains("hello-gpu") && !toml.contains("../oxide"), "{toml}");
    }

    #[test]
    fn without_a_checkout_the_dependencies_are_versions() {
        let toml = cargo_toml(&Source::Version("0.1.0".into()));
        assert!(toml.contains("oxide-rt = \"0.1.0\"\n") && toml.contains("oxide-build = \"0.1.0\"\n"), "{toml}");
    }

    #[test]
    fn names_that_cargo_rejects_are_refused_with_an_example() {
        for bad in ["1app", "my app", "", "a.b"] {
            let err = package_name(Path::new(bad)).unwrap_err();
            assert!(err.contains("cargo oxide new hello-gpu"), "{bad}: {err}");
        }
        assert_eq!(package_name(Path::new("dir/hello_gpu-2")).unwrap(), "hello_gpu-2");
    }

    #[test]
    fn this_checkout_is_found() {
        let here = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        assert_eq!(checkout(here), Some(here.canonicalize().unwrap()));
        assert_eq!(checkout(&here.join("cargo-oxide")), None);
    }
}
