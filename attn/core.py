"""Self-attention in the lecture's notation.

Vectors are columns. A sequence of N vectors a^1 ... a^N, each of size d, is the
matrix ``I`` of shape (d, N). With the learned matrices W_q, W_k (d_k, d) and
W_v (d_v, d)::

    Q = W_q I,  K = W_k I,  V = W_v I
    A = K^T Q                    A[j, i] = k^j . q^i = alpha_{i,j}
    A' = softmax of each column  A'[j, i] = alpha'_{i,j}: how much query i attends to key j
    O = V A'                     O[:, i] = b^i = sum_j alpha'_{i,j} v^j

Each column of A' sums to 1. PyTorch and most papers store vectors as rows
instead (X = I^T); chapter 4 of the book bridges the two.
"""

import numpy as np

from ._checks import (
    as_array,
    check_count,
    check_mask,
    check_projection,
    check_scale,
    check_sequence,
    check_single_head,
)


def softmax(x, axis=0):
    """Numerically stable softmax along one axis.

    Parameters
    ----------
    x : (..., n, ...) array_like
        Scores (logits). Entries may be ``-inf`` (a masked score) as long as every
        slice along ``axis`` keeps at least one finite entry; NaN and ``+inf`` are rejected.
    axis : int
        The axis that is normalised. The default 0 normalises each column, as the
        lecture does for A'.

    Returns
    -------
    ndarray
        Same shape as ``x``; non-negative, and summing to 1 along ``axis``.

    Notes
    -----
    softmax(x)_j = exp(x_j - m) / sum_l exp(x_l - m) with m = max_l x_l. Subtracting the
    maximum changes nothing mathematically but keeps every exponent <= 0, so the
    result is finite for any finite input, even logits of +-1e6.

    Examples
    --------
    >>> softmax([[0.0, 1e6], [0.0, -1e6]], axis=0)
    array([[0.5, 1. ],
           [0.5, 0. ]])
    """
    x = as_array("x", x, allow_neg_inf=True)
    if x.ndim == 0:
        raise ValueError("x must have at least one axis, got a scalar")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of range for x of shape {x.shape}")
    m = np.max(x, axis=axis, keepdims=True)
    if np.isneginf(m).any():
        raise ValueError(f"a slice of x along axis {axis} is entirely -inf: softmax is undefined there")
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def attention_scores(Q, K, *, scale=1.0):
    """The score matrix A = scale * K^T Q.

    Parameters
    ----------
    Q : (d_k, N) ndarray
        Queries as columns q^1 ... q^N.
    K : (d_k, N) ndarray
        Keys as columns k^1 ... k^N.
    scale : float
        Multiplies every score; 1 in the lecture, 1/sqrt(d_k) in the Transformer.

    Returns
    -------
    A : (N, N) ndarray
        A[j, i] = scale * k^j . q^i = alpha_{i,j}, the relevance of key j to query i.
    """
    Q = as_array("Q", Q, ndim=2)
    K = as_array("K", K, ndim=2)
    if Q.shape[0] != K.shape[0]:
        raise ValueError(f"Q has shape {Q.shape} and K has shape {K.shape}: they need the same number of rows d_k")
    return check_scale(scale) * (K.T @ Q)  # (N, d_k) x (d_k, N) -> (N, N)


def self_attention(I, W_q, W_k, W_v, *, scale=1.0, mask=None):
    """Self-attention in matrix form: four matrix products and a softmax.

    Parameters
    ----------
    I : (d, N) ndarray
        The input sequence; column i is a^i.
    W_q, W_k : (d_k, d) ndarray
        Query and key projections.
    W_v : (d_v, d) ndarray
        Value projection.
    scale : float
        Multiplies the scores before the softmax: 1.0 is the lecture's plain dot
        product, ``1 / sqrt(d_k)`` is the Transformer's scaled dot product.
    mask : (N, N) bool ndarray, optional
        ``mask[j, i]`` is True where query i may attend to key j. Masked scores
        are set to -inf before the softmax, so they get weight exactly 0.

    Returns
    -------
    O : (d_v, N) ndarray
        The outputs; column i is b^i = sum_j alpha'_{i,j} v^j.
    A_prime : (N, N) ndarray
        The attention matrix: A_prime[j, i] = alpha'_{i,j} is how much query i
        attends to key j. Each column sums to 1.

    Notes
    -----
    Q = W_q I, K = W_k I, V = W_v I, A = scale K^T Q, A' = softmax of each column of A,
    O = V A' (lecture part 下, slides 21-25).

    Examples
    --------
    >>> I = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> O, A_prime = self_attention(I, np.eye(2), np.eye(2), np.eye(2))
    >>> A_prime.sum(axis=0)
    array([1., 1.])
    """
    I, W_q, W_k, W_v = check_single_head(I, W_q, W_k, W_v)
    scale = check_scale(scale)
    Q = W_q @ I  # (d_k, d) x (d, N) -> (d_k, N)
    K = W_k @ I
    V = W_v @ I  # (d_v, N)
    A = scale * (K.T @ Q)  # (N, d_k) x (d_k, N) -> (N, N)
    if mask is not None:
        A = np.where(check_mask(mask, I.shape[1]), A, -np.inf)
    A_prime = softmax(A, axis=0)
    O = V @ A_prime  # (d_v, N) x (N, N) -> (d_v, N)
    return O, A_prime


