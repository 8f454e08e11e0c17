"""Time and memory of attention on the CPU, against the machine's limit and PyTorch's fused kernel.

Run from the repository's top folder (``make bench`` installs the ``bench`` extra first)::

    python -m benchmarks.run            # the full run, writes benchmarks/results/attention_cpu.json
    python -m benchmarks.run --quick    # a smoke test with small N (written only with --out)

Setting: float32, h = 8 heads, d_k = d_v = 64, scale = 1/8, two threads for every method.

How it measures (every number comes from a fresh process that holds only one method, except
the paired ratio below, which holds two):

* yardsticks: numpy's float32 matrix product (2048^3, two BLAS threads, best of 9), PyTorch's
  (same, two threads), numpy's float32 exp rate on one thread (values in [-20, 0]);
* the machine bound for attention at each N: t_min = FLOP / (numpy sgemm rate) +
  exps / (exp rate x 2 threads), with FLOP = 2 h N^2 (d_k + d_v) and exps = h N^2 (for the
  truncated band, the kept pairs instead of N^2);
* correctness: every method against the matrix form in float64 (refuses to time a wrong one);
* time: pyperf (https://pyperf.readthedocs.io) starts worker processes for one method and one N;
  each builds its inputs (not timed), sets its thread counts, warms up with one call, then
  times calls; the loop count is calibrated for short calls. What is timed is one call of the
  public function on prepared inputs: for numpy the arrays (h, d, N), for PyTorch contiguous
  row-form tensors (1, h, N, d), or (h, N, d) for the 3-D math row; input checks inside the
  call are part of it, as for any user;
* memory: peak growth of resident memory (VmHWM) during one call, in a fresh process after a
  small warm-up call; the same measure for numpy and PyTorch; and at N = 16384 the extra
  memory (growth minus the output) of the exact methods that never hold N x N;
* the paired ratio at N = 4096 and 8192: in one process that holds both methods, rounds of
  (best of 3 calls of PyTorch's fused kernel, best of 3 calls of attn.chunked_attention with
  threads=2), one ratio per round; the process runs with OMP_WAIT_POLICY=PASSIVE so that
  PyTorch's idle OpenMP threads sleep rather than spin while chunked attention runs;
* which scaled_dot_product_attention backend PyTorch chooses on its own for 4-D and 3-D
  tensors at every N (torch._fused_sdp_choice); the timed 3-D row forces MATH.

The machine must be otherwise idle. The run records the load average before and after and the
share of the cores other processes used during it (from /proc/stat), and marks itself unfit
("fit": false in the file, with the reasons) when the load average at the start exceeds 0.5,
when other processes used more than 5% of the cores or that share could not be measured, and
always for a --quick run (a smoke test, not a measurement to quote).
"""

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from attn.efficient import attention_flops, attention_matrix_bytes, band_pairs
from benchmarks.methods import D_K, D_V, EXACT, HEADS, METHODS, SCALE, THREADS, TORCH_METHODS, WIDTH

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parent.parent
GOAL_N = 4096
MEMORY_N = 16384
SIZES = [256, 512, 1024, 2048, 4096, 8192]
QUICK_SIZES = [256, 512, 1024]
COMPARED = ("chunked", "chunked_one_thread", "streaming")  # the exact numpy forms compared with torch
RATIO_N = [4096, 8192]  # the paired ratio (chunked call / torch fused) at these sizes
BLOCKS = [64, 128, 256, 512]
BUSY_LOAD = 0.5  # a run that starts above this 1-minute load average is unfit
BUSY_SHARE = 0.05  # ... or during which other processes used more than this share of the cores
OPENBLAS_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")


def _python(*args, env=None):
    """Run ``python ...`` from the repository's top folder (``env``: extra environment variables); return its output."""
    done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                          env=None if env is None else {**os.environ, **env})
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def probe(*args, env=None):
    return json.loads(_python("-m", "benchmarks.probe", *map(str, args), env=env).strip().splitlines()[-1])


def pyperf_time(method, N, *, processes, values, loops=None, block=None):
    """Time one method at one N with pyperf; return the per-call times in seconds and a summary."""
    import pyperf

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.json"
        args = ["-m", "benchmarks.timing", "--method", method, "--n", str(N), "--quiet",
                "--processes", str(processes), "--values", str(values), "--warmups", "1", "-o", str(out),
                "--inherit-environ", ",".join(OPENBLAS_ENV)]
        if loops is not None:
            args += ["--loops", str(loops)]
        if block is not None:
            args += ["--block", str(block)]
        _python(*args)
        bench = pyperf.Benchmark.load(str(out))
    times = list(bench.get_values())
    return {
        "median_s": bench.median(), "mean_s": bench.mean(), "stdev_s": bench.stdev() if len(times) > 1 else 0.0,
        "min_s": min(times), "max_s": max(times), "values_s": times, "processes": processes, "values_per_process": values,
        "loops": bench.get_runs()[-1].get_loops(), "threads": bench.get_metadata().get("attention_threads"),
    }


