"""Checkers for the exercises of chapter 3 (dot-product attention, b^1 step by step).

Each checker raises ``AssertionError`` with a hint when the answer is wrong and returns a
short message when it is right.
"""

import tracemalloc

import numpy as np

from ..core import self_attention, softmax
from ._common import call_logged, call_student

#: How close each entry of b^1 must be to the exact value.
B1_TOLERANCE = 1e-3


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
        The student's b^1 = sum_i alpha'_{1,i} v^i; each entry must be within
        ``B1_TOLERANCE`` (0.001) of the exact value.

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
    if np.allclose(b1, expected, rtol=0, atol=B1_TOLERANCE):
        return f"Right: b^1 = {np.round(expected, 4)}."
    if np.allclose(b1, expected, rtol=0, atol=0.01):
        raise AssertionError(
            f"Close: {b1.tolist()} is right to 2 decimals, but each entry must be within {B1_TOLERANCE} of b^1, "
            "so 3 decimals: keep e = 2.71828 and the weights unrounded until the last step."
        )
    if np.allclose(b1, V @ alpha, atol=1e-3):
        raise AssertionError("You weighted the v^i by the raw scores alpha_{1,i}: apply the softmax first.")
    if np.allclose(b1, V @ softmax(alpha / np.sqrt(2)), atol=1e-3):
        raise AssertionError(
            "You divided the scores by sqrt(d_k) = sqrt(2): this exercise uses the lecture's scores q^1 . k^i as they are."
        )
    if np.allclose(b1, V.mean(axis=1), atol=1e-3):
        raise AssertionError("That is the plain average of the v^i: weight each v^i by its alpha'_{1,i}.")
    wrong_q = V @ softmax((W_q @ I).T @ (W_k @ I[:, 0]))
    if np.allclose(b1, wrong_q, atol=1e-3):
        raise AssertionError("You swapped the roles: the query is q^1 = W_q a^1, the keys are k^i = W_k a^i.")
    if np.allclose(b1, softmax(alpha) @ I.T, atol=1e-3):
        raise AssertionError("You summed the a^i: the weighted sum is over the values v^i = W_v a^i.")
    raise AssertionError(
        f"Steps: q^1 = W_q a^1; k^i = W_k a^i for i = 1, 2, 3 (a^1 included); "
        f"alpha_{{1,i}} = q^1 . k^i; alpha' = softmax(alpha); b^1 = sum_i alpha'_{{1,i}} W_v a^i. "
        f"Each entry must be within {B1_TOLERANCE} of the exact value."
    )


def _column_hint(got, I, W_q, W_k, W_v, i):
    """The hint for a wrong b^i: which common slip gives ``got``, if one does."""
    V = W_v @ I
    A = (W_k @ I).T @ (W_q @ I)  # A[j, i] = k^j . q^i
    d_k, N = W_q.shape[0], I.shape[1]
    close = lambda x: np.allclose(got, x, rtol=1e-6, atol=1e-9)  # noqa: E731
    if close(V @ A[:, i]):
        return "You weighted the values by the raw scores alpha_{i,j}: apply the softmax to them first."
    if close(V @ softmax(A[:, i] / np.sqrt(d_k))):
        return (f"You divided the scores by sqrt(d_k) = sqrt({d_k}): attn.self_attention, like the lecture's b^1, "
                "uses q^i . k^j as they are (its scale is 1 unless you pass one).")
    if close(V @ softmax(A[i, :])):
        return "You used q^j . k^i (row i of A): query i's scores are q^i . k^j for every key j."
    if close(V.mean(axis=1)):
        return "That is the plain average of the values: weight each v^j by alpha'_{i,j}."
    O, _ = self_attention(I, W_q, W_k, W_v)
    for other in (i - 1, i + 1):
        if 0 <= other < N and close(O[:, other]):
            return (f"That is b^{other + 1}, not b^{i + 1}: i counts from 0 here, so b_i(..., {i}) is b^{i + 1}, "
                    f"the output for the column I[:, {i}].")
    return (f"b^{i + 1} is wrong for d={I.shape[0]}, d_k={d_k}, d_v={V.shape[0]}, N={N}: "
            f"expected {O[:, i]}, got {got}")


