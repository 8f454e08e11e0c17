"""Checkers for chapter 10 (learning W_q, W_k, W_v from data).

Each checker raises ``AssertionError`` with a hint when the answer is wrong and returns
a short message when it is right.
"""

import functools

import numpy as np

from .. import tagging_data, train
from ..core import softmax
from ._common import call_student, call_without, whole_number


#: The library's column-softmax gradient, wherever it is bound (its module may move; a missing name is skipped),
#: public or private (the unchecked helper behind it, also imported by attn.pooling).
_SOFTMAX_BACKWARDS = ("attn.train.softmax_columns_backward", "attn.backprop.softmax_columns_backward",
                      "attn.backprop._softmax_backward", "attn.pooling._softmax_backward")


def _random_column_softmax(seed, N):
    rng = np.random.default_rng(seed)
    return softmax(rng.normal(size=(N, N)) * 2.0, axis=0), rng.normal(size=(N, N))


def check_softmax_backward(backward):
    """Check ``backward(A_prime, dA_prime)``: the gradient through the softmax of each column.

    Parameters
    ----------
    backward : callable
        ``backward(A_prime, dA_prime)`` with both (N, N) arrays must return dA (N, N), the
        gradient of the loss with respect to the scores A, where A_prime = softmax of each column of A.

    Returns
    -------
    str
        A short confirmation.
    """
    cases = [(seed, N) for seed, N in enumerate((3, 2, 5, 8, 1))]
    for seed, N in cases:
        A_prime, dA_prime = _random_column_softmax(seed, N)
        got = np.asarray(call_without(
            backward, "backward", A_prime.copy(), dA_prime.copy(), forbidden=_SOFTMAX_BACKWARDS,
            hint="within column i, dA[l, i] = A'[l, i] (dA'[l, i] - sum_j A'[j, i] dA'[j, i]): write it with numpy",
        ), dtype=float)
        if got.shape != (N, N):
            raise AssertionError(f"N = {N}: dA should have shape {(N, N)}, got {got.shape}")
        expected = train.softmax_columns_backward(A_prime, dA_prime)
        if np.allclose(got, expected, atol=1e-12):
            continue
        if np.allclose(got, A_prime * dA_prime, atol=1e-12):
            raise AssertionError(
                f"N = {N}: the term -A'[l, i] sum_j A'[j, i] dA'[j, i] is missing. Raising one score of a "
                "column lowers every other weight of that column, because the column must still sum to 1"
            )
        row_version = A_prime * (dA_prime - np.sum(A_prime * dA_prime, axis=1, keepdims=True))
        if np.allclose(got, row_version, atol=1e-12):
            raise AssertionError(
                f"N = {N}: you summed over a row (axis=1). A' is normalised down each column (one query, all "
                "keys), so the sum runs over the keys j: axis=0"
            )
        if np.allclose(got, A_prime * (np.sum(A_prime * dA_prime, axis=0, keepdims=True) - dA_prime), atol=1e-12):
            raise AssertionError(
                f"N = {N}: your dA has the opposite sign: dA[l, i] = A'[l, i] (dA'[l, i] - sum_j A'[j, i] dA'[j, i])"
            )
        if np.allclose(got, dA_prime * (A_prime - A_prime**2), atol=1e-12):
            raise AssertionError(
                f"N = {N}: you used only the diagonal of the softmax's Jacobian, A'(1 - A'). Every weight of a "
                "column depends on every score of that column: add the term -A'[l, i] sum_(j != l) A'[j, i] dA'[j, i]"
            )
        raise AssertionError(
            f"N = {N}: dA is wrong. Within column i, d A'[j, i] / d A[l, i] = A'[j, i] (delta_jl - A'[l, i])"
        )
    return f"Right: the column-softmax gradient matches on {len(cases)} random cases (N = 1 ... 8)."


