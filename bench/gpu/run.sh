#!/usr/bin/env bash
# Runs on the GPU machine (no Rust there): compiles the CUDA C++ twins with that machine's nvcc,
# then runs the prebuilt bench binary. Usage: bench/gpu/run.sh <oxide-bench-gpu binary> <out dir>
set -euo pipefail
BIN="$1"; OUT="$2"
HERE="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$OUT/twins/suite"
NVCC="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
"$NVCC" --version | tail -n 2
start=$(date +%s.%N)
# A twin that does not compile is reported; its cases then fail by name and the rest still run.
for cu in "$HERE"/cuda/*.cu "$HERE"/cuda/suite/*.cu; do
  name="${cu#"$HERE"/cuda/}"; name="${name%.cu}"
  t0=$(date +%s.%N)
  "$NVCC" -O3 -arch=sm_90 -ptx "$cu" -o "$OUT/twins/$name.ptx" || echo "nvcc $name.cu FAILED"
  echo "nvcc $name.cu: $(awk "BEGIN {printf \"%.2f\", $(date +%s.%N) - $t0}") s"
done
echo "nvcc, all twins: $(awk "BEGIN {printf \"%.2f\", $(date +%s.%N) - $start}") s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64"
"$BIN" --twins "$OUT/twins" --csv "$OUT/bench.csv" "${@:3}"
