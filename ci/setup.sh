#!/usr/bin/env bash
# Installs oxide's device toolchain on a Debian bookworm machine (idempotent):
#  - rustc/cargo 1.96 with the library sources (Debian's rustc-web, rust-web-src) to build
#    `core` for nvptx64-nvidia-cuda, and LLVM 22's llc/opt/llvm-link (matching rustc's LLVM);
#  - clang-22 and libclang (the same LLVM): bindgen reads CUDA C++ sources through libclang;
#  - ptxas, nvcc and libdevice from the nvidia-cuda-nvcc wheel set, in a venv (no GPU needed).
#    Every wheel of the set is pinned to one release: an unpinned nvidia-nvvm (cicc) newer than
#    ptxas writes a PTX ISA that ptxas and the GPU machine's driver (CUDA 13.0) reject.
# Prints the environment to use: `eval "$(bash ci/setup.sh --env)"`.
set -euo pipefail

VENV="${OXIDE_VENV:-$HOME/.cache/oxide/venv}"
CUDA_WHEELS="nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-runtime==13.0.88"

need_apt=0
[ -x /usr/bin/rustc ] && [ -x /usr/bin/cargo ] && [ -x /usr/bin/llc-22 ] && [ -x /usr/bin/opt-22 ] \
  && [ -f /usr/lib/rustlib/src/rust/library/core/Cargo.toml ] && [ -x /usr/bin/clang-22 ] \
  && ls /usr/lib/llvm-22/lib/libclang-22.so* >/dev/null 2>&1 || need_apt=1


if [ "$need_apt" = 1 ]; then
  echo "oxide setup: installing rustc-web cargo-web rust-web-src llvm-22 clang-22 libclang1-22 (Debian)" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq rustc-web cargo-web rust-web-src llvm-22 clang-22 libclang1-22 >&2
fi

PTXAS="$(ls "$VENV"/lib/python3*/site-packages/nvidia/cu13/bin/ptxas 2>/dev/null | head -n1 || true)"
# Installed and pinned: every wheel of the set at its pinned version (`pip freeze` spells them name==version).
pinned=0
if [ -n "$PTXAS" ]; then
  frozen="$("$VENV/bin/pip" freeze --disable-pip-version-check 2>/dev/null || true)"
  pinned=1
  for w in $CUDA_WHEELS; do grep -qx "$w" <<<"$frozen" || pinned=0; done
fi
if [ "$pinned" = 0 ]; then
  echo "oxide setup: installing ptxas + nvcc + libdevice (pip $CUDA_WHEELS) into $VENV" >&2
  [ -x "$VENV/bin/pip" ] || python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check $CUDA_WHEELS >&2
  PTXAS="$(ls "$VENV"/lib/python3*/site-packages/nvidia/cu13/bin/ptxas | head -n1)"
fi

if [ "${1:-}" = "--env" ]; then
  echo "export OXIDE_PTXAS='$PTXAS'"
else
  echo "oxide setup: ok (ptxas: $PTXAS)" >&2
fi
