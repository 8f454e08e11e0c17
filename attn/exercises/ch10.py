"""Checkers for chapter 10 (learning W_q, W_k, W_v from data).

Each checker raises ``AssertionError`` with a hint when the answer is wrong and returns
a short message when it is right.
"""

import numpy as np

from .. import tagging_data, train
from ..core import softmax


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
        got = np.asarray(backward(A_prime.copy(), dA_prime.copy()), dtype=float)
        assert got.shape == (N, N), f"N = {N}: dA should have shape {(N, N)}, got {got.shape}"
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
        got = np.asarray(grad_W_v(I.copy(), A_prime.copy(), dO.copy()), dtype=float)
        assert got.shape == (d_v, d), f"(d, d_v, N) = {(d, d_v, N)}: dW_v should have shape {(d_v, d)}, got {got.shape}"
        expected = dO @ A_prime.T @ I.T
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
    for w in (0, 1, 2, 5, 30):
        got = float(ceiling(sentences, w))
        expected = tagging_data.window_ceiling(sentences, w)
        if np.isclose(got, expected, rtol=0, atol=1e-12):
            continue
        far = tagging_data.cue_distances(sentences)
        n_tokens = sum(len(t) for t, _ in sentences)
        if np.isclose(got, 1 - np.sum(far > w) / n_tokens):
            raise AssertionError(
                f"half_width = {w}: a tagger that cannot see the cue still guesses right half the time "
                "(both cues are equally likely): count those words as 0.5, not 0"
            )
        if np.isclose(got, 1 - 0.5 * np.sum(far >= w) / n_tokens):
            raise AssertionError(f"half_width = {w}: a cue exactly half_width words away is inside the window")
        raise AssertionError(
            f"half_width = {w}: expected {expected:.4f}, got {got:.4f}. Every token counts 1, except an "
            "ambiguous word whose cue is more than half_width away, which counts 0.5"
        )
    return "Right: your ceiling matches for half-widths 0, 1, 2, 5 and 30."
