"""Time and memory of attention on the CPU: plain matrix form, chunked, streaming, truncated, PyTorch.

Run from the repository's top folder::

    python -m benchmarks.run                 # the full run (about 2-3 minutes on 2 cores)
    python -m benchmarks.run --quick         # a smoke test with small N (not saved by default)

What it measures (float32, h = 8 heads, d_k = d_v = 64, scale = 1/8, 2 threads):

* the machine's float32 matrix-multiply throughput (numpy's BLAS, a 2048^3 product, best of
  9 calls): the "peak" every GFLOP/s figure is compared with;
* that every method agrees with the plain matrix form (float64 reference);
* the goal setting, N = 4096: chunked_attention, streaming_attention and PyTorch's
  ``scaled_dot_product_attention`` side by side, interleaved round by round, median of
  several runs after a warm-up; and a sweep over the chunked block size;
* the extra memory of chunked and streaming attention at N = 16384 (tracemalloc), next to
  the size of the attention matrices the plain form would hold;
* a sweep over N = 256 ... 8192 of all methods: median time, GFLOP/s, fraction of the
  matmul peak, peak memory.

OpenBLAS: on some machines OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are set in the environment
(older OpenBLAS builds misbehave on these processors without them). They force an older,
slower kernel on a current numpy, so this script re-starts itself once without both of them
(only for its own process: tests and CI keep them) and records which BLAS kernel then ran.
The correctness check above guards against a kernel that computes wrong results.
Pass ``--keep-openblas-env`` to measure with them.
"""

import os
import sys

_OPENBLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")

if __name__ == "__main__" and "--keep-openblas-env" not in sys.argv and any(v in os.environ for v in _OPENBLAS_VARS):
    _env = {k: v for k, v in os.environ.items() if k not in _OPENBLAS_VARS}
    _env["ATTN_BENCH_REMOVED_ENV"] = ",".join(f"{v}={os.environ[v]}" for v in _OPENBLAS_VARS if v in os.environ)
    os.execve(sys.executable, [sys.executable, "-m", "benchmarks.run", *sys.argv[1:]], _env)

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from attn.efficient import (  # noqa: E402
    attention_flops,
    attention_matrix_bytes,
    band_pairs,
    chunked_attention,
    matrix_attention,
    streaming_attention,
    truncated_attention,
)

try:
    import torch
except ImportError:  # torch is optional: the comparison is skipped
    torch = None
try:
    import threadpoolctl
except ImportError:
    threadpoolctl = None

RESULTS = Path(__file__).resolve().parent / "results"
THREADS = 2
HEADS, D_K, D_V = 8, 64, 64
SCALE = 1 / 8  # 1/sqrt(d_k)
WIDTH = 64  # truncated self-attention: keys within 64 positions (0.64 s of speech) on each side
GOAL_N = 4096
MEMORY_N = 16384


def median_time(f, runs):
    """Run f ``runs`` times; return the list of wall-clock seconds."""
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return times


def interleaved(fs, rounds):
    """Time several functions round by round (one call each per round), after one warm-up call each.

    Interleaving gives every function the same share of whatever else the machine is doing.
    """
    for f in fs.values():
        f()
    times = {name: [] for name in fs}
    for _ in range(rounds):
        for name, f in fs.items():
            times[name] += median_time(f, 1)
    return times


def traced_peak(f):
    """Peak bytes that numpy allocated during f() (tracemalloc sees numpy's data buffers)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    f()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak - base


def rss_peak(f):
    """Peak resident memory added during f(), from Linux's VmHWM after resetting it (or None)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        before = _status_kib("VmRSS")
        f()
        return (_status_kib("VmHWM") - before) * 1024
    except OSError:
        return None


def _status_kib(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise OSError(f"{field} not in /proc/self/status")


def inputs(N, seed=0):
    """Column-form Q, K, V (h, d, N) in float32, and the same data as PyTorch rows (h, N, d)."""
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((HEADS, d, N), dtype=np.float32) for d in (D_K, D_K, D_V))
    rows = None
    if torch is not None:
        rows = [torch.from_numpy(np.ascontiguousarray(x.swapaxes(1, 2))) for x in (Q, K, V)]
    return Q, K, V, rows


