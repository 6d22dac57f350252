#!/usr/bin/env bash
# Runs on the GPU machine: the Hopper wgmma GEMM example (`hopper-gemm bench`, bf16, f16, e4m3) and
# cuBLAS through PyTorch (gemm_cublas.py) at the same sizes, one after the other, then a
# table with the ratio. Usage: bench/gpu/hopper_gemm.sh <hopper-gemm binary> [size ...]
# (default 4096 8192)
set -euo pipefail
BIN="$1"; shift
HERE="$(cd "$(dirname "$0")" && pwd)"
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(4096 8192)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ours="$(OXIDE_BACKEND=cuda "$BIN" bench "${sizes[@]}" | grep '^hopper_gemm_')"
theirs="$(python3 "$HERE/gemm_cublas.py" --types bf16,f16,e4m3,e4m3_promoted "${sizes[@]}" | grep '^cublas_')"
echo "$ours"; echo "$theirs"
echo "type,size,oxide_ms,oxide_tflops,cublas_ms,cublas_tflops,ratio"
# Key: type and size (hopper_gemm_bf16,4096 <-> cublas_bf16,4096).
key() { sed -E 's/^(hopper_gemm|cublas)_([a-z0-9]+),([0-9]+),/\2:\3,/' | sort -t, -k1,1; }
join -t, -1 1 -2 1 <(echo "$ours" | key) <(echo "$theirs" | key) \
  | awk -F, '{ split($1, k, ":"); printf "%s,%s,%s,%s,%s,%s,%.3f\n", k[1], k[2], $2, $3, $4, $5, $3 / $5 }' \
  | sort -t, -k1,1 -k2,2n
