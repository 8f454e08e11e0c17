"""Checkers for the exercises of chapter 4 (self-attention as four matrix products).

Each checker raises ``AssertionError`` with a hint when the answer is wrong and returns a
short message when it is right.
"""

import numpy as np

from ..core import self_attention, softmax
from ..rows import count_parameters
from ._common import call_student


def _cases():
    """Random (I, W_q, W_k, W_v) of several shapes, d_k != d_v and N != d on purpose."""
    rng = np.random.default_rng(4)
    for d, d_k, d_v, N in ((3, 2, 4, 5), (4, 3, 2, 1), (2, 5, 3, 7)):
        yield (rng.normal(size=(d, N)), rng.normal(size=(d_k, d)), rng.normal(size=(d_k, d)),
               rng.normal(size=(d_v, d)))


def check_matrix_form(attention):
    """Check ``attention(I, W_q, W_k, W_v) -> (O, A_prime)`` written as matrix products.

    Returns
    -------
    str
        A confirmation when O and A_prime equal :func:`attn.self_attention`'s on every case.
    """
    for I, W_q, W_k, W_v in _cases():
        result = call_student(attention, "attention", I, W_q, W_k, W_v)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise AssertionError("attention should return the pair (O, A_prime)")
        O, A_prime = (np.asarray(x, dtype=float) for x in result)
        O_ref, A_ref = self_attention(I, W_q, W_k, W_v)
        N = I.shape[1]
        if A_prime.shape != (N, N):
            raise AssertionError(f"A_prime should be (N, N) = ({N}, {N}), got {A_prime.shape}")
        if not np.allclose(A_prime, A_ref, rtol=1e-6):
            A = (W_k @ I).T @ (W_q @ I)
            if np.allclose(A_prime, softmax(A, axis=1), rtol=1e-6):
                raise AssertionError(
                    "Your softmax runs along the rows: in the column form each COLUMN (one query) sums to 1."
                )
            if np.allclose(A_prime, A_ref.T, rtol=1e-6):
                raise AssertionError("A_prime is transposed: A = K.T @ Q, so rows are keys and columns are queries.")
            raise AssertionError("A_prime is wrong: Q = W_q @ I, K = W_k @ I, A = K.T @ Q, softmax of each column.")
        if O.shape != O_ref.shape:
            raise AssertionError(f"O should be (d_v, N) = {O_ref.shape}, got {O.shape}: O = V @ A_prime")
        if not np.allclose(O, O_ref, rtol=1e-6):
            raise AssertionError("A_prime is right but O is not: O = V @ A_prime with V = W_v @ I.")
    return "Right: matrix products and a column softmax give attn.self_attention's O and A_prime."


def check_parameter_count(n_128, n_1000):
    """Check the number of learned numbers for d = 80, d_k = d_v = 80, at N = 128 and N = 1000.

    Parameters
    ----------
    n_128, n_1000 : int
        The student's counts for sequences of 128 and of 1000 vectors.

    Returns
    -------
    str
        A confirmation when both counts are right.
    """
    expected = count_parameters(80, 80, 80)
    try:
        n_128, n_1000 = int(n_128), int(n_1000)
    except (TypeError, ValueError):
        raise AssertionError(f"give two whole numbers, got {n_128!r} and {n_1000!r}") from None
    if n_128 != n_1000:
        raise AssertionError("The counts differ, yet W_q, W_k and W_v have no axis of length N.")
    if n_128 == expected:
        return f"Right: 3 * 80 * 80 = {expected} for any N; only A (N x N) grows, and it is computed, not learned."
    if n_128 in (128 * 128, 1000 * 1000):
        raise AssertionError(
            "N x N is the size of the attention matrix, which is computed from the input, not learned."
        )
    if n_128 == 80 * 80:
        raise AssertionError("That is one matrix: there are three, W_q, W_k and W_v.")
    raise AssertionError("Count the entries of W_q (d_k x d), W_k (d_k x d) and W_v (d_v x d).")


def check_row_form(row_attention):
    """Check ``row_attention(X, W_q, W_k, W_v) -> Y`` written in the row convention (X = I.T).

    Returns
    -------
    str
        A confirmation when Y equals ``O.T`` of :func:`attn.self_attention` on every case.
    """
    for I, W_q, W_k, W_v in _cases():
        X = I.T
        Y = np.asarray(call_student(row_attention, "row_attention", X, W_q, W_k, W_v), dtype=float)
        O_ref, _ = self_attention(I, W_q, W_k, W_v)
        if Y.shape != O_ref.T.shape:
            if Y.shape == O_ref.shape:
                raise AssertionError(f"Y has the column-form shape {Y.shape}: in the row form row i is b^i, (N, d_v).")
            raise AssertionError(f"Y should be (N, d_v) = {O_ref.T.shape}, got {Y.shape}")
        if not np.allclose(Y, O_ref.T, rtol=1e-6):
            Q_r, K_r, V_r = X @ W_q.T, X @ W_k.T, X @ W_v.T
            if np.allclose(Y, softmax(Q_r @ K_r.T, axis=0) @ V_r, rtol=1e-6):
                raise AssertionError(
                    "Your softmax runs down the columns: in the row form each ROW (one query) sums to 1."
                )
            raise AssertionError(
                "Y is wrong: Q_r = X @ W_q.T, K_r = X @ W_k.T, softmax of each row of Q_r @ K_r.T, times V_r."
            )
    return "Right: your row form gives O.T, the lecture's outputs as rows."