def self_attention_loop(I, W_q, W_k, W_v, *, scale=1.0):
    """Self-attention one output at a time, as the lecture first computes b^1.

    Same arguments and results as :func:`self_attention` (without a mask); the
    loops make each step of part 上 (slides 15-19) visible and are slow on purpose.

    Parameters
    ----------
    I : (d, N) ndarray
        The input sequence; column i is a^i.
    W_q, W_k : (d_k, d) ndarray
    W_v : (d_v, d) ndarray
    scale : float

    Returns
    -------
    O : (d_v, N) ndarray
    A_prime : (N, N) ndarray
        A_prime[j, i] = alpha'_{i,j}.
    """
    I, W_q, W_k, W_v = check_single_head(I, W_q, W_k, W_v)
    scale = check_scale(scale)
    N = I.shape[1]
    a = [I[:, i] for i in range(N)]
    q = [W_q @ a_i for a_i in a]
    k = [W_k @ a_j for a_j in a]
    v = [W_v @ a_j for a_j in a]
    O = np.zeros((W_v.shape[0], N), dtype=np.result_type(I, W_v))
    A_prime = np.zeros((N, N), dtype=O.dtype)
    for i in range(N):  # each b^i on its own: none waits for another
        alpha = np.array([scale * (q[i] @ k[j]) for j in range(N)])
        alpha_prime = softmax(alpha)
        O[:, i] = sum(alpha_prime[j] * v[j] for j in range(N))
        A_prime[:, i] = alpha_prime
    return O, A_prime


def _check_heads(I, W_q, W_k, W_v, W_o):
    I = check_sequence(I)
    W_q = as_array("W_q", W_q, ndim=3)
    W_k = as_array("W_k", W_k, ndim=3)
    W_v = as_array("W_v", W_v, ndim=3)
    W_o = as_array("W_o", W_o, ndim=2)
    h = W_q.shape[0]
    if h == 0:
        raise ValueError(f"W_q has shape {W_q.shape}: there must be at least one head")
    if W_k.shape[0] != h or W_v.shape[0] != h:
        raise ValueError(
            f"the head stacks differ in size: W_q has {h} heads {W_q.shape}, "
            f"W_k has {W_k.shape[0]} {W_k.shape}, W_v has {W_v.shape[0]} {W_v.shape}"
        )
    d_v = W_v.shape[1]
    if W_o.shape[1] != h * d_v:
        raise ValueError(
            f"W_o has shape {W_o.shape} but the {h} heads give h*d_v = {h}*{d_v} = {h * d_v} "
            f"stacked values: W_o needs {h * d_v} columns"
        )
    return I, W_q, W_k, W_v, W_o


def multi_head_attention(I, W_q, W_k, W_v, W_o, *, scale=1.0, mask=None):
    """Multi-head self-attention: one self-attention per head, stacked, then W_o.

    Parameters
    ----------
    I : (d, N) ndarray
        The input sequence; column i is a^i.
    W_q, W_k : (h, d_k, d) ndarray
        Per-head query and key projections; head m uses W_q[m], W_k[m].
    W_v : (h, d_v, d) ndarray
        Per-head value projections.
    W_o : (d_out, h * d_v) ndarray
        The output projection W^O.
    scale : float
        As in :func:`self_attention`, applied in every head.
    mask : (N, N) bool ndarray, optional
        As in :func:`self_attention`, applied in every head.

    Returns
    -------
    O : (d_out, N) ndarray
        Column i is b^i = W_o [b^{i,1}; ...; b^{i,h}].
    A_primes : (h, N, N) ndarray
        A_primes[m] is head m's attention matrix (key rows, query columns).

    Notes
    -----
    Lecture part 下, slides 26-28. Head m only compares q^{i,m} with k^{j,m}; the head
    outputs are stacked in head order before W_o mixes them. One head with
    W_o = identity is exactly :func:`self_attention`.
    """
    I, W_q, W_k, W_v, W_o = _check_heads(I, W_q, W_k, W_v, W_o)
    heads = [self_attention(I, W_q[m], W_k[m], W_v[m], scale=scale, mask=mask) for m in range(W_q.shape[0])]
    B = np.concatenate([O_m for O_m, _ in heads], axis=0)  # (h*d_v, N): b^{i,1..h} stacked
    A_primes = np.stack([A_m for _, A_m in heads])  # (h, N, N)
    return W_o @ B, A_primes  # (d_out, h*d_v) x (h*d_v, N) -> (d_out, N)