class _Watched(np.ndarray):
    """An array that records the shape of every array numpy computes from it.

    The reader's ``b_i`` gets ``I`` as a ``_Watched`` view: the ufuncs (``@``, ``np.exp``, ``.sum()`` ...)
    and the numpy functions (``np.einsum``, ``np.stack`` ...) applied to it, or to arrays computed from it,
    return ``_Watched`` arrays too, and append the shape of each result to :attr:`shapes`. A plain copy
    such as ``np.asarray(I)`` or ``I.tolist()`` is not followed.
    """

    shapes = []

    @classmethod
    def _watch(cls, result):
        if isinstance(result, tuple):
            return tuple(cls._watch(r) for r in result)
        if isinstance(result, list):
            return [cls._watch(r) for r in result]
        if isinstance(result, np.ndarray):
            cls.shapes.append(result.shape)
            return result.view(cls) if result.ndim else result[()]
        return result

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        plain = tuple(x.view(np.ndarray) if isinstance(x, _Watched) else x for x in inputs)
        if out is not None:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, _Watched) else o for o in out)
        return self._watch(getattr(ufunc, method)(*plain, **kwargs))

    def __array_function__(self, func, types, args, kwargs):
        return self._watch(super().__array_function__(func, types, args, kwargs))


def _whole_matrix_call(log, N):
    """The name of the first ``attn`` call in ``log`` that works on a whole (N, N) matrix, or None."""
    for name, args in log.calls:
        if "softmax_columns" in name:
            return name
        if name == "softmax" and np.ndim(args.get("x")) > 1:
            return name
        if N > 1 and any(isinstance(a, np.ndarray) and a.shape == (N, N) for a in args.values()):
            return name
    return None


#: The long sequence on which the memory that ``b_i`` holds is measured: (d, d_k, d_v, N).
MEMORY_CASE = (3, 2, 2, 512)
#: The most memory ``b_i`` may hold at once on :data:`MEMORY_CASE`, in bytes per entry of an N x N array: 3, that
#: is 3/8 of an (N, N) array of float64 (which takes 8), below even a float32 one (4). Query i alone needs memory
#: in proportion to N; one array per position (a key, a value ...) costs about 150 bytes under tracemalloc.
MEMORY_BYTES_PER_PAIR = 3


def _peak_memory(func, *args):
    """Call ``func`` on ``args`` and return its result and the most memory it held at once beyond what it got, in bytes.

    :mod:`tracemalloc` sees Python's allocations and numpy's, so a copy of the input (``np.asarray(I)``,
    ``I.tolist()``) counts like the input itself.
    """
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = call_student(func, "b_i", *args,
                              none_hint="b_i returned None: end it with `return` and the vector b^i")
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        if not tracing:
            tracemalloc.stop()
    return result, peak


