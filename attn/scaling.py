"""From scores to weights: softmax or ReLU, and why the Transformer scales by 1/sqrt(d_k).

The lecture turns the scores alpha_{1,i} into weights alpha'_{1,i} with a softmax and
mentions that a ReLU can take its place (part 上, slide 17). Its slides use the plain
dot product; the Transformer multiplies the scores by 1/sqrt(d_k) first. This module
holds the small numerics chapter 3 needs to compare these choices. Only numpy.
"""

import numpy as np

from ._checks import as_array, check_count, check_scale
from .core import softmax


def relu_weights(alpha):
    """Weights from scores by a ReLU instead of a softmax: max(alpha, 0).

    Parameters
    ----------
    alpha : (N,) or (N, M) array_like
        Scores; for a matrix, column i holds query i's scores (like ``A``).

    Returns
    -------
    ndarray
        Same shape as ``alpha``. Negative scores become exactly 0, the others are
        kept as they are, so unlike softmax weights they need not sum to 1.

    Examples
    --------
    >>> relu_weights([2.0, -1.0, 0.5])
    array([2. , 0. , 0.5])
    """
    alpha = as_array("alpha", alpha)
    if alpha.ndim not in (1, 2):
        raise ValueError(f"alpha must be a vector (N,) or a score matrix (N, M), got shape {alpha.shape}")
    return np.maximum(alpha, 0.0)


def softmax_jacobian(p):
    """Jacobian of the softmax at its output p: d p_j / d x_l = p_j (delta_jl - p_l).

    Parameters
    ----------
    p : (N,) array_like
        A softmax output: non-negative entries summing to 1.

    Returns
    -------
    J : (N, N) ndarray
        ``J[j, l]`` is how much weight j moves when score l moves. When one weight is
        close to 1 and the others close to 0, every entry is close to 0: the softmax
        is saturated and passes almost no gradient back to the scores.

    Examples
    --------
    >>> softmax_jacobian([0.5, 0.5])
    array([[ 0.25, -0.25],
           [-0.25,  0.25]])
    """
    p = as_array("p", p, ndim=1)
    if p.shape[0] == 0 or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError(f"p must be a non-empty probability vector (entries >= 0, sum 1), got {p}")
    return np.diag(p) - np.outer(p, p)  # (N, N)


def saturation_experiment(d_ks, N=8, trials=200, *, scaled=False, seed=0):
    """How peaked the softmax of random dot products gets as d_k grows.

    For each d_k, draw ``trials`` queries q (d_k,) and key sets K (d_k, N) whose entries
    are independent standard normal (unit variance, as well-initialised layers give),
    score every key by q . k^j (times 1/sqrt(d_k) when ``scaled``), and apply the softmax.

    Parameters
    ----------
    d_ks : sequence of int
        The key sizes d_k to try, each >= 1.
    N : int
        Number of keys each query is compared with.
    trials : int
        Random queries per d_k.
    scaled : bool
        False: the lecture's plain dot product. True: the Transformer's q . k / sqrt(d_k).
    seed : int
        Seed of the random generator, so results are reproducible.

    Returns
    -------
    dict of (len(d_ks),) ndarrays
        ``"d_k"``; ``"score_std"``, the standard deviation of the scores (about
        sqrt(d_k) plain, about 1 scaled); ``"max_weight"``, the mean largest softmax
        weight (1 means one key takes everything); ``"jacobian_norm"``, the mean
        Frobenius norm of :func:`softmax_jacobian` (0 means no gradient flows back).

    Notes
    -----
    With independent unit-variance entries, q . k is a sum of d_k products of variance 1,
    so its variance is d_k. Dividing by sqrt(d_k) brings it back to 1 for every d_k.
    """
    d_ks = np.asarray(d_ks)
    if d_ks.ndim != 1 or d_ks.size == 0 or d_ks.dtype.kind not in "iu" or np.any(d_ks < 1):
        raise ValueError(f"d_ks must be a non-empty sequence of integers >= 1, got {d_ks!r}")
    N, trials = check_count("N", N, 1), check_count("trials", trials, 1)
    rng = np.random.default_rng(seed)
    stds, peaks, grads = [], [], []
    for d_k in d_ks:
        scale = check_scale(1.0 / np.sqrt(d_k) if scaled else 1.0)
        q = rng.standard_normal((trials, int(d_k)))  # one query per trial
        K = rng.standard_normal((trials, int(d_k), N))  # N keys (columns) per trial
        alpha = scale * np.einsum("td,tdn->tn", q, K)  # (trials, N): q . k^j
        p = softmax(alpha, axis=1)
        stds.append(alpha.std())
        peaks.append(p.max(axis=1).mean())
        grads.append(np.mean([np.linalg.norm(softmax_jacobian(row)) for row in p]))
    return {
        "d_k": d_ks.astype(int),
        "score_std": np.array(stds),
        "max_weight": np.array(peaks),
        "jacobian_norm": np.array(grads),
    }
