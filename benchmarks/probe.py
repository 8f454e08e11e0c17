"""One-shot measurements, each in the fresh process that ``python -m benchmarks.run`` starts for it.

    python -m benchmarks.probe memory METHOD N        peak resident-memory growth of one call
    python -m benchmarks.probe yardsticks numpy|torch the machine's float32 matmul (and exp) rates
    python -m benchmarks.probe check N                every method against a float64 reference
    python -m benchmarks.probe ratio N                the default chunked call / torch's fused kernel, paired

Each prints one JSON object on its last line of output.
"""

import gc
import json
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.methods import EXACT, METHODS, SCALE, THREADS, TORCH_METHODS, WIDTH, build, inputs, limit_threads


def _status_kib(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise OSError(f"{field} not in /proc/self/status")


def memory(method, N):
    """Peak growth of resident memory (Linux VmHWM) during one call, after a small warm-up call.

    The warm-up (same method, N = 256) loads the libraries' code, thread pools and buffers, so
    the measured growth is what the call itself needs: its temporaries and its output. The
    same measure works for numpy and for PyTorch (tracemalloc cannot see torch's allocations).
    """
    threads = limit_threads(method)
    warm, _ = build(method, *inputs(256))
    warm()
    f, _ = build(method, *inputs(N))
    del warm
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # reset the high-water mark to the current size
    before = _status_kib("VmRSS")
    out = f()
    peak = _status_kib("VmHWM")
    del out
    return {"method": method, "N": N, "peak_rss_growth_bytes": (peak - before) * 1024, "threads": threads}


def _best(f, runs):
    f()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times), float(np.median(times))


def yardsticks(lib, n=2048, runs=9):
    """Throughput of an n x n x n float32 matrix product with 2 threads, best and median of ``runs``.

    For numpy also: the float32 exp rate of one thread (a 256 x 4096 block of values in [-20, 0],
    as the softmax sees them) and of two Python threads on two halves, and the rate of the thin
    products chunked attention makes, (256 x 64) x (64 x 4096), with one BLAS thread.
    """
    flops = 2 * n**3
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    if lib == "torch":
        import torch

        torch.set_num_threads(THREADS)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        best, med = _best(lambda: torch.mm(ta, tb), runs)
        return {"lib": "torch", "threads": torch.get_num_threads(), "n": n,
                "sgemm_gflops": flops / best / 1e9, "sgemm_gflops_median": flops / med / 1e9}
    import threadpoolctl

    out = {"lib": "numpy", "n": n}
    with threadpoolctl.threadpool_limits(THREADS, user_api="blas"):
        c = np.empty_like(a)
        best, med = _best(lambda: np.matmul(a, b, out=c), runs)
        out.update(threads=THREADS, sgemm_gflops=flops / best / 1e9, sgemm_gflops_median=flops / med / 1e9)
    x = rng.uniform(-20, 0, size=(256, 4096)).astype(np.float32)
    y = np.empty_like(x)
    best, med = _best(lambda: np.exp(x, out=y), 4 * runs)
    out.update(exp_per_thread_per_s=x.size / best, exp_per_thread_per_s_median=x.size / med)
    from concurrent.futures import ThreadPoolExecutor

    halves = [(x[:128], y[:128]), (x[128:], y[128:])]
    with ThreadPoolExecutor(2) as pool:
        best, med = _best(lambda: list(pool.map(lambda p: np.exp(*p), halves)), 4 * runs)
    out.update(exp_two_threads_per_s=x.size / best)
    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        q, k = rng.standard_normal((256, 64), dtype=np.float32), rng.standard_normal((64, 4096), dtype=np.float32)
        s = np.empty((256, 4096), dtype=np.float32)
        best, med = _best(lambda: np.matmul(q, k, out=s), 4 * runs)
        out.update(thin_sgemm_one_thread_gflops=2 * 256 * 64 * 4096 / best / 1e9)
    return out


def check(N):
    """Largest difference of each method's output from V softmax(scale K^T Q) computed in float64."""
    from attn import band_mask
    from attn.efficient import matrix_attention

    Q, K, V = inputs(N, seed=2)
    Q64, K64, V64 = (x.astype(np.float64) for x in (Q, K, V))
    ref = matrix_attention(Q64, K64, V64, scale=SCALE)
    ref_band = matrix_attention(Q64, K64, V64, scale=SCALE, mask=band_mask(N, WIDTH))
    errors = {}
    for method in METHODS:
        if method in TORCH_METHODS:
            try:
                import torch  # noqa: F401
            except ImportError:
                continue
        f, to_columns = build(method, Q, K, V)
        O = to_columns(f())
        errors[method] = float(np.abs(O - (ref_band if method == "truncated" else ref)).max())
    return {"N": N, "max_abs_difference": errors, "exact_methods": list(EXACT)}


def ratio(N, rounds=5, best_of=3):
    """attn.chunked_attention (threads=THREADS) against PyTorch's fused kernel, both in this one process.

    The only probe that holds two methods; run.py starts it with OMP_WAIT_POLICY=PASSIVE, so
    PyTorch's OpenMP threads sleep while chunked attention's threads run.

    Each round times the best of ``best_of`` calls of each, one after the other, and divides:
    a slow spell of the machine hits both of a round's times. Returns every round's ratio.
    """
    import torch

    torch.set_num_threads(THREADS)
    Q, K, V = inputs(N)
    ours, _ = build("chunked", Q, K, V)
    fused, _ = build("torch", Q, K, V)
    ours(), fused()  # warm-up
    rows = []
    for _ in range(rounds):
        t_torch, _ = _best(fused, best_of)
        t_ours, _ = _best(ours, best_of)
        rows.append({"chunked_s": t_ours, "torch_s": t_torch, "ratio": t_ours / t_torch})
    return {"N": N, "rounds": rows, "best_of": best_of, "torch_threads": torch.get_num_threads(),
            "chunked_threads": THREADS}


def main(argv):
    what = argv[0]
    if what == "memory":
        result = memory(argv[1], int(argv[2]))
    elif what == "yardsticks":
        result = yardsticks(argv[1])
    elif what == "check":
        result = check(int(argv[1]))
    elif what == "ratio":
        result = ratio(int(argv[1]))
    else:
        raise SystemExit(__doc__)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
