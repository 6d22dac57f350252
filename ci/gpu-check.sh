#!/usr/bin/env bash
# Runs on the GPU machine over the binaries of ci/gpu-build.sh: every GPU test (required to find
# a GPU), every example on the GPU, compute-sanitizer memcheck/racecheck on each example, the
# image-selection checks, and the benchmark; the golden set's agreement table lands in
# <out dir>/golden.md. Usage: ci/gpu-check.sh <out dir> [--no-bench]
set -uo pipefail
OUT="$1"; BIN=.device-bin
mkdir -p "$OUT"
export OXIDE_REQUIRE_GPU=1
# NVLink multicast stays off for NCCL (examples/multi_gpu): on shared machines it can take the
# host's GPUs out of service.
export NCCL_NVLS_ENABLE=0
# NCCL for examples/multi_gpu where the loader does not find libnccl.so: the pip wheel's.
if ! ldconfig -p 2>/dev/null | grep -q 'libnccl.so '; then
  OXIDE_NCCL_LIB="$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)"
  [ -n "$OXIDE_NCCL_LIB" ] && export OXIDE_NCCL_LIB
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
status=0
step() { echo; echo "=== $*"; "$@" || { echo "=== FAILED: $*"; status=1; }; }
# test-gpu's golden_agreement_table (tests/device-api) writes the golden set's GPU/CPU agreement
# table there (markdown, for BENCHMARKS.md).
export OXIDE_GOLDEN_TABLE="$OUT/golden.md"
for t in "$BIN"/test-*; do step "$t" --test-threads=1; done
step "$BIN/saxpy"
for e in reduction histogram transpose softmax stencil scan interop; do step env OXIDE_BACKEND=cuda "$BIN/$e"; done
step env OXIDE_LOG=1 OXIDE_BACKEND=cuda "$BIN/interop" 1000 517   # CUDA C++ + Rust, which image each loaded
step env OXIDE_BACKEND=cuda "$BIN/sgemm" 1531   # the full f64 check of 4096^3 takes minutes
step env OXIDE_BACKEND=cuda "$BIN/bf16-gemm"       # 4096^3 on the tensor cores, sampled f64 check
step env OXIDE_BACKEND=cuda "$BIN/hopper-gemm"     # 4096^3 bf16 with wgmma + TMA (sm_90a), sampled f64 check
step env OXIDE_BACKEND=cuda "$BIN/hopper-gemm" 4096 f16
step env OXIDE_BACKEND=cuda "$BIN/hopper-gemm" 4096 e4m3   # FP8 in, bf16 out
step env OXIDE_LOG=1 "$BIN/prebuilt"
step env OXIDE_LOG=1 OXIDE_FORCE_PTX=1 "$BIN/prebuilt"
step env OXIDE_BACKEND=cuda "$BIN/kargs"
step env OXIDE_BACKEND=cuda "$BIN/multi_gpu"   # every GPU of the machine (1 rank on one GPU)
step env OXIDE_BACKEND=cuda "$BIN/scaffold-hello-gpu"   # what `cargo oxide new` writes
# Informational: the GPU machine has no device toolchain, so doctor exits 1 by design there.
echo; echo "=== cargo-oxide doctor"; "$BIN/cargo-oxide" doctor || true
SAN="${SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}"
# Small sizes: the sanitizer slows kernels by orders of magnitude.
declare -A SMALL=([saxpy]=100003 [reduction]=100003 [sgemm]=200 [bf16-gemm]=200 [hopper-gemm]=200 [histogram]=100003 [transpose]=1000 [softmax]=300 [stencil]=300 [scan]=100003 [interop]=300)
for e in saxpy reduction sgemm bf16-gemm hopper-gemm histogram transpose softmax stencil scan interop; do
  for tool in memcheck racecheck; do
    echo; echo "=== compute-sanitizer --tool $tool $e ${SMALL[$e]}"
    OXIDE_BACKEND=cuda "$SAN" --tool "$tool" --error-exitcode 9 "$BIN/$e" ${SMALL[$e]} > "$OUT/san-$tool-$e.log" 2>&1
    rc=$?; tail -n 3 "$OUT/san-$tool-$e.log"; [ $rc = 0 ] || { echo "=== FAILED: sanitizer $tool $e (rc $rc)"; status=1; }
  done
