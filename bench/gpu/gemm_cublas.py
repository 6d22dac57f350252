"""cuBLAS BF16 and FP16 GEMM through PyTorch, timed like the GEMM examples' `bench` modes:
C = A @ B for n x n x n matrices (f32 accumulation, 16-bit output), 3 warm-up runs, then the
median of 20 runs each timed with CUDA events. Prints `cublas_<type>,size,ms,tflops` per size
and type. Type `bf16_bias_gelu` is what a PyTorch user writes for the fused example,
`gelu(addmm(bias, A, B))` (exact GELU; cuBLASLt adds the bias, a second kernel applies GELU).
Type `e4m3` is FP8: `torch._scaled_mm` of E4M3 A (row-major) and B (column-major, the layout
cuBLASLt's FP8 GEMM takes) with unit scales, bf16 output and `use_fast_accum=True`: the tensor
cores' own accumulation, as oxide's FP8 kernel does; `e4m3_promoted` is PyTorch's default, which
has cuBLASLt add partial sums into f32 registers every few wgmmas (more precise, slower).
Used by bf16_gemm.sh (`--types bf16,bf16_bias_gelu`) and hopper_gemm.sh
(`--types bf16,f16,e4m3,e4m3_promoted`).
Usage: python3 bench/gpu/gemm_cublas.py [--types bf16,f16,bf16_bias_gelu,e4m3,e4m3_promoted] [size ...]
(default 4096 8192)"""
import sys

import torch


def product(a, b, bias):
    return torch.matmul(a, b)


def bias_gelu(a, b, bias):
    return torch.nn.functional.gelu(torch.addmm(bias, a, b))


def scaled_fp8(a, b, bias):
    return torch._scaled_mm(a, b, scale_a=bias, scale_b=bias, out_dtype=torch.bfloat16, use_fast_accum=True)


def scaled_fp8_promoted(a, b, bias):
    return torch._scaled_mm(a, b, scale_a=bias, scale_b=bias, out_dtype=torch.bfloat16)


def time_one(n: int, dtype: torch.dtype, op) -> float:
    if dtype == torch.float8_e4m3fn:
        a = (torch.rand(n, n, device="cuda") * 2 - 1).to(dtype)
        b = (torch.rand(n, n, device="cuda") * 2 - 1).to(dtype).t()  # column-major
        bias = torch.ones((), device="cuda", dtype=torch.float32)  # the unit scale
    else:
        a = torch.rand(n, n, device="cuda", dtype=dtype) * 2 - 1
        b = torch.rand(n, n, device="cuda", dtype=dtype) * 2 - 1
        bias = torch.rand(n, device="cuda", dtype=dtype) * 2 - 1
    for _ in range(3):
        op(a, b, bias)
    torch.cuda.synchronize()
    times = []
    for _ in range(20):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        op(a, b, bias)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


TYPES = {
    "bf16": (torch.bfloat16, product),
    "f16": (torch.float16, product),
    "bf16_bias_gelu": (torch.bfloat16, bias_gelu),
    "e4m3": (torch.float8_e4m3fn, scaled_fp8),
    "e4m3_promoted": (torch.float8_e4m3fn, scaled_fp8_promoted),
}


def main() -> None:
    args = sys.argv[1:]
    names = ["bf16", "f16"]
    if args[:1] == ["--types"]:
        names, args = args[1].split(","), args[2:]
    sizes = [int(s) for s in args] or [4096, 8192]
    for n in sizes:
        for name in names:
            dtype, op = TYPES[name]
            ms = time_one(n, dtype, op)
            print(f"cublas_{name},{n},{ms:.4f},{2 * n**3 / (ms * 1e-3) / 1e12:.1f}", flush=True)


if __name__ == "__main__":
    main()
