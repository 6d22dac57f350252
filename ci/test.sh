#!/usr/bin/env bash
# The whole test suite: installs the device toolchain if needed, then runs every test of the
# workspace. GPU tests skip with a reason when there is no GPU (OXIDE_REQUIRE_GPU=1 makes
# them fail instead); ptxas is required (OXIDE_REQUIRE_PTXAS=1), so PTX is always validated.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(bash ci/setup.sh --env)"
export OXIDE_REQUIRE_PTXAS=1
# A fresh build gains nothing from incremental caches, and writing them takes time.
export CARGO_INCREMENTAL=0
# No debug info and no symbol tables in this run's builds, trybuild's and the scaffold tests'
# own workspaces included (they do not read Cargo.toml's profile): the test build is 1.28 GB
# instead of 1.52 GB with symbols (4.6 GB with debug info). Panics still name file and line.
export CARGO_PROFILE_DEV_DEBUG=false CARGO_PROFILE_DEV_STRIP=symbols
# Formatting as the repository's rustfmt.toml says, where the host toolchain has rustfmt.
if cargo fmt --version >/dev/null 2>&1; then
  cargo fmt --all --check
else
  echo "ci/test.sh: rustfmt is not installed here; format check skipped" >&2
fi
# Lints and docs build in a target folder of their own, removed before the tests build: the
# disk then holds one of the two builds at a time, not both (a CI machine may have ~1.5 GB free).
lint_dir=target/lint
# Lints as errors where the host toolchain has clippy (rustup's default profile does).
if cargo clippy --version >/dev/null 2>&1; then
  CARGO_TARGET_DIR=$lint_dir cargo clippy --workspace --all-targets --locked -- -D warnings
else
  echo "ci/test.sh: cargo clippy is not installed here; lint step skipped" >&2
fi
# The reference docs of the three library crates build without warnings (broken links, bad HTML).
CARGO_TARGET_DIR=$lint_dir RUSTDOCFLAGS="-D warnings" \
  cargo doc --no-deps --locked -p oxide-rt -p oxide-build -p oxide-macros
rm -rf "$lint_dir"
cargo test --workspace --locked "$@"
