#!/usr/bin/env bash
# Installs oxide's device toolchain on a Debian bookworm machine (idempotent):
#  - rustc/cargo 1.96 with the library sources (Debian's rustc-web, rust-web-src) to build
#    `core` for nvptx64-nvidia-cuda, and LLVM 22's llc/opt/llvm-link (matching rustc's LLVM);
#  - ptxas and libdevice from the nvidia-cuda-nvcc wheel, in a venv (no GPU needed).
# Prints the environment to use: `eval "$(bash ci/setup.sh --env)"`.
set -euo pipefail

VENV="${OXIDE_VENV:-$HOME/.cache/oxide/venv}"

need_apt=0
[ -x /usr/bin/rustc ] && [ -x /usr/bin/cargo ] && [ -x /usr/bin/llc-22 ] && [ -x /usr/bin/opt-22 ] \
  && [ -f /usr/lib/rustlib/src/rust/library/core/Cargo.toml ] || need_apt=1


if [ "$need_apt" = 1 ]; then
  echo "oxide setup: installing rustc-web cargo-web rust-web-src llvm-22 (Debian)" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq rustc-web cargo-web rust-web-src llvm-22 >&2
fi

PTXAS="$(ls "$VENV"/lib/python3*/site-packages/nvidia/cu13/bin/ptxas 2>/dev/null | head -n1 || true)"
if [ -z "$PTXAS" ]; then
  echo "oxide setup: installing ptxas + libdevice (pip nvidia-cuda-nvcc) into $VENV" >&2
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check "nvidia-cuda-nvcc==13.0.88" >&2
  PTXAS="$(ls "$VENV"/lib/python3*/site-packages/nvidia/cu13/bin/ptxas | head -n1)"
fi

if [ "${1:-}" = "--env" ]; then
  echo "export OXIDE_PTXAS='$PTXAS'"
else
  echo "oxide setup: ok (ptxas: $PTXAS)" >&2
fi
