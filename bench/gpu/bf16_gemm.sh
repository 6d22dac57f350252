#!/usr/bin/env bash
# Runs on the GPU machine: the tensor-core GEMM example (`bf16-gemm bench`: the plain product
# and the fused bias + GELU one) and the same through PyTorch (gemm_cublas.py: cuBLAS, and
# gelu(addmm(...))) at the same sizes, one after the other, then a table per kernel with the
# ratio. Usage: bench/gpu/bf16_gemm.sh <bf16-gemm binary> [size ...] (default 4096 8192)
set -euo pipefail
BIN="$1"; shift
HERE="$(cd "$(dirname "$0")" && pwd)"
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(4096 8192)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ours_all="$(OXIDE_BACKEND=cuda "$BIN" bench "${sizes[@]}")"
theirs_all="$(python3 "$HERE/gemm_cublas.py" --types bf16,bf16_bias_gelu "${sizes[@]}")"
echo "$ours_all"; echo "$theirs_all"
for pair in bf16_gemm:cublas_bf16 bf16_gemm_bias_gelu:cublas_bf16_bias_gelu; do
  ours="$(echo "$ours_all" | grep "^${pair%%:*},")"
  theirs="$(echo "$theirs_all" | grep "^${pair##*:},")"
  echo "${pair%%:*} against ${pair##*:}"
  echo "size,oxide_ms,oxide_tflops,torch_ms,torch_tflops,ratio"
  join -t, -1 2 -2 2 <(echo "$ours" | sort -t, -k2,2) <(echo "$theirs" | sort -t, -k2,2) \
    | awk -F, '{ printf "%s,%s,%s,%s,%s,%.3f\n", $1, $3, $4, $6, $7, $4 / $7 }' | sort -t, -n -k1,1
done
