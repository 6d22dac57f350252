"""cuBLAS BF16 GEMM through PyTorch, timed like `bf16-gemm bench`: C = A @ B for n x n x n
bf16 matrices (f32 accumulation, bf16 output), 3 warm-up runs, then the median of 20 runs
each timed with CUDA events. Prints `cublas_bf16,size,ms,tflops` per size.
Usage: python3 bench/gpu/bf16_gemm_cublas.py [size ...]   (default 4096 8192)"""
import sys

import torch


def main() -> None:
    sizes = [int(s) for s in sys.argv[1:]] or [4096, 8192]
    for n in sizes:
        a = torch.rand(n, n, device="cuda", dtype=torch.bfloat16) * 2 - 1
        b = torch.rand(n, n, device="cuda", dtype=torch.bfloat16) * 2 - 1
        for _ in range(3):
            torch.matmul(a, b)
        torch.cuda.synchronize()
        times = []
        for _ in range(20):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.matmul(a, b)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        times.sort()
        ms = times[len(times) // 2]
        print(f"cublas_bf16,{n},{ms:.4f},{2 * n**3 / (ms * 1e-3) / 1e12:.1f}", flush=True)


if __name__ == "__main__":
    main()