def check_output_column(b_i):
    """Check a function ``b_i(I, W_q, W_k, W_v, i)`` that returns b^i (0-based i) for query i alone.

    It is called on several random sequences of different sizes and every position i, and
    compared with column i of :func:`attn.self_attention`. It must compute b^i for query i alone:

    - a call of any of ``attn``'s attention functions is refused;
    - so is a call of an ``attn`` function on a whole matrix of scores or weights
      (``attn.softmax`` of a matrix, ``attn.backprop.softmax_columns``, any ``attn`` function
      given an (N, N) array);
    - so is an (N, N) array that numpy computes from ``I`` (``I`` is passed as a :class:`_Watched`
      view, which records the shapes computed from it; a plain copy such as ``np.asarray(I)`` is not
      followed, nor is a method such as ``I.dot``: the next check covers those, for arrays of 3 bytes
      an entry or more);
    - on a sequence of N = 512 vectors (:data:`MEMORY_CASE`), the memory ``b_i`` holds at once, measured
      with :mod:`tracemalloc` (numpy's arrays and Python's objects, copies of ``I`` included), must stay
      below 3 bytes per entry of an N x N array (:data:`MEMORY_BYTES_PER_PAIR`), less than an (N, N)
      array of float32 or float64 takes: query i alone needs memory in proportion to N, every query
      at once in proportion to N**2.

    How the steps for query i are written is free: a loop over the keys and one numpy product per step
    both pass.

    Returns
    -------
    str
        A confirmation when every case matches.
    """
    rng = np.random.default_rng(3)
    for d, d_k, d_v, N in ((3, 2, 4, 5), (2, 3, 2, 1), (4, 4, 1, 6)):
        I = rng.normal(size=(d, N))
        W_q, W_k, W_v = rng.normal(size=(d_k, d)), rng.normal(size=(d_k, d)), rng.normal(size=(d_v, d))
        O, A_prime = self_attention(I, W_q, W_k, W_v)
        for i in range(N):
            _Watched.shapes = []
            got, log = call_logged(b_i, "b_i", I.copy().view(_Watched), W_q, W_k, W_v, i,
                                   none_hint="b_i returned None: end it with `return` and the vector b^i")
            shortcut = [name for name in log.names() if "attention" in name]
            if shortcut:
                raise AssertionError(
                    f"b_i calls attn's {shortcut[0]}, which computes the whole layer: this exercise asks you to "
                    "build b^i yourself, step by step (q^i, a score per key, the softmax, the weighted sum)."
                )
            whole = _whole_matrix_call(log, N)
            if whole:
                raise AssertionError(
                    f"b_i calls attn's {whole} on a matrix, the weights of every query at once (chapter 4's matrix "
                    "form): b^i needs only query i's N scores alpha_{i,j} = q^i . k^j, one per key j."
                )
            if N > 1 and (N, N) in _Watched.shapes:
                raise AssertionError(
                    f"b_i computes an (N, N) = ({N}, {N}) array from I, the scores or weights of every query at once "
                    "(chapter 4's matrix form): b^i needs only query i's N scores alpha_{i,j} = q^i . k^j."
                )
            got = np.asarray(got, dtype=float)
            if got.shape != (d_v,):
                raise AssertionError(f"b^{i + 1} should have shape (d_v,) = ({d_v},), got {got.shape}")
            if not np.allclose(got, O[:, i], rtol=1e-6, atol=1e-9):
                raise AssertionError(_column_hint(got, I, W_q, W_k, W_v, i))
    d, d_k, d_v, N = MEMORY_CASE
    I = rng.normal(size=(d, N))
    W_q, W_k, W_v = rng.normal(size=(d_k, d)), rng.normal(size=(d_k, d)), rng.normal(size=(d_v, d))
    i = N // 3
    got, peak = _peak_memory(b_i, I.copy(), W_q, W_k, W_v, i)
    if peak >= MEMORY_BYTES_PER_PAIR * N * N:
        raise AssertionError(
            f"On a sequence of N = {N} vectors, b_i held {peak / 1e6:.1f} MB at once, more than the "
            f"{MEMORY_BYTES_PER_PAIR * N * N / 1e6:.2f} MB allowed (an (N, N) array of {N * N:,} numbers takes "
            f"{8 * N * N / 1e6:.1f} MB in float64): memory that grows like N**2 holds the scores or weights of every "
            "query at once (chapter 4's matrix form), while b^i needs only query i's N scores "
            "alpha_{i,j} = q^i . k^j, one per key j."
        )
    got = np.asarray(got, dtype=float)
    expected = self_attention(I, W_q, W_k, W_v)[0][:, i]
    if got.shape != (d_v,) or not np.allclose(got, expected, rtol=1e-6, atol=1e-9):
        raise AssertionError(_column_hint(got, I, W_q, W_k, W_v, i) if got.shape == (d_v,) else
                             f"b^{i + 1} should have shape (d_v,) = ({d_v},), got {got.shape}")
    return "Right: your b^i equals column i of attn.self_attention for every i."


def check_score_scale(scale):
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
    if np.isclose(scale, -1 / 16):
        raise AssertionError(
            "-1/16 gives variance 1 too, but it flips the sign of every score, so each query would attend most to "
            "the keys least like it: take the positive root."
        )
    if np.isclose(scale, 1 / 256):
        raise AssertionError(
            "1/256 makes the variance 256 / 256**2: multiplying by c multiplies the variance by c**2."
        )
    if np.isclose(scale, 16) or np.isclose(scale, 256):
        raise AssertionError("The scores are too large already: the scale must shrink them, so it is below 1.")
    raise AssertionError("q . k sums 256 products of variance 1, so its variance is 256: what c gives c**2 * 256 = 1?")
