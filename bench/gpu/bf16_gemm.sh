#!/usr/bin/env bash
# Runs on the GPU machine: the tensor-core GEMM example (`bf16-gemm bench`) and cuBLAS BF16
# through PyTorch (gemm_cublas.py) at the same sizes, one after the other, then a table
# with the ratio. Usage: bench/gpu/bf16_gemm.sh <bf16-gemm binary> [size ...] (default 4096 8192)
set -euo pipefail
BIN="$1"; shift
HERE="$(cd "$(dirname "$0")" && pwd)"
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(4096 8192)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ours="$(OXIDE_BACKEND=cuda "$BIN" bench "${sizes[@]}" | grep '^bf16_gemm,')"
theirs="$(python3 "$HERE/gemm_cublas.py" --types bf16 "${sizes[@]}" | grep '^cublas_bf16,')"
echo "$ours"; echo "$theirs"
echo "size,oxide_ms,oxide_tflops,cublas_ms,cublas_tflops,ratio"
join -t, -1 2 -2 2 <(echo "$ours" | sort -t, -k2,2) <(echo "$theirs" | sort -t, -k2,2) \
  | awk -F, '{ printf "%s,%s,%s,%s,%s,%.3f\n", $1, $3, $4, $6, $7, $4 / $7 }' | sort -t, -n -k1,1
