#!/usr/bin/env bash
# The main job: builds the saxpy example (kernels compiled to PTX by build.rs) and runs it on
# the GPU when one is present, otherwise on the CPU executor. Extra arguments go to saxpy
# (element count). OXIDE_BACKEND=cpu|cuda forces a backend.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(bash ci/setup.sh --env)"
cargo run --release --locked -p saxpy -- "$@"
