"""The row convention of PyTorch and most papers, as a bridge to the lecture's columns.

The lecture stores a sequence as columns, ``I`` of shape (d, N). PyTorch and most
papers store it as rows, ``X = I^T`` of shape (N, d), and multiply the weights from the
right::

    Q_r = X W_q^T,  K_r = X W_k^T,  V_r = X W_v^T        (N, d_k), (N, d_k), (N, d_v)
    S = Q_r K_r^T                                        S[i, j] = q^i . k^j
    P = softmax of each ROW of S                         P[i, j] = alpha'_{i,j}
    Y = P V_r                                            Y[i, :] = b^i

The weight matrices are the very same arrays as in :func:`attn.self_attention` (a
``torch.nn.Linear`` also stores its weight as (out, in) and computes ``x @ W.T``).
Everything is the transpose of the column form: ``S = A^T``, ``P = A'^T``, ``Y = O^T``.
Only numpy is needed.
"""

import numpy as np

from ._checks import as_array, check_count, check_scale
from .core import softmax


def row_form_attention(X, W_q, W_k, W_v, *, scale=1.0):
    """Self-attention with vectors as rows, the way PyTorch writes it.

    Parameters
    ----------
    X : (N, d) ndarray
        The input sequence; row i is a^i (so ``X = I.T``).
    W_q, W_k : (d_k, d) ndarray
        Query and key projections, the same arrays the column form uses.
    W_v : (d_v, d) ndarray
        Value projection.
    scale : float
        Multiplies the scores before the softmax (1.0 in the lecture, 1/sqrt(d_k) in
        the Transformer).

    Returns
    -------
    Y : (N, d_v) ndarray
        Row i is b^i. Equal to ``O.T`` of :func:`attn.self_attention`.
    P : (N, N) ndarray
        P[i, j] = alpha'_{i,j}, how much query i attends to key j. Each ROW sums to 1;
        ``P`` equals ``A_prime.T``.

    Notes
    -----
    Y = softmax_rows(scale * (X W_q^T)(X W_k^T)^T) (X W_v^T).

    Examples
    --------
    >>> Y, P = row_form_attention(np.eye(2), np.eye(2), np.eye(2), np.eye(2))
    >>> P.sum(axis=1)
    array([1., 1.])
    """
    X = as_array("X", X, ndim=2)
    W_q = as_array("W_q", W_q, ndim=2)
    W_k = as_array("W_k", W_k, ndim=2)
    W_v = as_array("W_v", W_v, ndim=2)
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X has shape {X.shape}: it needs at least one row (N > 0) and one column (d > 0)")
    d = X.shape[1]
    for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
        if W.shape[1] != d:
            raise ValueError(
                f"{name} has shape {W.shape} but X has shape {X.shape}: {name} needs {d} columns, "
                f"one per column of X (X @ {name}.T needs {name}.shape[1] == X.shape[1])"
            )
    if W_q.shape[0] != W_k.shape[0]:
        raise ValueError(
            f"W_q has shape {W_q.shape} and W_k has shape {W_k.shape}: queries and keys need the same d_k"
        )
    scale = check_scale(scale)
    Q_r = X @ W_q.T  # (N, d) x (d, d_k) -> (N, d_k)
    K_r = X @ W_k.T
    V_r = X @ W_v.T  # (N, d_v)
    S = scale * (Q_r @ K_r.T)  # (N, d_k) x (d_k, N) -> (N, N), S[i, j] = q^i . k^j
    P = softmax(S, axis=1)  # each row is one query's weights
    return P @ V_r, P  # (N, N) x (N, d_v) -> (N, d_v)


def parameter_count(d, d_k, d_v):
    """Number of learned numbers in one self-attention layer: W_q, W_k and W_v.

    Parameters
    ----------
    d : int
        Size of each input vector a^i.
    d_k : int
        Size of queries and keys.
    d_v : int
        Size of values (and of each output b^i).

    Returns
    -------
    int
        ``d_k * d + d_k * d + d_v * d``. The sequence length N does not appear:
        the same three matrices serve a sequence of any length.

    Examples
    --------
    >>> parameter_count(4, 2, 3)
    28
    """
    d, d_k, d_v = check_count("d", d, 1), check_count("d_k", d_k, 1), check_count("d_v", d_v, 1)
    return 2 * d_k * d + d_v * d
