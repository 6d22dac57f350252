import sys, cupy as cp, numpy as np, torch
torch.backends.cuda.matmul.allow_tf32 = False
mod = cp.RawModule(path=sys.argv[1])
names = ["k8_s_q", "k8_v_q", "k8_s_w", "k8_v_w", "k16_s_q", "k16_v_q", "k16_s_w", "k16_v_w", "k8_v_w_1", "k16_v_w_1", "k8_s_q_1"]
def timeit(f, reps=31):
    for _ in range(5): f()
    s, e = cp.cuda.Event(), cp.cuda.Event(); ts = []
    for _ in range(reps):
        s.record(); f(); e.record(); e.synchronize(); ts.append(cp.cuda.get_elapsed_time(s, e))
    return float(np.median(ts))
for n in [4096, 8192]:
    a = cp.random.rand(n, n, dtype=cp.float32) - 0.5
    b = cp.random.rand(n, n, dtype=cp.float32) - 0.5
    ref = a @ b
    ta, tb = torch.as_tensor(a, device="cuda"), torch.as_tensor(b, device="cuda")
    for rnd in range(2):
        cub = timeit(lambda: cp.matmul(a, b))
        tor = timeit(lambda: torch.matmul(ta, tb))
        print(f"n={n} round {rnd}: cupy cuBLAS {cub:.3f} ms ({2*n**3/cub/1e9:.1f} TFLOP/s), torch {tor:.3f} ms", flush=True)
        for nm in names:
            k = mod.get_function(nm); c = cp.zeros((n, n), cp.float32)
            f = lambda: k((n // 128, n // 128), (256,), (a, b, c, np.int32(n), np.int32(n), np.int32(n)))
            t = timeit(f)
            err = float(cp.abs(c - ref).max())
            print(f"  {nm:9s} {t:.3f} ms  {2*n**3/t/1e9:6.1f} TFLOP/s  of cuBLAS {cub/t:.3f}  maxerr {err:.2e}", flush=True)