def check_value_gradient(grad_W_v):
    """Check ``grad_W_v(I, A_prime, dO)``: the gradient of the loss with respect to W_v, one sentence.

    Parameters
    ----------
    grad_W_v : callable
        ``grad_W_v(I, A_prime, dO)`` with I (d, N), A_prime (N, N) and dO (d_v, N), the
        gradient with respect to O = W_v I A_prime, must return dW_v of shape (d_v, d).

    Returns
    -------
    str
        A short confirmation.
    """
    for seed, (d, d_v, N) in enumerate(((3, 2, 4), (4, 4, 1), (2, 5, 6))):
        rng = np.random.default_rng(100 + seed)
        I, dO = rng.normal(size=(d, N)), rng.normal(size=(d_v, N))
        A_prime = softmax(rng.normal(size=(N, N)) * 2.0, axis=0)
        got = np.asarray(call_student(grad_W_v, "grad_W_v", I.copy(), A_prime.copy(), dO.copy()), dtype=float)
        expected = dO @ A_prime.T @ I.T
        if got.shape != (d_v, d):
            if got.shape == (d, d_v) and np.allclose(got, expected.T):
                raise AssertionError(f"(d, d_v, N) = {(d, d_v, N)}: you returned dW_v transposed, {got.shape}: "
                                     f"a gradient has the shape of its weight, W_v is (d_v, d) = {(d_v, d)}")
            raise AssertionError(f"(d, d_v, N) = {(d, d_v, N)}: dW_v should have shape {(d_v, d)}, got {got.shape}")
        if np.allclose(got, expected):
            continue
        if np.allclose(got, dO @ I.T):
            raise AssertionError("the attention weights are missing: W_v reaches O through V = W_v I and then O = V A'")
        if np.allclose(got, dO @ A_prime @ I.T):
            raise AssertionError("O = V A' gives dV = dO A'^T: transpose A_prime before multiplying")
        raise AssertionError("dW_v is wrong: chain O = V A' (so dV = dO A'^T) with V = W_v I (so dW_v = dV I^T)")
    return "Right: dW_v = dO A'^T I^T on 3 random shapes."


def check_window_ceiling(ceiling):
    """Check ``ceiling(sentences, half_width)``: the best expected accuracy of any window tagger.

    Parameters
    ----------
    ceiling : callable
        ``ceiling(sentences, half_width)`` takes a list of (tokens, tags) from
        :func:`attn.tagging_data.make_sentences` and an int, and returns the expected
        fraction of all tokens that the best tagger seeing only words
        i - half_width ... i + half_width gets right.

    Returns
    -------
    str
        A short confirmation.
    """
    sentences = tagging_data.make_sentences(150, seed=9)
    widths = (0, 1, 2, 5, 30)
    answers = []
    for w in widths:
        got = call_without(ceiling, "ceiling", sentences, w, forbidden=("attn.tagging_data.window_ceiling",),
                           hint="count the ambiguous words (data.is_ambiguous) whose cue (data.cue_position) is more "
                                "than half_width away; each counts 0.5, every other token 1")
        try:
            answers.append(float(got))
        except (TypeError, ValueError):
            raise AssertionError(f"ceiling should return one number, a fraction of the tokens, got {got!r}") from None
    far = tagging_data.cue_distances(sentences)
    n_tokens = sum(len(t) for t, _ in sentences)
    wrong_ceilings = (
        (lambda w: 1 - np.sum(far > w) / n_tokens,
         "a tagger that cannot see the cue still guesses right half the time (both cues are equally likely): "
         "count those words as 0.5, not 0"),
        (lambda w: 1 - 0.5 * np.sum(far >= w) / n_tokens, "a cue exactly half_width words away is inside the window"),
        (lambda w: 1 - 0.5 * np.sum(far > w) / far.size,
         f"you divided by the {far.size} ambiguous words only: the accuracy is over all {n_tokens} tokens, and the "
         "others (fillers and cues) are always tagged right"),
    )
    for w, got in zip(widths, answers):
        expected = tagging_data.window_ceiling(sentences, w)
        if np.isclose(got, expected, rtol=0, atol=1e-12):
            continue
        for wrong, hint in wrong_ceilings:
            if all(np.isclose(a, wrong(v)) for v, a in zip(widths, answers)):
                raise AssertionError(f"half_width = {w}: {hint}")
        raise AssertionError(
            f"half_width = {w}: expected {expected:.4f}, got {got:.4f}. Every token counts 1, except an "
            "ambiguous word whose cue is more than half_width away, which counts 0.5"
        )
    return "Right: your ceiling matches for half-widths 0, 1, 2, 5 and 30."


