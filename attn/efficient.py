"""The cost of attention, and exact attention that never holds the N x N matrix.

Notation is the lecture's: vectors are columns, so queries, keys and values come as
Q : (d_k, N_q), K : (d_k, N_k), V : (d_v, N_k), with any number of leading (head) axes
in front, and the output is O = V A' with A' = softmax of each column of A = scale K^T Q.

The plain matrix form (:func:`matrix_attention`) builds all of A, an N_k x N_q matrix
per head: its memory grows with N^2. Two exact alternatives give the same O:

* :func:`chunked_attention` takes ``block`` queries (columns of Q) at a time. Their
  scores need only ``block x N_k`` numbers, and each query's softmax is complete
  within its own block, so nothing else changes.
* :func:`streaming_attention` also walks over the keys in blocks of ``key_block``,
  keeping a running maximum and a running sum for every query (the *online softmax*).
  It holds only ``block x key_block`` scores at a time: the idea behind FlashAttention.

Truncated self-attention (the lecture's answer for long speech) keeps only keys within
a band around each query: :func:`truncated_attention` computes just those scores, so
its cost grows linearly with N.

Inside, the functions work in the row layout (query rows, key columns of the score
block) because then both matrix products read contiguous memory; transposing a numpy
array is a free view, so the column-form arguments cost nothing to turn around.
"""

import contextlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._checks import check_count, check_mask, check_qkv, check_scale
from .core import softmax
from .cost import attention_flops, attention_matrix_bytes, band_pairs  # noqa: F401 (chapter 9 reads them here)


def matrix_attention(Q, K, V, *, scale=1.0, mask=None):
    """The plain matrix form O = V softmax(scale K^T Q), holding every score.

    Parameters
    ----------
    Q : (..., d_k, N_q) ndarray
        Queries as columns.
    K : (..., d_k, N_k) ndarray
        Keys as columns.
    V : (..., d_v, N_k) ndarray
        Values as columns.
    scale : float
        Multiplies every score (1 in the lecture, 1/sqrt(d_k) in the Transformer).
    mask : (N_k, N_q) bool ndarray, optional
        ``mask[j, i]`` is True where query i may attend to key j (e.g. :func:`attn.band_mask`).

    Returns
    -------
    O : (..., d_v, N_q) ndarray
        Column i is b^i = sum_j alpha'_{i,j} v^j.

    Notes
    -----
    This is the reference every faster function is tested against, and the lean baseline
    the benchmark times: it allocates the (..., N_k, N_q) score matrix A once and turns it
    into A' in place (subtract each column's maximum, exponentiate, divide by the column
    sums), so its memory is one attention matrix per head plus the output.
    """
    Q, K, V, dt = _checked_qkv(Q, K, V)
    scale = check_scale(scale)
    if mask is not None:
        mask = check_mask(mask, K.shape[-1], Q.shape[-1])
    A = K.swapaxes(-1, -2).astype(dt, copy=False) @ (Q.astype(dt, copy=False) * dt.type(scale))
    # (..., N_k, d_k) x (..., d_k, N_q) -> (..., N_k, N_q); from here on A becomes A' in place
    if mask is not None:
        np.copyto(A, -np.inf, where=~mask)
    A -= A.max(axis=-2, keepdims=True)
    np.exp(A, out=A)
    A /= A.sum(axis=-2, keepdims=True)
    return V.astype(dt, copy=False) @ A  # (..., d_v, N_k) x (..., N_k, N_q) -> (..., d_v, N_q)


