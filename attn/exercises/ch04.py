"""Checkers for the exercises of chapter 4 (self-attention as four matrix products).

Each checker raises ``AssertionError`` with a hint when the answer is wrong and returns a
short message when it is right.
"""

import numbers
import os
import site
import sys
import types

import numpy as np

from ..core import self_attention, softmax
from ..rows import parameter_count
from ._common import call_logged, call_student, has_loop, whole_number


def _cases():
    """Random (I, W_q, W_k, W_v) of several shapes, d_k != d_v and N != d on purpose."""
    rng = np.random.default_rng(4)
    for d, d_k, d_v, N in ((3, 2, 4, 5), (4, 3, 2, 1), (2, 5, 3, 7)):
        yield (rng.normal(size=(d, N)), rng.normal(size=(d_k, d)), rng.normal(size=(d_k, d)),
               rng.normal(size=(d_v, d)))


def _matrix_form_hint(O, A_prime, I, W_q, W_k, W_v):
    """The hint for a wrong (O, A_prime), or None when both are right."""
    O_ref, A_ref = self_attention(I, W_q, W_k, W_v)
    N, d_k = I.shape[1], W_q.shape[0]
    A = (W_k @ I).T @ (W_q @ I)
    if A_prime.shape != (N, N):
        return f"A_prime should be (N, N) = ({N}, {N}), got {A_prime.shape}"
    if not np.allclose(A_prime, A_ref, rtol=1e-6):
        if np.allclose(A_prime, softmax(A, axis=1), rtol=1e-6):
            return "Your softmax runs along the rows: in the column form each COLUMN (one query) sums to 1."
        if np.allclose(A_prime, A_ref.T, rtol=1e-6):
            return "A_prime is transposed: A = K.T @ Q, so rows are keys and columns are queries."
        if np.allclose(A_prime, A, rtol=1e-6):
            return "A_prime holds the raw scores A = K.T @ Q: apply the softmax to each column."
        if np.allclose(A_prime, softmax(A / np.sqrt(d_k), axis=0), rtol=1e-6):
            return (f"You divided the scores by sqrt(d_k) = sqrt({d_k}): the lecture's layer (attn.self_attention "
                    "with its default scale 1) uses A = K.T @ Q as it is.")
        return "A_prime is wrong: Q = W_q @ I, K = W_k @ I, A = K.T @ Q, softmax of each column."
    if O.shape != O_ref.shape:
        return f"O should be (d_v, N) = {O_ref.shape}, got {O.shape}: O = V @ A_prime"
    if not np.allclose(O, O_ref, rtol=1e-6):
        if np.allclose(O, (W_v @ I) @ A_ref.T, rtol=1e-6):
            return "O = V @ A_prime.T mixes the values with the keys' rows: O = V @ A_prime, column i for query i."
        return "A_prime is right but O is not: O = V @ A_prime with V = W_v @ I."
    return None


#: Names of functions that run a Python function once per row or column: a loop in disguise.
LOOP_HELPERS = ("map", "starmap", "apply_along_axis", "apply_over_axes", "vectorize", "frompyfunc")


def _loop_helpers(func):
    """The names in :data:`LOOP_HELPERS` that the code of ``func`` (and the functions inside it) uses."""
    code = getattr(func, "__code__", None)
    found, todo = [], [code] if code is not None else []
    while todo:
        code = todo.pop()
        found += [name for name in code.co_names if name in LOOP_HELPERS and name not in found]
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return found


#: numpy's Python-level helpers that call a Python function once per row, column or entry, as
#: (name, function whose code runs when the helper does).
_NUMPY_LOOPS = (("apply_along_axis", getattr(np.apply_along_axis, "__wrapped__", np.apply_along_axis)),
                ("apply_over_axes", getattr(np.apply_over_axes, "__wrapped__", np.apply_over_axes)),
                ("vectorize", np.vectorize.__call__))


def _library_folders():
    """The folders of Python's own library, of installed packages and of ``attn``: code there is not the reader's."""
    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
               os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    folders.update(site.getsitepackages() if hasattr(site, "getsitepackages") else [])
    folders.add(site.getusersitepackages())
    return tuple({os.path.join(os.path.realpath(f), "") for f in folders if f})


def _is_readers(code, library=None):
    """Whether ``code`` is the reader's own (a notebook cell, a script ...), not Python's, a package's or attn's."""
    name = code.co_filename
    if name.startswith("<frozen") or name.startswith("<built-in"):
        return False
    path = os.path.join(os.path.realpath(name), "") if os.path.isabs(name) else name
    return not path.startswith(library or _library_folders())


