"""Checkers for the exercises of chapter 3 (dot-product attention, b^1 step by step).

Each checker raises ``AssertionError`` with a hint when the answer is wrong and returns a
short message when it is right.
"""

import numpy as np

from ..core import self_attention, softmax


def b1_problem():
    """The small sequence of exercise ``ex-ch03-b1``, small enough to work through by hand.

    Returns
    -------
    I : (2, 3) ndarray
        Columns a^1 = (1, 0), a^2 = (0, 1), a^3 = (1, 1).
    W_q, W_k, W_v : (2, 2) ndarray
        W_q = diag(1, 2), W_k swaps the two entries, W_v = [[1, 1], [1, -1]].
    """
    I = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    W_q = np.array([[1.0, 0.0], [0.0, 2.0]])
    W_k = np.array([[0.0, 1.0], [1.0, 0.0]])
    W_v = np.array([[1.0, 1.0], [1.0, -1.0]])
    return I, W_q, W_k, W_v


def _answer_vector(name, value, size):
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise AssertionError(f"{name} should be {size} numbers, got {value!r}") from None
    if arr.shape != (size,):
        raise AssertionError(f"{name} should have shape ({size},), got shape {arr.shape}")
    return arr


def check_b1(b1):
    """Check b^1 for :func:`b1_problem`.

    Parameters
    ----------
    b1 : (2,) array_like
        The student's b^1 = sum_i alpha'_{1,i} v^i.

    Returns
    -------
    str
        A confirmation when ``b1`` is right.
    """
    b1 = _answer_vector("b1", b1, 2)
    I, W_q, W_k, W_v = b1_problem()
    V = W_v @ I
    alpha = (W_k @ I).T @ (W_q @ I[:, 0])  # alpha_{1,i} = q^1 . k^i
    expected = V @ softmax(alpha)
    if np.allclose(b1, expected, atol=1e-3):
        return f"Right: b^1 = {np.round(expected, 4)}."
    if np.allclose(b1, V @ alpha, atol=1e-3):
        raise AssertionError("You weighted the v^i by the raw scores alpha_{1,i}: apply the softmax first.")
    if np.allclose(b1, V.mean(axis=1), atol=1e-3):
        raise AssertionError("That is the plain average of the v^i: weight each v^i by its alpha'_{1,i}.")
    wrong_q = V @ softmax((W_q @ I).T @ (W_k @ I[:, 0]))
    if np.allclose(b1, wrong_q, atol=1e-3):
        raise AssertionError("You swapped the roles: the query is q^1 = W_q a^1, the keys are k^i = W_k a^i.")
    if np.allclose(b1, softmax(alpha) @ I.T, atol=1e-3):
        raise AssertionError("You summed the a^i: the weighted sum is over the values v^i = W_v a^i.")
    raise AssertionError(
        "Not yet. Steps: q^1 = W_q a^1; k^i = W_k a^i for i = 1, 2, 3 (a^1 included); "
        "alpha_{1,i} = q^1 . k^i; alpha' = softmax(alpha); b^1 = sum_i alpha'_{1,i} W_v a^i."
    )


def check_output_column(b_i):
    """Check a function ``b_i(I, W_q, W_k, W_v, i)`` that returns b^i (0-based i) with a loop.

    It is called on several random sequences of different sizes and every position i, and
    compared with column i of :func:`attn.self_attention`.

    Returns
    -------
    str
        A confirmation when every case matches.
    """
    if not callable(b_i):
        raise AssertionError(f"pass your function itself, got {type(b_i).__name__}")
    rng = np.random.default_rng(3)
    for d, d_k, d_v, N in ((3, 2, 4, 5), (2, 3, 2, 1), (4, 4, 1, 6)):
        I = rng.normal(size=(d, N))
        W_q, W_k, W_v = rng.normal(size=(d_k, d)), rng.normal(size=(d_k, d)), rng.normal(size=(d_v, d))
        O, A_prime = self_attention(I, W_q, W_k, W_v)
        for i in range(N):
            try:
                got = b_i(I, W_q, W_k, W_v, i)
            except Exception as exc:
                raise AssertionError(f"b_i raised {type(exc).__name__}: {exc} (d={d}, N={N}, i={i})") from exc
            if got is None:
                raise AssertionError("b_i returned None: end it with `return` and the vector b^i")
            got = np.asarray(got, dtype=float)
            if got.shape != (d_v,):
                raise AssertionError(f"b^{i + 1} should have shape (d_v,) = ({d_v},), got {got.shape}")
            if not np.allclose(got, O[:, i], rtol=1e-6, atol=1e-9):
                A = (W_k @ I).T @ (W_q @ I)
                if np.allclose(got, (W_v @ I) @ softmax(A[i, :]), rtol=1e-6):
                    raise AssertionError(
                        "You used q^j . k^i (row i of A): query i's scores are q^i . k^j for every key j."
                    )
                raise AssertionError(
                    f"b^{i + 1} is wrong for d={d}, d_k={d_k}, d_v={d_v}, N={N}: expected {O[:, i]}, got {got}"
                )
    return "Right: your b^i equals column i of attn.self_attention for every i."


def check_scale(scale):
    """Check the scale that gives unit-variance scores when d_k = 256.

    Parameters
    ----------
    scale : float
        The number the dot products q . k are multiplied by.

    Returns
    -------
    str
        A confirmation when ``scale`` is 1/16.
    """
    try:
        scale = float(scale)
    except (TypeError, ValueError):
        raise AssertionError(f"scale should be one number, got {scale!r}") from None
    if np.isclose(scale, 1 / 16):
        return "Right: 1/sqrt(256) = 1/16 turns a standard deviation of 16 into 1."
    if np.isclose(scale, 1 / 256):
        raise AssertionError(
            "1/256 makes the variance 256 / 256**2: multiplying by c multiplies the variance by c**2."
        )
    if np.isclose(scale, 16) or np.isclose(scale, 256):
        raise AssertionError("The scores are too large already: the scale must shrink them, so it is below 1.")
    raise AssertionError("q . k sums 256 products of variance 1, so its variance is 256: what c gives c**2 * 256 = 1?")
