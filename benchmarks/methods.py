"""The setting and the implementations under test, shared by the benchmark's worker processes.

Every method is built by :func:`build` in the process that times or measures it, so one
process only ever holds one method's threads: numpy's BLAS (OpenBLAS) threads or PyTorch's
OpenMP threads, never both spinning on the same cores. The one exception is the paired ratio
(``python -m benchmarks.probe ratio N``), which builds the chunked call and PyTorch's fused
kernel in one process so that both see the same spell of the machine; it runs with
``OMP_WAIT_POLICY=PASSIVE``, so PyTorch's idle OpenMP threads sleep instead of spinning.

Every method gets ``THREADS`` threads, however it uses them, whatever the machine's core count
(recorded beside the results); chunked attention is called with ``threads=THREADS``, which is
its call with no options in a process that may use ``THREADS`` CPUs.
"""

import numpy as np

HEADS, D_K, D_V = 8, 64, 64
SCALE = 1 / 8  # 1/sqrt(d_k)
WIDTH = 64  # truncated self-attention: keys within 64 positions (0.64 s of speech) on each side
THREADS = 2  # every method may use two threads, however it uses them

# name -> (what it is, BLAS threads per call, Python threads); torch methods use torch's own threads
METHODS = {
    "naive": ("attn.efficient.matrix_attention: the lean matrix form, all of A' in memory", THREADS, 1),
    "chunked": ("attn.chunked_attention(Q, K, V, scale=s, threads=2): two Python threads sharing each head in "
                "turn, BLAS held to one thread by the function itself (the call with no options on two CPUs)",
                THREADS, THREADS),
    "chunked_one_thread": ("attn.chunked_attention(..., threads=1): one Python thread, BLAS threads the products",
                           THREADS, 1),
    "streaming": ("attn.streaming_attention with its defaults (block 512, key_block 1024)", THREADS, 1),
    "truncated": ("attn.efficient.truncated_attention, width 64 (not exact: a band of keys)", THREADS, 1),
    "torch": ("torch scaled_dot_product_attention on 4-D (1, h, N, d) tensors: the fused kernel", THREADS, 1),
    "torch_3d_math": ("torch scaled_dot_product_attention on 3-D (h, N, d) tensors, forced to the unfused math "
                      "path with sdpa_kernel(SDPBackend.MATH)", THREADS, 1),
}
TORCH_METHODS = ("torch", "torch_3d_math")
EXACT = ("naive", "chunked", "chunked_one_thread", "streaming", "torch", "torch_3d_math")


def inputs(N, seed=0):
    """Column-form Q, K, V of shape (h, d, N), float32, from a seeded generator."""
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((HEADS, d, N), dtype=np.float32) for d in (D_K, D_K, D_V))


def limit_threads(method):
    """Set this process's thread counts for ``method``; return a description of them."""
    _, blas, _ = METHODS[method]
    out = {"python_threads": METHODS[method][2]}
    if method in TORCH_METHODS:
        import torch

        torch.set_num_threads(THREADS)
        out["torch_threads"] = torch.get_num_threads()
    try:
        import threadpoolctl
    except ImportError:  # the bench extra is not installed: BLAS keeps its default
        out["blas_threads"] = None
        return out
    threadpoolctl.threadpool_limits(blas, user_api="blas")
    out["blas_threads"] = [lib["num_threads"] for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"]
    return out


def build(method, Q, K, V, *, block=None):
    """A function of no arguments that computes the output O (column form for numpy, rows for torch).

    Everything a method needs besides the call (torch's row-form copies of the inputs) is
    prepared here, outside the timed region. ``block`` overrides chunked attention's default
    block size (for the block-size sweep). Returns (f, to_columns) where ``to_columns(f())``
    gives the (h, d_v, N) column form for comparing results.
    """
    from attn import efficient as eff

    if method == "naive":
        return (lambda: eff.matrix_attention(Q, K, V, scale=SCALE)), np.asarray
    blocks = {} if block is None else {"block": block}  # None: the function's default
    if method == "chunked":
        return (lambda: eff.chunked_attention(Q, K, V, scale=SCALE, threads=THREADS, **blocks)), np.asarray
    if method == "chunked_one_thread":
        return (lambda: eff.chunked_attention(Q, K, V, scale=SCALE, threads=1, **blocks)), np.asarray
    if method == "streaming":
        return (lambda: eff.streaming_attention(Q, K, V, scale=SCALE)), np.asarray
    if method == "truncated":
        return (lambda: eff.truncated_attention(Q, K, V, width=WIDTH, scale=SCALE)), np.asarray
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    rows = [torch.from_numpy(np.ascontiguousarray(x.swapaxes(1, 2))) for x in (Q, K, V)]  # (h, N, d)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    if method == "torch":
        q, k, v = (x.unsqueeze(0) for x in rows)  # (1, h, N, d): the fused kernels need a batch axis

        def f():
            with torch.inference_mode():
                return sdpa(q, k, v, scale=SCALE)

        return f, lambda out: out[0].numpy().swapaxes(1, 2)
    if method == "torch_3d_math":
        q, k, v = rows

        def f():
            with torch.inference_mode(), sdpa_kernel(SDPBackend.MATH):
                return sdpa(q, k, v, scale=SCALE)

        return f, lambda out: out.numpy().swapaxes(1, 2)
    raise ValueError(f"unknown method {method!r}; known: {', '.join(METHODS)}")


def sdpa_backend(N, four_d):
    """The SDPA backend PyTorch chooses on its own (no sdpa_kernel context) for (1, h, N, d) or (h, N, d) tensors."""
    import torch
    from torch.nn.attention import SDPBackend

    shape = (1, HEADS, N, D_K) if four_d else (HEADS, N, D_K)
    q = torch.zeros(shape)
    return SDPBackend(torch._fused_sdp_choice(q, q, q, scale=SCALE)).name
