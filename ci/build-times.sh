#!/usr/bin/env bash
# Device-build times of the saxpy example on this machine: cold (fresh device target dir, so
# `core` is compiled too), rebuild after editing one kernel, and a no-op rebuild. Prints the
# device-build time (sum of oxide-build's stages, from OXIDE_TRACE) and cargo's wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(bash ci/setup.sh --env)"
ROOT="$PWD"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cp -r examples/saxpy "$WORK/saxpy"
cp Cargo.lock "$WORK/saxpy/"
cd "$WORK/saxpy"
# A standalone copy: same sources, path dependencies on this checkout.
sed -i -e "s|^version.workspace = true|version = \"0.1.0\"|" -e "s|^edition.workspace = true|edition = \"2021\"|" \
       -e "s|^license.workspace = true||" \
       -e "s|oxide-rt = { workspace = true }|oxide-rt = { path = \"$ROOT/oxide-rt\" }|" \
       -e "s|oxide-build = { workspace = true }|oxide-build = { path = \"$ROOT/oxide-build\" }|" \
       -e "s|example-common = { path = \"../common\" }|example-common = { path = \"$ROOT/examples/common\" }|" \
       -e "s|cudarc = { workspace = true }|$(grep '^cudarc = ' "$ROOT/Cargo.toml")|" Cargo.toml
printf '\n[workspace]\n' >> Cargo.toml
export CARGO_TARGET_DIR="$WORK/target"
cargo build --release -q   # host dependencies, not timed

device_time() { grep -o 'oxide-build: [a-zA-Z ()+-]*: [0-9.]*s' | awk -F': ' '{gsub("s","",$3); t+=$3} END {printf "%.2f", t+0}'; }
run() {
  local start end out
  start=$(date +%s.%N)
  out=$(cargo build --release 2>&1)
  end=$(date +%s.%N)
  # cargo replays a fresh build script's warnings; only a "Compiling" line means it ran.
  local dev="0.00"
  if echo "$out" | grep -q "Compiling saxpy"; then dev="$(echo "$out" | device_time)"; fi
  printf "%-28s device build %6ss   cargo build %6.2fs\n" "$1" "$dev" "$(awk "BEGIN {print $end - $start}")"
}

export OXIDE_TRACE=1
export OXIDE_TARGET_DIR="$WORK/oxide-device"
run "cold (incl. core)"
sed -i 's/\*yi = a \* x\[i.get()\] + \*yi;/*yi = a * x[i.get()] + *yi + 0.0;/' src/kernels.rs
run "edit one kernel"
run "no-op"