@functools.lru_cache(maxsize=1)
def _test_set_ceilings():
    """The window ceiling on chapter 10's test set for half-widths 0 ... 39 (computed once)."""
    _, test_set = train.default_data("cue")
    return {w: tagging_data.window_ceiling(test_set, w) for w in range(0, 40)}


#: The accuracy that the smallest window of :func:`check_window_size` must reach.
CEILING_TARGET = 0.95


def check_window_size(r, n_params):
    """Check the smallest half-width r whose window ceiling on the chapter's test set reaches 0.95,
    and the number of parameters ``train.init_window_model(0, half_width=r)`` gives that window.

    Parameters
    ----------
    r : int
        The half-width: the window sees the words i - r ... i + r, a window of 2r + 1 words.
    n_params : int
        The total size of the window tagger's parameters for that r (defaults otherwise).

    Returns
    -------
    str
        A short confirmation.
    """
    r = whole_number("r", r)
    n_params = whole_number("n_params", n_params)
    ceilings = _test_set_ceilings()
    right_r = min(w for w, c in ceilings.items() if c >= CEILING_TARGET)
    if r < 0:
        raise AssertionError(f"r = {r}: a half-width counts words on each side, so it is 0 or more")
    if r != right_r:
        if r == 2 * right_r + 1:
            raise AssertionError(f"{r} is the window's width 2r + 1: the question asks for the half-width r")
        if r < right_r:
            raise AssertionError(
                f"with r = {r} the ceiling on test_set is {ceilings[r]:.4f}, below {CEILING_TARGET}: try larger r"
            )
        below = f" ({ceilings[r - 1]:.4f})" if r - 1 in ceilings else ""
        raise AssertionError(f"r = {r} reaches {CEILING_TARGET} but is not the smallest: r = {r - 1} reaches it "
                             f"already{below}")  # the ceiling never falls as r grows
    sizes = {w: sum(v.size for v in train.init_window_model(0, half_width=w).values()) for w in (right_r, 2)}
    if n_params == sizes[right_r]:
        return (f"Right: r = {right_r}, a window of {2 * right_r + 1} words, and {sizes[right_r]} parameters, "
                f"{sizes[right_r] / sizes[2]:.1f} times the chapter's window tagger (r = 2).")
    if n_params == sizes[2]:
        raise AssertionError(
            f"{n_params} is the chapter's tagger with r = 2: build the model for your r, "
            f"train.init_window_model(0, half_width={right_r})"
        )
    params = train.init_window_model(0, half_width=right_r)
    if n_params == sum(v.size for name, v in params.items() if v.ndim == 2):
        raise AssertionError(f"{n_params} counts the weight matrices only: the biases b1 and b2 are learned too")
    if n_params == sum(v.size for name, v in params.items() if name != "W_emb"):
        raise AssertionError(f"{n_params} leaves out the word embeddings W_emb: the tagger learns them too")
    if n_params == len(params):
        raise AssertionError(f"{n_params} counts the weight arrays: add up their sizes, sum(v.size for v in params.values())")
    raise AssertionError(
        f"r = {right_r} is right; the parameters are not {n_params}: add up the sizes of every array that "
        f"train.init_window_model(0, half_width={right_r}) returns"
    )