def dot_product_relevance(a_query, a_key, W_q, W_k):
    """Relevance alpha of two vectors by dot product (lecture part 上, slide 15).

    Parameters
    ----------
    a_query, a_key : (d,) ndarray
        The vector that asks (a^1) and the vector asked about (a^2).
    W_q, W_k : (d_k, d) ndarray

    Returns
    -------
    float
        alpha = q . k with q = W_q a_query and k = W_k a_key.
    """
    a_query = as_array("a_query", a_query, ndim=1)
    a_key = as_array("a_key", a_key, ndim=1)
    W_q = as_array("W_q", W_q, ndim=2)
    W_k = as_array("W_k", W_k, ndim=2)
    _check_pair(a_query, a_key, W_q, W_k)
    return float((W_q @ a_query) @ (W_k @ a_key))


def additive_relevance(a_query, a_key, W_q, W_k, w):
    """Relevance alpha of two vectors, additive form (lecture part 上, slide 15).

    Parameters
    ----------
    a_query, a_key : (d,) ndarray
    W_q, W_k : (d_k, d) ndarray
    w : (d_k,) ndarray
        The vector W on the slide that turns the tanh output into a scalar.

    Returns
    -------
    float
        alpha = w . tanh(W_q a_query + W_k a_key).
    """
    a_query = as_array("a_query", a_query, ndim=1)
    a_key = as_array("a_key", a_key, ndim=1)
    W_q = as_array("W_q", W_q, ndim=2)
    W_k = as_array("W_k", W_k, ndim=2)
    w = as_array("w", w, ndim=1)
    _check_pair(a_query, a_key, W_q, W_k)
    if w.shape[0] != W_q.shape[0]:
        raise ValueError(f"w has shape {w.shape} but W_q has shape {W_q.shape}: w needs {W_q.shape[0]} entries")
    return float(w @ np.tanh(W_q @ a_query + W_k @ a_key))


def _check_pair(a_query, a_key, W_q, W_k):
    if a_query.shape != a_key.shape:
        raise ValueError(f"a_query has shape {a_query.shape} and a_key has shape {a_key.shape}: they must match")
    for name, W in (("W_q", W_q), ("W_k", W_k)):
        if W.shape[1] != a_query.shape[0]:
            raise ValueError(f"{name} has shape {W.shape} but the vectors have size {a_query.shape[0]}")
    if W_q.shape[0] != W_k.shape[0]:
        raise ValueError(f"W_q has shape {W_q.shape} and W_k has shape {W_k.shape}: they need the same d_k")


def band_mask(N, width):
    """Mask for truncated self-attention: query i sees only keys within ``width`` of it.

    Parameters
    ----------
    N : int
        Sequence length.
    width : int
        How far each query looks to either side (0 = only itself).

    Returns
    -------
    (N, N) bool ndarray
        ``mask[j, i]`` is True when |i - j| <= width.
    """
    N, width = check_count("N", N, 1), check_count("width", width, 0)
    j, i = np.indices((N, N))
    return np.abs(i - j) <= width


def causal_mask(N):
    """Mask in which query i sees only keys j <= i (the decoder's masked attention).

    Returns
    -------
    (N, N) bool ndarray
        ``mask[j, i]`` is True when j <= i (upper triangle, key rows and query columns).
    """
    N = check_count("N", N, 1)
    j, i = np.indices((N, N))
    return j <= i


def key_padding_mask(is_real):
    """Mask that hides pad vectors as keys: no query attends to a filler position.

    Parameters
    ----------
    is_real : (N,) bool array_like
        ``is_real[j]`` is True where position j holds a real vector and False where it
        holds padding (the filler that brings a batch to one length).

    Returns
    -------
    (N, N) bool ndarray
        ``mask[j, i] = is_real[j]``: every query i, pads included, may look at the real
        keys only, so a pad key gets weight exactly 0.

    Examples
    --------
    >>> key_padding_mask([True, True, False]).astype(int)
    array([[1, 1, 1],
           [1, 1, 1],
           [0, 0, 0]])
    """
    is_real = np.asarray(is_real)
    if is_real.dtype != bool or is_real.ndim != 1 or is_real.size == 0:
        raise ValueError(
            f"is_real must be a non-empty 1-d boolean array (True = real position), got dtype {is_real.dtype} "
            f"and shape {is_real.shape}"
        )
    if not is_real.any():
        raise ValueError(
            f"is_real has no True entry among its {is_real.size} positions: every query would attend to no key"
        )
    return np.repeat(is_real[:, None], is_real.size, axis=1)  # (N,) -> (N, N), column i is is_real for every query i
