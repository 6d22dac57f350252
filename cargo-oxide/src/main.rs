//! `cargo oxide`: create a crate with a kernel, prebuild a crate's kernels into a directory to
//! commit, trace the device pipeline, diagnose the device toolchain, inspect kernels and emit
//! their IR or PTX.
//!
//! Cargo runs `cargo-oxide oxide <args>` for `cargo oxide <args>`; running `cargo-oxide <args>`
//! directly works too.

mod build;
mod doctor;
mod inspect;
mod new;
mod target;

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "cargo oxide",
    bin_name = "cargo oxide",
    version,
    about = "Create, build, trace, inspect and diagnose oxide GPU kernels"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Which crate and kernels module to work on (defaults read from the crate's build.rs).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CrateArgs {
    /// Path to the crate's Cargo.toml (default: the one in the current directory or above).
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
    /// The kernels module, relative to the crate (default: from build.rs, else src/kernels.rs).
    #[arg(long, value_name = "FILE")]
    pub kernels: Option<PathBuf>,
    /// Target architecture, repeatable (default: the prebuilt manifest's, else build.rs's `.arch(..)`).
    #[arg(long = "arch", value_name = "sm_XY")]
    pub archs: Vec<String>,
    /// Print every pipeline stage with its commands, inputs, outputs and time.
    #[arg(long)]
    pub trace: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Prebuild the kernels (PTX, cubins, manifest with source hashes) into a directory to commit.
    Build {
        #[command(flatten)]
        krate: CrateArgs,
        /// Output directory (default: <crate>/kernels-prebuilt, or build.rs's `.prebuilt(..)`).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Show what device-toolchain discovery finds, what is missing, and how to fix it.
    Doctor,
    /// Create a crate with one kernel that runs on the GPU, or on the CPU executor without one.
    New {
        /// The directory to create; its name is the package name.
        path: PathBuf,
        /// The oxide checkout to depend on by path (default: the one around the current
        /// directory or that this cargo-oxide was built from, else the registry version).
        #[arg(long = "path", value_name = "OXIDE_CHECKOUT")]
        oxide: Option<PathBuf>,
    },
    /// Kernels, parameters, registers/spills/shared memory and PTX size.
    Inspect {
        /// A manifest (.json), a prebuilt directory, or a crate directory (default: the crate).
        path: Option<PathBuf>,
        #[command(flatten)]
        krate: CrateArgs,
        /// Build the kernels now instead of reading the prebuilt directory.
        #[arg(long)]
        build: bool,
    },
    /// Print the LLVM IR or PTX of a crate's kernels module.
    Emit {
        /// What to print.
        #[arg(value_enum)]
        what: Emit,
        #[command(flatten)]
        krate: CrateArgs,
        /// Write to this file instead of stdout.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// The LLVM IR after oxide's post-processing (what llc compiles).
    Ir,
    /// The PTX.
    Ptx,
}

fn main() -> ExitCode {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `cargo oxide build` runs `cargo-oxide oxide build`.
    if args.get(1).is_some_and(|a| a == "oxide") {
        args.remove(1);
    }
    let cli = Cli::parse_from(args);
    let result = match cli.command {
        Command::Build { krate, out } => build::prebuild(&krate, out.as_deref()),
        Command::Doctor => doctor::run(),
        Command::New { path, oxide } => new::run(&path, oxide.as_deref()),
        Command::Inspect { path, krate, build } => inspect::run(path.as_deref(), &krate, build),
        Command::Emit { what, krate, output } => build::emit(what, &krate, output.as_deref()),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Errors of the CLI: a message that names the cause and the fix.
pub type Result<T> = std::result::Result<T, String>;