def plan(method, N, quick):
    """(processes, values, loops) for one pyperf measurement: more at the goal size, fewer for slow calls."""
    if quick:
        return 1, 2, None
    slow = N == max(SIZES) and method in ("naive", "torch_3d_math")  # several seconds a call
    processes = 1 if slow else 5 if (N == GOAL_N and method in COMPARED + ("torch",)) else 2
    values = 2 if slow else 3
    loops = 1 if N >= 2048 else None  # None: pyperf calibrates the loop count
    return processes, values, loops


def bound(N, method, rates):
    """t_min = FLOP / sgemm rate + exps / (exp rate x threads): the machine's limit for this N."""
    pairs = band_pairs(N, WIDTH) if method == "truncated" else N * N
    flops = 2 * HEADS * pairs * (D_K + D_V)
    exps = HEADS * pairs
    return flops / rates["sgemm_flops_per_s"] + exps / (rates["exp_per_thread_per_s"] * THREADS), flops


def conditions():
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        cpu = platform.processor()
    versions = {}
    for name in ("numpy", "torch", "pyperf", "threadpoolctl"):
        try:
            versions[name] = __import__(name).__version__
        except ImportError:
            versions[name] = None
    try:
        import threadpoolctl

        blas = [{k: v for k, v in lib.items() if k != "filepath"} for lib in threadpoolctl.threadpool_info()]
    except ImportError:
        blas = None
    try:
        ram = next(int(line.split()[1]) * 1024 for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal:"))
    except (OSError, StopIteration):
        ram = None
    return {"cpu": cpu, "cores": os.cpu_count(), "ram_bytes": ram, "python": platform.python_version(),
            "versions": versions, "blas": blas, "environment": {v: os.environ.get(v) for v in OPENBLAS_ENV},
            "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load_average_before": os.getloadavg()}


def cpu_seconds():
    """(CPU seconds every process on the machine has used, CPU seconds this run and its children have used)."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
        busy = (sum(map(int, fields)) - int(fields[3]) - int(fields[4])) / os.sysconf("SC_CLK_TCK")  # minus idle, iowait
    except (OSError, ValueError, IndexError):
        busy = None
    mine = sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for f in ("ru_utime", "ru_stime"))
    return busy, mine


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repetitions: a smoke test")
    parser.add_argument("--out", type=Path, help="results file (default: benchmarks/results/attention_cpu.json)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    sizes = QUICK_SIZES if args.quick else SIZES
    goal_n = max(QUICK_SIZES) if args.quick else GOAL_N
    memory_n = 2048 if args.quick else MEMORY_N
    report = {
        "setting": {"heads": HEADS, "d_k": D_K, "d_v": D_V, "dtype": "float32", "scale": SCALE,
                    "truncated_width": WIDTH, "threads": THREADS, "sizes": sizes, "goal_N": goal_n,
                    "memory_N": memory_n, "quick": args.quick},
        "methods": {m: {"what": what, "blas_threads": blas, "python_threads": py,
                        "exact": m in EXACT} for m, (what, blas, py) in METHODS.items()},
        "conditions": conditions(),
        "command": "python -m benchmarks.run" + (" --quick" if args.quick else ""),
    }
    print(f"conditions: {report['conditions']}", flush=True)
    busy_start, mine_start = cpu_seconds()
    if report["conditions"]["load_average_before"][0] > BUSY_LOAD:
        print(f"warning: the machine is busy (load average above {BUSY_LOAD}): this run will be marked unfit",
              flush=True)

    numpy_rates, torch_rates = probe("yardsticks", "numpy"), probe("yardsticks", "torch")
    report["yardsticks"] = {"numpy": numpy_rates, "torch": torch_rates}
    rates = {"sgemm_flops_per_s": numpy_rates["sgemm_gflops"] * 1e9,
             "exp_per_thread_per_s": numpy_rates["exp_per_thread_per_s"]}
    report["bound"] = {
        "formula": "t_min = FLOP / sgemm_flops_per_s + exps / (exp_per_thread_per_s * threads)",
        "FLOP": "2 h N^2 (d_k + d_v)", "exps": "h N^2", "threads": THREADS, **rates,
    }
    print(f"yardsticks: {report['yardsticks']}", flush=True)

    # what PyTorch picks on its own for 4-D and 3-D tensors at every size (the 3-D row is timed with MATH forced)
    report["sdpa_backend"] = json.loads(_python(
        "-c", "import json; from benchmarks.methods import sdpa_backend; "
        f"print(json.dumps({{n: {{'4d': sdpa_backend(n, True), '3d': sdpa_backend(n, False)}} for n in {sizes}}}))"
    ).strip())
    print(f"PyTorch's backend: {report['sdpa_backend']}", flush=True)
    report["check"] = probe("check", 256 if args.quick else 1024)
    print(f"largest difference from the float64 matrix form: {report['check']['max_abs_difference']}", flush=True)
    bad = {m: e for m, e in report["check"]["max_abs_difference"].items() if e > 1e-5}
    if bad:
        raise SystemExit(f"these methods differ from the matrix form by more than 1e-5: {bad}; not timing them")

    rows = []
    for N in sizes:
        for method in METHODS:
            processes, values, loops = plan(method, N, args.quick)
            timing = pyperf_time(method, N, processes=processes, values=values, loops=loops)
            t_min, flops = bound(N, method, rates)
            mem = probe("memory", method, N)["peak_rss_growth_bytes"]
            rows.append({"N": N, "method": method, **timing, "bound_s": t_min,
                         "fraction_of_bound": t_min / timing["median_s"], "gflops": flops / timing["median_s"] / 1e9,
                         "peak_rss_growth_bytes": mem})
        print(f"  N={N:5d}  " + "  ".join(f"{r['method']} {r['median_s']:.4f}s" for r in rows[-len(METHODS):]),
              flush=True)
    report["sweep"] = rows

    by = {(r["method"], r["N"]): r for r in rows}
    report["ratio_to_torch"] = {str(N): {m: by[m, N]["median_s"] / by["torch", N]["median_s"] for m in COMPARED}
                                for N in sizes}
    print(f"time / torch's time (ratio of pyperf medians): {report['ratio_to_torch']}", flush=True)

    # the paired ratio: rounds of (best of 3 torch, best of 3 chunked calls) in one process that holds both;
    # PyTorch's idle OpenMP threads sleep (PASSIVE) instead of spinning on the cores chunked attention needs
    report["paired_ratio"] = {}
    for N in [max(QUICK_SIZES)] if args.quick else RATIO_N:
        paired = probe("ratio", N, env={"OMP_WAIT_POLICY": "PASSIVE"})
        r = [row["ratio"] for row in paired["rounds"]]
        paired.update(median=float(np.median(r)), min=min(r), max=max(r), omp_wait_policy="PASSIVE")
        report["paired_ratio"][str(N)] = paired
        print(f"chunked call / torch fused at N={N}: median {paired['median']:.3f} "
              f"(rounds {min(r):.3f}-{max(r):.3f})", flush=True)

    block_times = {}
    for block in BLOCKS:
        t = pyperf_time("chunked", goal_n, processes=1 if args.quick else 2, values=2 if args.quick else 3,
                        loops=1, block=block)
        block_times[str(block)] = {k: t[k] for k in ("median_s", "min_s", "max_s", "values_s")}
    report["block_sweep"] = {"method": "chunked", "N": goal_n, "times": block_times}
    print(f"block sweep at N={goal_n}: { {b: round(t['median_s'], 4) for b, t in block_times.items()} }", flush=True)

    large = {"N": memory_n, "one_attention_matrix_bytes": attention_matrix_bytes(memory_n, dtype=np.float32),
             "attention_matrices_bytes": attention_matrix_bytes(memory_n, heads=HEADS, dtype=np.float32),
             "output_bytes": HEADS * D_V * memory_n * 4, "extra_bytes": {}}
    for method in COMPARED + ("torch",):
        growth = probe("memory", method, memory_n)["peak_rss_growth_bytes"]
        large["extra_bytes"][method] = growth - large["output_bytes"]
    large["fraction_of_one_matrix"] = {m: b / large["one_attention_matrix_bytes"]
                                       for m, b in large["extra_bytes"].items()}
    report["memory_large_N"] = large
    print(f"memory at N={memory_n}: {large}", flush=True)

    report["conditions"]["load_average_after"] = os.getloadavg()
    report["wall_time_s"] = time.perf_counter() - start
    busy_end, mine_end = cpu_seconds()
    others = None if busy_start is None else max(0.0, (busy_end - busy_start) - (mine_end - mine_start))
    share = None if others is None else others / (report["wall_time_s"] * os.cpu_count())
    report["conditions"]["other_processes_cpu_share"] = share
    reasons = []
    if report["conditions"]["load_average_before"][0] > BUSY_LOAD:
        reasons.append(f"1-minute load average {report['conditions']['load_average_before'][0]:.2f} > {BUSY_LOAD} "
                       "at the start")
    if share is None:
        reasons.append("the share of the cores other processes used could not be measured (no /proc/stat)")
    elif share > BUSY_SHARE:
        reasons.append(f"other processes used {share:.0%} of the cores during the run (> {BUSY_SHARE:.0%})")
    if args.quick:
        reasons.append("a --quick run: a smoke test with few sizes and repetitions")
    report["conditions"]["fit"] = not reasons
    report["conditions"]["unfit_because"] = reasons
    if reasons:
        print("THIS RUN IS UNFIT: " + "; ".join(reasons), flush=True)
    out = args.out or (None if args.quick else RESULTS / "attention_cpu.json")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out}")
    print(f"took {report['wall_time_s']:.0f} s")


if __name__ == "__main__":
    main()