done
# The FP8 GEMM (k a multiple of 16 for FP8's 16-byte TMA rows).
for tool in memcheck racecheck; do
  echo; echo "=== compute-sanitizer --tool $tool hopper-gemm 208 e4m3"
  OXIDE_BACKEND=cuda "$SAN" --tool "$tool" --error-exitcode 9 "$BIN/hopper-gemm" 208 e4m3 > "$OUT/san-$tool-hopper-gemm-e4m3.log" 2>&1
  rc=$?; tail -n 3 "$OUT/san-$tool-hopper-gemm-e4m3.log"; [ $rc = 0 ] || { echo "=== FAILED: sanitizer $tool hopper-gemm e4m3 (rc $rc)"; status=1; }
done
# Guarded loads read element 0 of an input ahead of its bounds check (empty inputs point at a
# pad): memcheck over the e2e kernels that exercise it, empty input included.
echo; echo "=== compute-sanitizer --tool memcheck test-run guarded_loads fixed_block"
"$SAN" --tool memcheck --error-exitcode 9 "$BIN/test-run" --test-threads=1 guarded_loads fixed_block > "$OUT/san-memcheck-guarded.log" 2>&1
rc=$?; tail -n 3 "$OUT/san-memcheck-guarded.log"; [ $rc = 0 ] || { echo "=== FAILED: sanitizer memcheck guarded loads (rc $rc)"; status=1; }
# Cluster kernels (blocks that return early included): no access to a block that has exited
# (memcheck), and the entry/exit barriers the launch adds are used as the hardware requires
# (synccheck).
for tool in memcheck synccheck; do
  echo; echo "=== compute-sanitizer --tool $tool test-hopper_gpu cluster"
  "$SAN" --tool "$tool" --error-exitcode 9 "$BIN/test-hopper_gpu" --test-threads=1 cluster > "$OUT/san-$tool-cluster.log" 2>&1
  rc=$?; tail -n 3 "$OUT/san-$tool-cluster.log"; [ $rc = 0 ] || { echo "=== FAILED: sanitizer $tool cluster (rc $rc)"; status=1; }
done
# Panicking kernels: the record's claim must be an atomic memcheck accepts on mapped host
# memory (a system-scope one is refused there, and the panic then went unreported).
for t in gpu_panic gpu_panic-release; do
  echo; echo "=== compute-sanitizer --tool memcheck test-$t"
  "$SAN" --tool memcheck --error-exitcode 9 "$BIN/test-$t" --test-threads=1 > "$OUT/san-memcheck-$t.log" 2>&1
  rc=$?; tail -n 3 "$OUT/san-memcheck-$t.log"; [ $rc = 0 ] || { echo "=== FAILED: sanitizer memcheck $t (rc $rc)"; status=1; }
done
if [ "${2:-}" != "--no-bench" ]; then
  step bash bench/gpu/run.sh "$BIN/oxide-bench-gpu" "$OUT"
  # The tensor-core GEMM against cuBLAS BF16 (PyTorch), 4096^3 and 8192^3, with the ratio.
  step bash -c "set -o pipefail; bash bench/gpu/bf16_gemm.sh '$BIN/bf16-gemm' | tee '$OUT/bf16-gemm-vs-cublas.csv'"
  # The Hopper wgmma GEMM (bf16, f16, e4m3) against cuBLAS (PyTorch), 4096^3 and 8192^3, with the ratio.
  step bash -c "set -o pipefail; bash bench/gpu/hopper_gemm.sh '$BIN/hopper-gemm' | tee '$OUT/hopper-gemm-vs-cublas.csv'"
fi
echo; echo "gpu-check status: $status"
exit $status
