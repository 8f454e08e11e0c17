"""Linear attention: the scores exp(k . q) become phi(k) . phi(q), so the same causal attention runs in
parallel (:func:`linear_attention`) or as a recurrence with a state of fixed size
(:func:`linear_attention_recurrent`): "Transformers are RNNs" (Katharopoulos et al. 2020).

Lecture notation: vectors are columns; ``A_prime[j, i]`` is how much query i attends to key j.
"""

import numpy as np

from ._checks import as_array, check_qkv


def elu_feature_map(x):
    """phi(x) = elu(x) + 1, the feature map of Katharopoulos et al. (2020); positive everywhere.

    Parameters
    ----------
    x : (...) ndarray

    Returns
    -------
    ndarray
        x + 1 where x > 0 and exp(x) where x <= 0; same shape as x.
    """
    x = as_array("x", x)
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def _check_self_attention_qkv(Q, K, V):
    """Q, K (d_k, N) and V (d_v, N): one sequence attending to itself, every query a key."""
    Q, K, V = check_qkv(Q, K, V)
    if Q.ndim != 2 or Q.shape != K.shape:
        raise ValueError(f"Q has shape {Q.shape} and K has shape {K.shape}: self-attention needs both (d_k, N)")
    return Q, K, V


def linear_attention(Q, K, V, *, causal=False):
    """Linear attention in the lecture's matrix form: the scores exp(k . q) become phi(k) . phi(q).

    Parameters
    ----------
    Q, K : (d_k, N) ndarray
        Queries and keys as columns.
    V : (d_v, N) ndarray
        Values as columns.
    causal : bool
        If True, query i only sees keys j <= i (as a decoder does).

    Returns
    -------
    O : (d_v, N) ndarray
        Column i is b^i = sum_j alpha'_{i,j} v^j.
    A_prime : (N, N) ndarray
        ``A_prime[j, i] = phi(k^j) . phi(q^i) / sum_l phi(k^l) . phi(q^i)`` (sums over j, l <= i if
        causal); columns sum to 1.

    Notes
    -----
    All N columns are computed at once, as in training. :func:`linear_attention_recurrent` gives
    the causal version's same outputs one step at a time.
    """
    Q, K, V = _check_self_attention_qkv(Q, K, V)
    A = elu_feature_map(K).T @ elu_feature_map(Q)  # (N, d_k) x (d_k, N) -> (N, N), all entries > 0
    if causal:
        j, i = np.indices(A.shape)
        A = np.where(j <= i, A, 0.0)
    A_prime = A / A.sum(axis=0, keepdims=True)
    return V @ A_prime, A_prime  # (d_v, N) x (N, N) -> (d_v, N)


def linear_attention_step(S, z, q, k, v):
    """One step of causal linear attention as a recurrence with the state (S, z).

    Parameters
    ----------
    S : (d_v, d_k) ndarray
        Running sum of v^j phi(k^j)^T over the steps so far.
    z : (d_k,) ndarray
        Running sum of phi(k^j).
    q, k : (d_k,) ndarray
        This step's query and key.
    v : (d_v,) ndarray
        This step's value.

    Returns
    -------
    S, z : the updated state
        S + v phi(k)^T and z + phi(k).
    b : (d_v,) ndarray
        This step's output S phi(q) / (z . phi(q)), with the updated state.
    """
    S = as_array("S", S, ndim=2)
    z, q, k, v = (as_array(n, x, ndim=1) for n, x in (("z", z), ("q", q), ("k", k), ("v", v)))
    d_v, d_k = S.shape
    if z.shape != (d_k,) or q.shape != (d_k,) or k.shape != (d_k,) or v.shape != (d_v,):
        raise ValueError(
            f"S {S.shape}, z {z.shape}, q {q.shape}, k {k.shape}, v {v.shape}: with S of shape (d_v, d_k) = "
            f"{S.shape}, z, q and k must be ({d_k},) and v ({d_v},)"
        )
    return _linear_step(S, z, q, k, v)


def _linear_step(S, z, q, k, v):
    phi_k, phi_q = elu_feature_map(k), elu_feature_map(q)
    S = S + np.outer(v, phi_k)  # (d_v, 1) x (1, d_k) -> (d_v, d_k)
    z = z + phi_k
    return S, z, (S @ phi_q) / (z @ phi_q)


def linear_attention_recurrent(Q, K, V):
    """Causal linear attention run as an RNN: one step per position, a state of fixed size.

    Parameters
    ----------
    Q, K : (d_k, N) ndarray
    V : (d_v, N) ndarray

    Returns
    -------
    O : (d_v, N) ndarray
        Equal to ``linear_attention(Q, K, V, causal=True)[0]``.
    S : (d_v, d_k) ndarray
    z : (d_k,) ndarray
        The state after the last step: its size does not grow with N.

    Notes
    -----
    S_i = S_{i-1} + v^i phi(k^i)^T, z_i = z_{i-1} + phi(k^i), b^i = S_i phi(q^i) / (z_i . phi(q^i))
    (Katharopoulos et al. 2020, in column notation).
    """
    Q, K, V = _check_self_attention_qkv(Q, K, V)
    dtype = np.result_type(Q, K, V)
    S, z = np.zeros((V.shape[0], K.shape[0]), dtype), np.zeros(K.shape[0], dtype)
    O = np.empty((V.shape[0], Q.shape[1]), dtype)
    for i in range(Q.shape[1]):
        S, z, O[:, i] = _linear_step(S, z, Q[:, i], K[:, i], V[:, i])
    return O, S, z
