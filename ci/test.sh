#!/usr/bin/env bash
# The whole test suite: installs the device toolchain if needed, then runs every test of the
# workspace. GPU tests skip with a reason when there is no GPU (OXIDE_REQUIRE_GPU=1 makes
# them fail instead); ptxas is required (OXIDE_REQUIRE_PTXAS=1), so PTX is always validated.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(bash ci/setup.sh --env)"
export OXIDE_REQUIRE_PTXAS=1
cargo test --workspace --locked "$@"
