#!/usr/bin/env bash
# The multi-GPU checks on a machine with 2 or more GPUs (device kind nvidia-h200-x2), over the
# binaries of ci/gpu-build.sh: launches from one thread per GPU and a buffer of another GPU
# (test-gpu_multi), the all-reduced job on every GPU (test-gpus), and the scaling of
# examples/multi_gpu from 1 GPU to all of them. Usage: ci/gpu-multi.sh [values] [reps]
set -uo pipefail
BIN=.device-bin
export OXIDE_REQUIRE_GPU=1 NCCL_NVLS_ENABLE=0
if ! ldconfig -p 2>/dev/null | grep -q 'libnccl.so '; then
  OXIDE_NCCL_LIB="$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)"
  [ -n "$OXIDE_NCCL_LIB" ] && export OXIDE_NCCL_LIB
fi
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
[ "$gpus" -ge 2 ] || echo "warning: $gpus GPU(s): the multi-GPU paths need 2 or more"
status=0
step() { echo; echo "=== $*"; "$@" || { echo "=== FAILED: $*"; status=1; }; }
step "$BIN/test-gpu_multi" --test-threads=1
step "$BIN/test-gpus" --test-threads=1
step "$BIN/test-gpu_graph" --test-threads=1
# Scaling: the same job on GPU 0 alone, then on every GPU (each run prints both).
for n in ${1:-268435456 1073741824}; do step env OXIDE_BACKEND=cuda "$BIN/multi_gpu" "$n" "${2:-50}"; done
echo; echo "gpu-multi status: $status"
exit $status