def methods(Q, K, V, rows, *, block=512):
    """The implementations under test, each a function of no arguments."""
    fs = {
        "naive": lambda: matrix_attention(Q, K, V, scale=SCALE),
        "chunked": lambda: chunked_attention(Q, K, V, scale=SCALE, block=block),
        "streaming": lambda: streaming_attention(Q, K, V, scale=SCALE),
        "truncated": lambda: truncated_attention(Q, K, V, width=WIDTH, scale=SCALE),
    }
    if rows is not None:
        fs["torch"] = lambda: torch.nn.functional.scaled_dot_product_attention(*rows, scale=SCALE)
    return fs


def matmul_peak(n=2048, runs=9):
    """GFLOP/s of an n x n float32 matrix product (numpy, and torch when installed).

    The yardstick is the best of ``runs`` calls: a peak is what the machine can do, and on a
    shared machine a single slow call says more about the neighbours than about the BLAS.
    The median is recorded too.
    """
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    c = np.empty_like(a)
    f = lambda: np.matmul(a, b, out=c)  # noqa: E731
    f()
    t = median_time(f, runs)
    out = {"n": n, "numpy_gflops": 2 * n**3 / min(t) / 1e9, "numpy_gflops_median": 2 * n**3 / np.median(t) / 1e9}
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        g = lambda: torch.mm(ta, tb)  # noqa: E731
        g()
        t = median_time(g, runs)
        out["torch_gflops"] = 2 * n**3 / min(t) / 1e9
    return out


def check_correctness(N=1024):
    """Largest difference of each method from the plain form computed in float64."""
    Q, K, V, rows = inputs(N, seed=2)
    ref = matrix_attention(Q.astype(np.float64), K.astype(np.float64), V.astype(np.float64), scale=SCALE)
    errors = {}
    for name, f in methods(Q, K, V, rows).items():
        O = f()
        if name == "torch":
            O = O.numpy().swapaxes(1, 2)
        if name == "truncated":
            from attn import band_mask

            ref_t = matrix_attention(*(x.astype(np.float64) for x in (Q, K, V)), scale=SCALE,
                                     mask=band_mask(N, WIDTH))
            errors[name] = float(np.abs(O - ref_t).max())
        else:
            errors[name] = float(np.abs(O - ref).max())
        if errors[name] > 1e-4:
            raise RuntimeError(f"{name} differs from the matrix form by {errors[name]}: refusing to time it")
    return errors


def goal(peak_gflops, rounds):
    """chunked vs streaming vs torch at N = 4096, interleaved; and chunked's block sweep."""
    Q, K, V, rows = inputs(GOAL_N)
    fs = {name: f for name, f in methods(Q, K, V, rows).items() if name in ("chunked", "streaming", "torch")}
    times = interleaved(fs, rounds)
    med = {name: float(np.median(t)) for name, t in times.items()}
    flops = attention_flops(GOAL_N, d_k=D_K, d_v=D_V, heads=HEADS)
    out = {
        "N": GOAL_N,
        "rounds": rounds,
        "times_s": times,
        "median_s": med,
        "gflops": {name: flops / t / 1e9 for name, t in med.items()},
        "fraction_of_matmul_peak": {name: flops / t / 1e9 / peak_gflops for name, t in med.items()},
    }
    if "torch" in med:
        out["ratio_to_torch"] = {name: med[name] / med["torch"] for name in ("chunked", "streaming")}
    blocks = {str(b): (lambda b=b: chunked_attention(Q, K, V, scale=SCALE, block=b)) for b in (128, 256, 512, 1024, 2048)}
    sweep = interleaved(blocks, max(3, rounds - 2))
    out["chunked_block_sweep_s"] = {b: float(np.median(t)) for b, t in sweep.items()}
    return out


def memory_at(N):
    """Extra memory of chunked and streaming attention at large N, against the N x N matrices."""
    Q, K, V, _ = inputs(N)
    output = HEADS * D_V * N * 4
    out = {
        "N": N,
        "attention_matrices_bytes": attention_matrix_bytes(N, heads=HEADS, dtype=np.float32),
        "one_attention_matrix_bytes": attention_matrix_bytes(N, dtype=np.float32),
        "output_bytes": output,
    }
    for name, f in (("chunked", lambda: chunked_attention(Q, K, V, scale=SCALE)),
                    ("streaming", lambda: streaming_attention(Q, K, V, scale=SCALE))):
        extra = traced_peak(f) - output
        out[f"{name}_extra_bytes"] = extra
        out[f"{name}_fraction_of_attention_matrices"] = extra / out["attention_matrices_bytes"]
        out[f"{name}_fraction_of_one_matrix"] = extra / out["one_attention_matrix_bytes"]
    return out