def chunked_attention(Q, K, V, *, scale=1.0, block=256, threads=None):
    """Exact attention, ``block`` queries at a time, that never holds the N_k x N_q score matrix.

    Parameters
    ----------
    Q : (..., d_k, N_q) ndarray
        Queries as columns, with optional leading (head) axes.
    K : (..., d_k, N_k) ndarray
        Keys as columns; the same leading axes as Q.
    V : (..., d_v, N_k) ndarray
        Values as columns; the same leading axes as Q.
    scale : float
        Multiplies every score.
    block : int
        How many queries share one block of scores.
    threads : int, optional
        How many threads share the work. The default is the number of cores this process
        may use. The heads are taken one after another, and the threads share each head:
        each takes the head's next block of queries until none is left. numpy releases the
        interpreter lock inside matrix products and ufuncs, so they run at the same time.
        While they run, the BLAS library is held to one thread per call (threadpoolctl), so
        that its threads do not compete with these for the cores. ``threads=1`` leaves
        BLAS alone.

    Returns
    -------
    O : (..., d_v, N_q) ndarray
        Equal to :func:`matrix_attention` up to rounding; float32 if all of Q, K, V are
        float32, float64 otherwise.

    Notes
    -----
    Column i of A' depends only on query i, so the queries can be split into blocks and
    each block's softmax finished on its own. Per block, in the row layout, the scores
    S = (scale Q_b)^T K are shifted, exponentiated in place and multiplied by [V^T, 1], V^T
    with a column of ones appended: one product gives the weighted sums of the values
    (b x d_v) and, in its last column, each row's sum, the softmax's denominator. Only the
    small result is divided by the denominators.

    A shift of row i at least as large as its largest score guarantees that no exp
    overflows; any shift gives the same softmax in exact arithmetic. Appending minus the
    shift to query i and a row of ones to K puts it into the first product, so the scores
    are touched by no other pass than the exponential. In float32 the shift is the bound
    r_i = |scale| |q^i| max_j |k^j| (Cauchy-Schwarz), known before any score. Then nothing needs to be corrected later
    and the keys are taken in tiles of ``KEY_TILE``, whose scores are exponentiated and
    multiplied while they are still in the cache. A row whose denominator comes out below
    2^-60 (its scores lie so far below the bound that small terms may have vanished), or
    not finite, is computed again, shifted by its maximum. The shifted scores carry a
    rounding error of order eps r_i, the order of the error a float32 score q^i . k^j
    already has. In float64 the shift is each row's maximum, found in a first pass over
    the key tiles.

    The heads are taken in order. For each head, [K; 1], [V^T, 1] and max_j |k^j| are
    built once, and all threads read these copies while they take the head's blocks of
    queries one at a time (blocks shrink to about N_q / threads queries when the head has fewer
    than one block per thread); the next head starts when every block is done. A thread
    owns only its score tile, at most ``block x KEY_TILE`` numbers, and a few rows as long
    as a block. So the working memory is one head's copies, (d_k + d_v + 2) N_k numbers,
    plus one score tile per thread: adding a thread adds a tile, never another copy of
    the keys and values.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Q, K, V = rng.normal(size=(3, 4, 10))
    >>> bool(np.allclose(chunked_attention(Q, K, V, block=3), matrix_attention(Q, K, V)))
    True
    """
    Q, K, V, dt = _checked_qkv(Q, K, V)
    scale = check_scale(scale)
    block = check_count("block", block, 1)
    threads = _cores() if threads is None else check_count("threads", threads, 1)
    lead, (Q3, K3, V3) = Q.shape[:-2], _stack_heads(Q, K, V)
    (H, d_k, N_q), N_k, d_v = Q3.shape, K3.shape[2], V3.shape[1]
    O = np.empty((H, d_v, N_q), dtype=dt)
    B = min(block, -(-N_q // threads))  # queries per block: at least as many blocks per head as threads
    n = min(threads, -(-N_q // B))
    buffers = [_Buffers(B, d_k, d_v, N_k, dt) for _ in range(n)]
    head, lock = _Head(d_k, d_v, N_k, dt), threading.Lock()

    def run(h, c, todo):
        """Thread c takes head h's next block of queries from todo, with the c-th buffers, until none is left."""
        while True:
            with lock:
                s = next(todo, None)
            if s is None:
                return
            _chunked_queries(Q3[h, :, s:s + B], head, scale, buffers[c], O[h, :, s:s + B])

    with contextlib.ExitStack() as stack:
        if n > 1:
            stack.enter_context(_one_blas_thread())
            pool = stack.enter_context(ThreadPoolExecutor(n))
        for h in range(H):
            head.fill(K3[h], V3[h])
            todo = iter(range(0, N_q, B))  # the first query of each of the head's blocks
            if n == 1:
                run(h, 0, todo)
            else:
                list(pool.map(run, [h] * n, range(n), [todo] * n))  # waits for all; re-raises a thread's error
    return O.reshape(lead + (d_v, N_q))


class _Head:
    """One head's keys and values as :func:`chunked_attention` reads them, shared by its threads."""

    def __init__(self, d_k, d_v, N_k, dt):
        self.K1 = np.empty((d_k + 1, N_k), dtype=dt)  # [K; 1]
        self.K1[d_k] = 1
        self.Vt1 = np.empty((N_k, d_v + 1), dtype=dt)  # [V^T, 1]
        self.Vt1[:, d_v] = 1
        self.K = self.K1[:d_k]  # K alone, a view
        self.k_max = 0.0

    def fill(self, K_h, V_h):
        """Copy in K_h (d_k, N_k) and V_h (d_v, N_k); in float32 also max_j |k^j| for the shift."""
        self.K[...] = K_h
        self.Vt1[:, :-1] = V_h.T
        if self.K1.dtype == np.float32:
            self.k_max = np.sqrt(np.max(np.einsum("kj,kj->j", self.K, self.K)))


class _Buffers:
    """One thread's working memory for :func:`chunked_attention`; the scores S are the largest part."""

    def __init__(self, B, d_k, d_v, N_k, dt):
        self.S = np.empty((B, min(N_k, KEY_TILE)), dtype=dt)  # B x C scores, C = min(N_k, KEY_TILE)
        self.Qb = np.empty((B, d_k + 1), dtype=dt)  # a block of queries as rows, then minus each one's shift
        self.Ob = np.empty((B, d_v + 1), dtype=dt)
        self.part = np.empty((B, d_v + 1), dtype=dt)


KEY_TILE = 512  # keys per tile: a tile of 256 x 512 float32 scores (512 KiB) stays in a core's cache
# a float32 row whose denominator falls outside [_TINY, _HUGE] is computed again with its maximum
_TINY, _HUGE = 2.0**-60, 2.0**100


def _chunked_queries(Q_h, head, scale, buf, out):
    """out = V_h softmax(scale K_h^T Q_h), block by block; Q_h (d_k, n), the head's K_h and V_h in ``head``."""
    d_k, d_v, B = Q_h.shape[0], out.shape[0], buf.S.shape[0]
    bound = buf.S.dtype == np.float32  # float32: shift by the bound r_i; float64: by the maximum
    for s in range(0, Q_h.shape[1], B):
        b = min(B, Q_h.shape[1] - s)
        Q_b, O_b = buf.Qb[:b], buf.Ob[:b]
        np.multiply(Q_h[:, s:s + b].T, scale, out=Q_b[:, :d_k])  # queries as rows, the scale folded in
        if bound:  # the shift r_i = |scale q^i| max_j |k^j|, known before any score
            np.einsum("ik,ik->i", Q_b[:, :d_k], Q_b[:, :d_k], out=Q_b[:, d_k])
            np.sqrt(Q_b[:, d_k], out=Q_b[:, d_k])
            np.multiply(Q_b[:, d_k], -head.k_max, out=Q_b[:, d_k])
        else:
            Q_b[:, d_k] = -_row_max(Q_b[:, :d_k], head.K, buf.S)
        _exp_times_values(Q_b, head, buf, O_b)
        if bound:
            sums = O_b[:, d_v]
            low = np.flatnonzero(~((sums >= _TINY) & (sums <= _HUGE)))  # NaN fails both tests too
            if low.size:  # these rows again, shifted by their maximum
                Q_low = Q_b[low]
                Q_low[:, d_k] = -_row_max(Q_low[:, :d_k], head.K, buf.S)
                O_low = np.empty((low.size, d_v + 1), dtype=O_b.dtype)
                _exp_times_values(Q_low, head, buf, O_low)
                O_b[low] = O_low
        np.divide(O_b[:, :d_v], O_b[:, d_v:], out=O_b[:, :d_v])
        out[:, s:s + b] = O_b[:, :d_v].T


def _row_max(Q_b, K_h, S):
    """Each query's largest score, max_j q^i . k^j, one tile of keys at a time."""
    m = np.full(Q_b.shape[0], -np.inf, dtype=S.dtype)
    for t in range(0, K_h.shape[1], S.shape[1]):
        c = min(S.shape[1], K_h.shape[1] - t)
        S_bc = S[:Q_b.shape[0], :c]
        np.matmul(Q_b, K_h[:, t:t + c], out=S_bc)
        np.maximum(m, S_bc.max(axis=1), out=m)
    return m


def _exp_times_values(Q_b, head, buf, O_b):
    """O_b = exp([Q_b] [K; 1]) [V^T, 1], one tile of keys at a time: weighted sums and row sums.

    The last column of Q_b holds minus each query's shift, so the first product gives the
    shifted scores directly; only the exponential touches them, in place, while they are
    still in the cache.
    """
    b, N_k = Q_b.shape[0], head.K1.shape[1]
    for t in range(0, N_k, buf.S.shape[1]):
        c = min(buf.S.shape[1], N_k - t)
        S_bc = buf.S[:b, :c]
        np.matmul(Q_b, head.K1[:, t:t + c], out=S_bc)  # (b, d_k + 1) x (d_k + 1, c): scores minus shifts
        np.exp(S_bc, out=S_bc)
        if t == 0:
            np.matmul(S_bc, head.Vt1[t:t + c], out=O_b)  # (b, c) x (c, d_v + 1): weighted sums, row sums
        else:
            part = buf.part[:b]
            np.matmul(S_bc, head.Vt1[t:t + c], out=part)
            O_b += part


def _cores():
    """How many cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_BLAS = []  # the threadpoolctl controller, made on first use (once numpy's BLAS is loaded)


def _one_blas_thread():
    """A context in which the BLAS library runs every call on one thread."""
    import threadpoolctl

    if not _BLAS:
        _BLAS.append(threadpoolctl.ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


def streaming_attention(Q, K, V, *, scale=1.0, block=512, key_block=1024):
    """Exact attention over blocks of queries and of keys, with an online softmax.

    Parameters
    ----------
    Q : (..., d_k, N_q) ndarray
        Queries as columns, with optional leading (head) axes.
    K : (..., d_k, N_k) ndarray
        Keys as columns.
    V : (..., d_v, N_k) ndarray
        Values as columns.
    scale : float
        Multiplies every score.
    block : int
        Queries per block.
    key_block : int
        Keys per block. At most ``block x key_block`` scores exist at any time.

    Returns
    -------
    O : (..., d_v, N_q) ndarray
        Equal to :func:`matrix_attention` up to rounding.

    Notes
    -----
    For each query the function keeps a running maximum m, a running sum
    l = sum_j exp(s_j - m) over the keys seen so far, and a running weighted sum
    acc = sum_j exp(s_j - m) v^j. A new key block with scores S raises the maximum to
    m' = max(m, max S); the old terms are rescaled by exp(m - m') and the new ones added:
    l' = exp(m - m') l + sum exp(S - m'), acc' = exp(m - m') acc + exp(S - m') V_b^T.
    After the last key block, O = acc / l, exactly softmax-weighted (Milakov and
    Gimelshein 2018; Dao et al. 2022).
    """
    Q, K, V, dt = _checked_qkv(Q, K, V)
    scale = check_scale(scale)
    block = check_count("block", block, 1)
    key_block = check_count("key_block", key_block, 1)
    lead, (Q3, K3, V3) = Q.shape[:-2], _stack_heads(Q, K, V)
    H, d_k, N_q = Q3.shape
    N_k, d_v = K3.shape[2], V3.shape[1]
    B, C = min(block, N_q), min(key_block, N_k)
    S = np.empty((B, C), dtype=dt)  # the only score buffer: B x C
    Qb = np.empty((B, d_k), dtype=dt)
    m, m_new, rescale, l, part = (np.empty((B, 1), dtype=dt) for _ in range(5))
    acc, PV = np.empty((B, d_v), dtype=dt), np.empty((B, d_v), dtype=dt)
    O = np.empty((H, d_v, N_q), dtype=dt)
    for h in range(H):
        K_h = K3[h].astype(dt, copy=False)  # (d_k, N_k)
        Vt_h = V3[h].astype(dt, copy=False).T  # (N_k, d_v), a view
        for s in range(0, N_q, B):
            b = min(B, N_q - s)
            Q_b, m_b, mn_b, r_b, l_b, p_b, acc_b, PV_b = (x[:b] for x in (Qb, m, m_new, rescale, l, part, acc, PV))
            np.multiply(Q3[h, :, s:s + b].T, scale, out=Q_b)
            m_b.fill(-np.inf)
            l_b.fill(0)
            acc_b.fill(0)
            for t in range(0, N_k, C):
                c = min(C, N_k - t)
                S_bc = S[:b, :c]
                np.matmul(Q_b, K_h[:, t:t + c], out=S_bc)  # (b, d_k) x (d_k, c) -> (b, c)
                np.max(S_bc, axis=1, keepdims=True, out=mn_b)
                np.maximum(mn_b, m_b, out=mn_b)  # m' = max(m, max S)
                np.subtract(m_b, mn_b, out=r_b)
                np.exp(r_b, out=r_b)  # exp(m - m'): 0 on the first key block, where m = -inf
                np.subtract(S_bc, mn_b, out=S_bc)
                np.exp(S_bc, out=S_bc)
                np.sum(S_bc, axis=1, keepdims=True, out=p_b)
                np.multiply(l_b, r_b, out=l_b)
                np.add(l_b, p_b, out=l_b)  # l' = exp(m - m') l + sum exp(S - m')
                np.matmul(S_bc, Vt_h[t:t + c], out=PV_b)  # (b, c) x (c, d_v) -> (b, d_v)
                np.multiply(acc_b, r_b, out=acc_b)
                np.add(acc_b, PV_b, out=acc_b)  # acc' = exp(m - m') acc + exp(S - m') V_b^T
                m_b[...] = mn_b
            np.divide(acc_b, l_b, out=acc_b)
            O[h, :, s:s + b] = acc_b.T
    return O.reshape(lead + (d_v, N_q))


def truncated_attention(Q, K, V, *, width, scale=1.0, block=256):
    """Truncated self-attention: query i attends only to keys j with |i - j| <= width.

    Parameters
    ----------
    Q : (..., d_k, N) ndarray
        Queries as columns, with optional leading (head) axes.
    K : (..., d_k, N) ndarray
        Keys as columns (as many as queries: position i of both is the same time step).
    V : (..., d_v, N) ndarray
        Values as columns.
    width : int
        How far each query looks to either side (0 = only itself).
    scale : float
        Multiplies every score.
    block : int
        Queries per block; each block computes scores only for the keys its band reaches.

    Returns
    -------
    O : (..., d_v, N) ndarray
        Equal to ``matrix_attention(Q, K, V, scale=scale, mask=band_mask(N, width))``.

    Notes
    -----
    A block of b queries starting at s needs keys s - width ... s + b - 1 + width, so it
    computes b (b + 2 width) scores; over the whole sequence that is about N (block + 2 width),
    linear in N for a fixed width (lecture part 下, slides 31-34).
    """
    Q, K, V, dt = _checked_qkv(Q, K, V)
    width = check_count("width", width, 0)
    scale = check_scale(scale)
    block = check_count("block", block, 1)
    N = Q.shape[-1]
    if K.shape[-1] != N:
        raise ValueError(
            f"Q has shape {Q.shape} and K has shape {K.shape}: truncated self-attention needs as many "
            f"keys as queries ({K.shape[-1]} != {N})"
        )
    lead, (Q3, K3, V3) = Q.shape[:-2], _stack_heads(Q, K, V)
    O = np.empty((Q3.shape[0], V3.shape[1], N), dtype=dt)
    for s in range(0, N, block):
        e = min(N, s + block)
        lo, hi = max(0, s - width), min(N, e + width)  # the keys this block's band reaches
        S = scale * (Q3[:, :, s:e].swapaxes(1, 2) @ K3[:, :, lo:hi])  # (H, b, d_k) x (H, d_k, hi-lo)
        S = np.where(_band_block(s, e, lo, hi, width), S, -np.inf)  # rows of band_mask(N, width).T
        P = softmax(S, axis=2)
        O[:, :, s:e] = V3[:, :, lo:hi] @ P.swapaxes(1, 2)  # (H, d_v, hi-lo) x (H, hi-lo, b)
    return O.reshape(lead + (V3.shape[1], N)).astype(dt, copy=False)


def _band_block(s, e, lo, hi, width):
    """Rows s..e-1 (queries), columns lo..hi-1 (keys) of the band, without building N x N."""
    i = np.arange(s, e)[:, None]
    j = np.arange(lo, hi)[None, :]
    return np.abs(i - j) <= width


def _stack_heads(Q, K, V):
    """Flatten the leading (head) axes: (..., d, N) -> (H, d, N); views when the arrays allow."""
    return tuple(x.reshape((-1,) + x.shape[-2:]) for x in (Q, K, V))


def _checked_qkv(Q, K, V):
    """Q, K, V through :func:`attn._checks.check_qkv`, and the working dtype (float32 or float64)."""
    Q, K, V = check_qkv(Q, K, V)
    return Q, K, V, np.result_type(Q.dtype, K.dtype, V.dtype, np.float32)