def _functions_run(func, *args):
    """Call ``func`` on ``args``; return the reader's functions that ran (``func`` too) and numpy's loop helpers
    that did.

    Returns
    -------
    readers : list of code
        The code of every function of the reader's that ran, in the order of their first call.
    helpers : list of str
        The names in :data:`_NUMPY_LOOPS` whose code ran, however the reader reached them (an alias included).
    """
    library = _library_folders()
    loops = {f.__code__: name for name, f in _NUMPY_LOOPS if hasattr(f, "__code__")}
    readers, helpers = [], []

    def profile(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        if code in loops and loops[code] not in helpers:
            helpers.append(loops[code])
        elif code not in readers and _is_readers(code, library):
            readers.append(code)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        call_student(func, "attention", *args)
    finally:
        sys.setprofile(previous)
    return readers, helpers


def _loops_in_helpers(attention, cases):
    """The hint for a loop in a function of the reader's that ``attention`` calls, or None."""
    own = getattr(attention, "__code__", None)
    for I, W_q, W_k, W_v in cases:
        readers, helpers = _functions_run(attention, I, W_q, W_k, W_v)
        if helpers:
            return (f"Your O and A_prime are right, but attention reaches numpy's {helpers[0]}, which calls a Python "
                    "function once per column or entry: a loop in disguise. softmax(A, axis=0), or np.exp and "
                    ".sum(axis=0), handles every column at once.")
        for code in readers:
            if code is own or _encloses(own, code):
                continue
            holder = types.SimpleNamespace(__code__=code)
            named = _loop_helpers(holder)
            if has_loop(holder) or named:
                how = "loops in Python" if has_loop(holder) else f"uses {named[0]}, a loop in disguise"
                return (f"Your O and A_prime are right, but attention calls {code.co_name} (your own function), which "
                        f"{how}: the exercise asks for matrix products only, in every function it calls. K.T @ Q "
                        "gives every score at once, and softmax(..., axis=0) every column.")
    return None


def _encloses(outer, code):
    """Whether ``code`` is defined inside ``outer`` (a lambda or comprehension in it), which ``outer``'s checks cover."""
    if outer is None:
        return False
    todo = list(c for c in outer.co_consts if isinstance(c, types.CodeType))
    while todo:
        inner = todo.pop()
        if inner is code:
            return True
        todo.extend(c for c in inner.co_consts if isinstance(c, types.CodeType))
    return False


def check_matrix_form(attention):
    """Check ``attention(I, W_q, W_k, W_v) -> (O, A_prime)`` written as matrix products.

    The function must not loop in Python: its code must hold no ``for``, ``while`` or comprehension
    and name none of :data:`LOOP_HELPERS` (``map``, ``np.apply_along_axis``, ``np.vectorize`` ...,
    found by name). The same holds for every function of the reader's own that runs while it does
    (a helper defined outside it, found by :func:`sys.setprofile`: code outside Python's library,
    the installed packages and ``attn``), and numpy's ``apply_along_axis``, ``apply_over_axes`` and
    ``vectorize`` are refused however they are reached (an alias made outside included); ``map``,
    ``itertools.starmap`` and ``np.frompyfunc``, which run in C, are found by name only. It must call
    ``attn.softmax`` at most once per call (a hand-written column softmax is fine), and must not call
    any of ``attn``'s attention functions.

    Returns
    -------
    str
        A confirmation when O and A_prime equal :func:`attn.self_attention`'s on every case.
    """
    for I, W_q, W_k, W_v in _cases():
        result, log = call_logged(attention, "attention", I, W_q, W_k, W_v)
        shortcut = [name for name in log.names() if "attention" in name]
        if shortcut:
            raise AssertionError(
                f"attention calls attn's {shortcut[0]}: the exercise is to write the layer yourself, as the "
                "matrix products Q = W_q @ I, K = W_k @ I, V = W_v @ I, A = K.T @ Q, one softmax, O = V @ A_prime."
            )
        n_softmax = log.count("softmax")
        if n_softmax > 1:
            raise AssertionError(
                f"attention calls attn.softmax {n_softmax} times for N = {I.shape[1]}: one call with axis=0 "
                "normalises every column of A at once."
            )
        if not (isinstance(result, tuple) and len(result) == 2):
            raise AssertionError("attention should return the pair (O, A_prime)")
        O, A_prime = (np.asarray(x, dtype=float) for x in result)
        hint = _matrix_form_hint(O, A_prime, I, W_q, W_k, W_v)
        if hint:
            raise AssertionError(hint)
    if has_loop(attention):
        raise AssertionError(
            "Your O and A_prime are right, but attention loops in Python: the exercise asks for matrix products "
            "only. K.T @ Q gives every score at once, and softmax(..., axis=0) every column."
        )
    helpers = _loop_helpers(attention)
    if helpers:
        raise AssertionError(
            f"Your O and A_prime are right, but attention uses {helpers[0]}, which calls a Python function once per "
            "column: a loop in disguise. softmax(A, axis=0), or np.exp and .sum(axis=0), handles every column at once."
        )
    hint = _loops_in_helpers(attention, _cases())
    if hint:
        raise AssertionError(hint)
    return "Right: matrix products and a column softmax give attn.self_attention's O and A_prime."


def check_parameter_count(n_128, n_1000):
    """Check the number of learned numbers for d = 80, d_k = d_v = 80, at N = 128 and N = 1000.

    Parameters
    ----------
    n_128, n_1000 : int
        The student's counts for sequences of 128 and of 1000 vectors: whole numbers (an int,
        or a float with no fractional part).

    Returns
    -------
    str
        A confirmation when both counts are right.
    """
    expected = parameter_count(80, 80, 80)
    for value in (n_128, n_1000):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.number)):
            raise AssertionError(f"give two whole numbers, got {n_128!r} and {n_1000!r}")
    n_128, n_1000 = whole_number("n_128", n_128), whole_number("n_1000", n_1000)
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
    if n_128 == 3 * 80 * 81:
        raise AssertionError("That counts a bias per output: the lecture's W_q, W_k and W_v are matrices only.")
    if n_128 == 4 * 80 * 80:
        raise AssertionError(
            "That counts an output projection W_o too: the single-head layer of this chapter has W_q, W_k, W_v only."
        )
    raise AssertionError("Count the entries of W_q (d_k x d), W_k (d_k x d) and W_v (d_v x d).")


