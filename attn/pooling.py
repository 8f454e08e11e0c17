"""Pooling: N vectors in, one vector out (chapter 11), each with its backward function.

Layers in the style of :mod:`attn.backprop`, for a padded batch: ``X`` is (B, f, N), B
sequences of N columns, and ``is_real`` (B, N) is True at the real columns and False at the
padding that brings every sequence of the batch to length N. Both poolings count the real
columns only, so the amount of padding changes nothing.

* **Mean pooling** averages the real columns: ``pooled[b] = sum_i is_real[b, i] X[b, :, i] / n_b``.
* **Attention pooling** is self-attention with one learned query, the chapter's q^pool: the
  scores ``gamma_i = scale * k^{i,pool} . q^pool`` of the keys (one per column) go through a
  softmax over the real columns, and the pooled vector is the weighted sum of the columns of
  ``V``, ``sum_i gamma'_i V[:, i]``: chapter 3's b^1 with a query that is learned instead of
  computed from a^1.
"""

import numpy as np

from ._checks import as_array
from .backprop import _softmax_backward, softmax_columns


def _check_real(is_real, B, N, name="X"):
    is_real = np.asarray(is_real)
    if is_real.dtype != bool or is_real.shape != (B, N):
        raise ValueError(f"is_real must be a bool array of shape (B, N) = {(B, N)} for {name}, got dtype "
                         f"{is_real.dtype} and shape {is_real.shape}")
    if not is_real.any(axis=1).all():
        raise ValueError(f"sequence {int(np.flatnonzero(~is_real.any(axis=1))[0])} has no real column: nothing to "
                         "pool")
    return is_real


def mean_pool(X, is_real):
    """Average of the real columns of every sequence.

    Parameters
    ----------
    X : (B, f, N) ndarray
    is_real : (B, N) bool ndarray
        True at real columns, False at padding; at least one True per sequence.

    Returns
    -------
    pooled : (B, f) ndarray
        ``pooled[b]`` is the mean of the columns i of ``X[b]`` with ``is_real[b, i]``.

    Examples
    --------
    >>> X = np.array([[[1.0, 3.0, 99.0]]])  # one sequence, f = 1, the last column is padding
    >>> mean_pool(X, np.array([[True, True, False]]))
    array([[2.]])
    """
    X = as_array("X", X, ndim=3)
    return _mean_pool(X, _check_real(is_real, X.shape[0], X.shape[2]))


def _mean_pool(X, is_real):
    weights = is_real / is_real.sum(axis=1, keepdims=True)  # (B, N): 1 / n_b at real columns, 0 at padding
    return np.einsum("bfn,bn->bf", X, weights)


def mean_pool_backward(d_pooled, is_real):
    """Gradient through :func:`mean_pool`.

    Parameters
    ----------
    d_pooled : (B, f) ndarray
    is_real : (B, N) bool ndarray

    Returns
    -------
    dX : (B, f, N) ndarray
        ``d_pooled[b] / n_b`` in every real column, 0 in every pad column.
    """
    d_pooled = as_array("d_pooled", d_pooled, ndim=2)
    is_real = np.asarray(is_real)
    if is_real.ndim != 2 or is_real.shape[0] != d_pooled.shape[0]:
        raise ValueError(f"is_real has shape {is_real.shape} but d_pooled has shape {d_pooled.shape}: both need B rows")
    return _mean_pool_backward(d_pooled, _check_real(is_real, *is_real.shape, name="d_pooled"))


def _mean_pool_backward(d_pooled, is_real):
    weights = is_real / is_real.sum(axis=1, keepdims=True)
    return d_pooled[:, :, None] * weights[:, None, :]


def attention_pool(V, K, q, is_real, *, scale=1.0):
    """Attention pooling: one learned query attends over the real columns.

    Parameters
    ----------
    V : (B, f, N) ndarray
        The columns to pool (the values of this one query).
    K : (B, d_k, N) ndarray
        Their keys, one column each (the chapter's k^{i,pool}).
    q : (d_k,) ndarray
        The learned query (the chapter's q^pool), the same for every sequence.
    is_real : (B, N) bool ndarray
    scale : float
        Multiplies the scores (1 / sqrt(d_k) as in the Transformer).

    Returns
    -------
    pooled : (B, f) ndarray
        ``sum_i gamma'[b, i] V[b, :, i]``.
    weights : (B, N) ndarray
        The weights gamma': ``weights[b, i]`` = softmax over the real i of ``scale * K[b, :, i] . q``;
        exactly 0 at padding.
    cache : tuple
        For :func:`attention_pool_backward`.

    Notes
    -----
    With q = 0 every real column gets the same weight 1 / n_b: attention pooling starts as mean
    pooling when q starts near 0.
    """
    V = as_array("V", V, ndim=3)
    K = as_array("K", K, ndim=3)
    q = as_array("q", q, ndim=1)
    if K.shape[0] != V.shape[0] or K.shape[2] != V.shape[2] or K.shape[1] != q.shape[0]:
        raise ValueError(f"V {V.shape}, K {K.shape} and q {q.shape} do not fit: V and K need the same B and N, "
                         "K as many rows as q has entries")
    return _attention_pool(V, K, q, _check_real(is_real, V.shape[0], V.shape[2], name="V"), scale)


def _attention_pool(V, K, q, is_real, scale):
    scores = scale * np.einsum("bkn,k->bn", K, q)[:, :, None]  # (B, N, 1): gamma, one column per sequence
    scores = np.where(is_real[:, :, None], scores, -np.inf)
    weights = softmax_columns(scores)  # (B, N, 1): gamma', each column sums to 1 over the real keys
    pooled = (V @ weights)[:, :, 0]  # (B, f, N) x (B, N, 1) -> (B, f)
    return pooled, weights[:, :, 0], (V, K, q, weights, scale)


def attention_pool_backward(d_pooled, cache):
    """Gradient through :func:`attention_pool`.

    Parameters
    ----------
    d_pooled : (B, f) ndarray
    cache : tuple
        The third result of :func:`attention_pool`.

    Returns
    -------
    dV : (B, f, N) ndarray
    dK : (B, d_k, N) ndarray
    dq : (d_k,) ndarray

    Notes
    -----
    pooled = V gamma' gives dV = d_pooled gamma'^T and d gamma' = V^T d_pooled; the column
    softmax gives d gamma (the same function as for self-attention); gamma = scale K^T q gives
    dK = scale q d gamma^T and dq = scale sum_b K d gamma.
    """
    V, K, q, weights, scale = cache
    if d_pooled.shape != V.shape[:2]:
        raise ValueError(f"d_pooled has shape {d_pooled.shape}, expected {V.shape[:2]}")
    dV = d_pooled[:, :, None] * weights.transpose(0, 2, 1)  # (B, f, 1) x (B, 1, N) -> (B, f, N)
    d_weights = V.transpose(0, 2, 1) @ d_pooled[:, :, None]  # (B, N, f) x (B, f, 1) -> (B, N, 1)
    d_scores = scale * _softmax_backward(weights, d_weights)[:, :, 0]  # (B, N); 0 at padding, where gamma' = 0
    dK = q[None, :, None] * d_scores[:, None, :]  # (B, d_k, N)
    dq = np.einsum("bkn,bn->k", K, d_scores)
    return dV, dK, dq