def sweep(sizes, peak_gflops):
    """Every method for every N: median time (interleaved), GFLOP/s, fraction of peak, peak memory."""
    rows_out = []
    for N in sizes:
        Q, K, V, rows = inputs(N)
        fs = methods(Q, K, V, rows)
        first = {}
        for name, f in fs.items():  # warm-up, also used to choose how many runs each method gets
            first[name] = median_time(f, 1)[0]
        # more runs for quick calls; at least 3, except the plain form at the largest N (seconds a call)
        runs = {name: (7 if t < 0.1 else 5 if t < 0.5 else 3) for name, t in first.items()}
        if N == max(sizes):
            runs["naive"] = 2
        times = {name: [] for name in fs}
        for r in range(max(runs.values())):
            for name, f in fs.items():
                if r < runs[name]:
                    times[name] += median_time(f, 1)
        for name, f in fs.items():
            t = float(np.median(times[name]))
            pairs = band_pairs(N, WIDTH) if name == "truncated" else N * N
            flops = 2 * HEADS * pairs * (D_K + D_V)
            if name == "torch":
                mem, how = rss_peak(f), "rss"
            else:
                mem, how = traced_peak(f), "tracemalloc"
            rows_out.append({
                "N": N, "method": name, "median_s": t, "runs_s": times[name],
                "gflops": flops / t / 1e9, "fraction_of_matmul_peak": flops / t / 1e9 / peak_gflops,
                "peak_bytes": mem, "memory_measured_by": how,
            })
        print(f"  N={N:5d}  " + "  ".join(f"{r['method']} {r['median_s']:.4f}s" for r in rows_out[-len(fs):]),
              flush=True)
    return rows_out


def blas_info():
    if threadpoolctl is None:
        return None
    return [{k: v for k, v in lib.items() if k != "filepath"} for lib in threadpoolctl.threadpool_info()]


def cpu_name():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only; a smoke test")
    parser.add_argument("--out", type=Path, help="results file (default: benchmarks/results/attention_cpu.json)")
    parser.add_argument("--keep-openblas-env", action="store_true",
                        help="measure with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE as set")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if torch is not None:
        torch.set_num_threads(THREADS)
    limiter = threadpoolctl.threadpool_limits(THREADS, user_api="blas") if threadpoolctl else None
    load_before = os.getloadavg()
    print(f"BLAS: {blas_info()}", flush=True)
    with torch.inference_mode() if torch is not None else _nothing():
        peak = matmul_peak()
        print(f"float32 matmul: {peak}", flush=True)
        errors = check_correctness(256 if args.quick else 1024)
        print(f"largest difference from the plain form: {errors}", flush=True)
        goal_result = goal(peak["numpy_gflops"], 3 if args.quick else 9) if not args.quick else None
        if goal_result:
            print(f"goal N={GOAL_N}: median {goal_result['median_s']}, ratio {goal_result.get('ratio_to_torch')}",
                  flush=True)
        memory = memory_at(2048 if args.quick else MEMORY_N)
        print(f"memory: {memory}", flush=True)
        sizes = [256, 512, 1024] if args.quick else [256, 512, 1024, 2048, 4096, 8192]
        results = sweep(sizes, peak["numpy_gflops"])
    if limiter is not None:
        limiter.restore_original_limits()
    report = {
        "setting": {"heads": HEADS, "d_k": D_K, "d_v": D_V, "dtype": "float32", "scale": SCALE,
                    "truncated_width": WIDTH, "threads": THREADS, "chunked_block": 512,
                    "streaming_block": 512, "streaming_key_block": 1024},
        "machine": {
            "cpu": cpu_name(), "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "torch": torch.__version__ if torch is not None else None,
            "blas": blas_info(), "removed_env": os.environ.get("ATTN_BENCH_REMOVED_ENV", ""),
            "load_average_before": load_before, "load_average_after": os.getloadavg(),
        },
        "matmul_peak": peak,
        "max_abs_difference_from_matrix_form": errors,
        "goal": goal_result,
        "memory": memory,
        "sweep": results,
        "wall_time_s": time.perf_counter() - start,
    }
    out = args.out or (None if args.quick else RESULTS / "attention_cpu.json")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out}")
    print(f"wall time {report['wall_time_s']:.0f} s")
    return report


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    main()