def check_row_form(row_attention):
    """Check ``row_attention(X, W_q, W_k, W_v) -> Y`` written in the row convention (X = I.T).

    A call of any of ``attn``'s attention functions (for example ``attn.self_attention(X.T, ...)``)
    is refused: the exercise is to write the row form's own products.

    Returns
    -------
    str
        A confirmation when Y equals ``O.T`` of :func:`attn.self_attention` on every case.
    """
    for I, W_q, W_k, W_v in _cases():
        X = I.T
        result, log = call_logged(row_attention, "row_attention", X, W_q, W_k, W_v)
        shortcut = [name for name in log.names() if "attention" in name]
        if shortcut:
            raise AssertionError(
                f"row_attention calls attn's {shortcut[0]}: write the row form's products yourself, "
                "Q_r = X @ W_q.T, K_r = X @ W_k.T, V_r = X @ W_v.T, then the scores Q_r @ K_r.T."
            )
        Y = np.asarray(result, dtype=float)
        O_ref, _ = self_attention(I, W_q, W_k, W_v)
        if Y.shape != O_ref.T.shape:
            if Y.shape == O_ref.shape:
                raise AssertionError(f"Y has the column-form shape {Y.shape}: in the row form row i is b^i, (N, d_v).")
            raise AssertionError(f"Y should be (N, d_v) = {O_ref.T.shape}, got {Y.shape}")
        if not np.allclose(Y, O_ref.T, rtol=1e-6):
            Q_r, K_r, V_r = X @ W_q.T, X @ W_k.T, X @ W_v.T
            close = lambda Z: np.allclose(Y, Z, rtol=1e-6)  # noqa: E731
            if close(softmax(Q_r @ K_r.T, axis=0) @ V_r):
                raise AssertionError(
                    "Your softmax runs down the columns: in the row form each ROW (one query) sums to 1."
                )
            if close(softmax(K_r @ Q_r.T, axis=0) @ V_r):
                raise AssertionError(
                    "softmax(K_r @ Q_r.T, axis=0) is A', with keys in its rows: in the row form the weights are its "
                    "transpose, softmax(Q_r @ K_r.T, axis=1), one row per query."
                )
            if close((Q_r @ K_r.T) @ V_r):
                raise AssertionError("You multiplied V_r by the raw scores: take the softmax of each row first.")
            if close(softmax(Q_r @ K_r.T / np.sqrt(W_q.shape[0]), axis=1) @ V_r):
                raise AssertionError(
                    "You divided the scores by sqrt(d_k): the lecture's layer, which Y is compared with, does not."
                )
            raise AssertionError(
                "Y is wrong: Q_r = X @ W_q.T, K_r = X @ W_k.T, softmax of each row of Q_r @ K_r.T, times V_r."
            )
    return "Right: your row form gives O.T, the lecture's outputs as rows."
