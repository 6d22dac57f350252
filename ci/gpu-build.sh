#!/usr/bin/env bash
# Builds everything the GPU machine runs (it has no Rust toolchain) into .device-bin/:
# example and tool binaries (release) and the GPU test binaries, plus .device-bin.tgz of them.
# Then run ci/gpu-check.sh there.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(bash ci/setup.sh --env)"
BIN=.device-bin
rm -rf "$BIN" && mkdir -p "$BIN"
EXAMPLES="saxpy reduction sgemm bf16-gemm hopper-gemm histogram transpose softmax stencil scan multi_gpu interop"
pkgs=""; for e in $EXAMPLES prebuilt kargs oxide-bench-gpu cargo-oxide; do pkgs="$pkgs -p $e"; done
cargo build --release --locked $pkgs
for e in $EXAMPLES prebuilt kargs oxide-bench-gpu cargo-oxide; do cp "target/release/$e" "$BIN/"; done
# The crate `cargo oxide new` scaffolds (the README's "Your own crate"), built outside the
# workspace against this checkout; gpu-check.sh runs it on the GPU.
scaffold="$(mktemp -d)"
(cd "$scaffold" && "$OLDPWD/target/release/cargo-oxide" oxide new hello-gpu >/dev/null)
cp Cargo.lock "$scaffold/hello-gpu/"
(cd "$scaffold/hello-gpu" && CARGO_TARGET_DIR="$OLDPWD/target" cargo build --release --quiet)
cp target/release/hello-gpu "$BIN/scaffold-hello-gpu"
rm -rf "$scaffold"
# Test binaries: the last line cargo prints for each test target names its executable.
tests() { cargo test --locked "$@" --no-run --message-format=json 2>/dev/null \
  | grep -o '"executable":"[^"]*"' | cut -d'"' -f4; }
for t in $(tests -p oxide-e2e --test run) $(tests -p device-api --test gpu --test gpu_panic --test gpu_fault --test gpu_graph --test gpu_multi) \
         $(tests -p tensor-ops --test tensor_gpu) $(tests -p hopper-ops --test hopper_gpu) $(tests -p wgmma-ops --test wgmma_gpu) \
         $(tests -p bf16-gemm --test bf16_gemm_gpu | grep /deps/) $(tests --release -p hopper-gemm --test hopper_gemm_gpu | grep /deps/) \
         $(tests -p multi_gpu --test gpus | grep /deps/) $(tests -p scan --test graph_replay | grep /deps/) \
         $(tests -p interop --test interop_gpu) \
         $(tests --release -p differential --test differential) $(tests -p prebuilt --test image) \
         $(tests --release -p unseen --test unseen_gpu); do
  # Only test harnesses (in deps/): cargo also lists the crate's own binaries it built for them.
  case "$t" in */deps/*) ;; *) continue ;; esac
  name="$(basename "$t" | sed 's/-[0-9a-f]*$//')"
  cp "$t" "$BIN/test-$name"
done
# Release panics take another path (inlined, location only): the panic test once more.
for t in $(tests --release -p device-api --test gpu_panic); do cp "$t" "$BIN/test-gpu_panic-release"; done
# Stripped: the transfer to the GPU machine is limited (64 MiB), and .device-bin alone is
# larger than that (the debug test binaries embed debug PTX), so it also travels compressed:
# carry `.device-bin.tgz` and run `tar xzf .device-bin.tgz && bash ci/gpu-check.sh <out>` there.
strip "$BIN"/*
tar czf .device-bin.tgz "$BIN"
ls -la "$BIN" .device-bin.tgz
