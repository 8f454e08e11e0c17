"""Checkers for chapter 5 (multi-head self-attention).

Each checker raises ``AssertionError`` with a hint when the answer is wrong and returns
a short message starting with "Right:" when it is right.
"""

import numpy as np

from .. import core, heads
from ._common import call_student

_SPLIT_CASES = ((4, 2), (6, 3), (8, 2), (6, 1), (12, 4))
_COUNT_CASES = ((80, 2, 40, 40, 80), (80, 1, 80, 80, 80), (6, 3, 2, 5, 4), (10, 2, 7, 3, 1), (512, 8, 64, 64, 512))
PARTNERS = (1, 0, 3, 2, 5, 4)  # cat <-> purrs, sun <-> shines, rain <-> falls


def _reference_split(W_in, h):
    return tuple(heads.split_heads(W, h) for W in heads.split_in_proj(W_in))


def check_split_in_proj(split):
    """Check ``split(W_in, h)``, which turns PyTorch's fused (3d, d) ``in_proj_weight`` into per-head stacks.

    Parameters
    ----------
    split : callable
        ``split(W_in, h)`` must return ``(W_q, W_k, W_v)``, each of shape (h, d/h, d),
        with W_q[m] the query projection of head m.

    Returns
    -------
    str
        A short confirmation.
    """
    for d, h in _SPLIT_CASES:
        W_in = np.random.default_rng(d * 10 + h).normal(size=(3 * d, d))
        expected = _reference_split(W_in, h)
        got = call_student(split, "split", W_in, h)
        if not (isinstance(got, (tuple, list)) and len(got) == 3):
            raise AssertionError(f"return three stacks (W_q, W_k, W_v), got {type(got).__name__}")
        fused = heads.split_in_proj(W_in)
        if all(np.shape(g) == (d, d) for g in got):
            if all(np.allclose(g, W) for g, W in zip(got, fused)):
                raise AssertionError(
                    f"d = {d}, h = {h}: you cut in_proj_weight into W_q, W_k and W_v, each ({d}, {d}); now cut each "
                    f"into h heads: reshape it to (h, d/h, d) = ({h}, {d // h}, {d})"
                )
        for name, g, e, W in zip(("W_q", "W_k", "W_v"), got, expected, fused):
            g = np.asarray(g)
            if g.shape != e.shape:
                raise AssertionError(f"d = {d}, h = {h}: {name} should have shape {e.shape} (h, d/h, d), got {g.shape}")
            if np.allclose(g, e):
                continue
            if np.allclose(g, heads.split_heads_interleaved(W, h)):
                raise AssertionError(
                    f"d = {d}, h = {h}: {name} holds rows m, m+h, m+2h, ... in head m. The rows of a fused "
                    f"matrix factor as (head, feature): head m is the block of rows m*d_k ... (m+1)*d_k - 1"
                )
            if name != "W_v" and np.allclose(g, expected[1 - ("W_q", "W_k").index(name)]):
                raise AssertionError(
                    f"d = {d}, h = {h}: your {name} is the other projection: in_proj_weight holds W_q's rows first, "
                    f"then W_k's, then W_v's"
                )
            raise AssertionError(
                f"d = {d}, h = {h}: {name} is wrong. in_proj_weight holds all of W_q's rows, then W_k's, then "
                f"W_v's; cut it in three first, then cut each into h consecutive blocks"
            )
    return f"Right: {len(_SPLIT_CASES)} shapes (d, h) split exactly as torch.nn.MultiheadAttention uses them."


#: Counts that forget or miscount one part of the layer, each with its hint.
_WRONG_COUNTS = (
    (lambda d, h, d_k, d_v, d_out: h * (2 * d_k + d_v) * d,
     "W_o is missing: after the heads, W_o of shape (d_out, h*d_v) mixes their outputs, and it is learned too."),
    (lambda d, h, d_k, d_v, d_out: (2 * d_k + d_v) * d + d_out * d_v,
     "You counted one head: each of the h heads has its own W_q, W_k (d_k, d) and W_v (d_v, d), and W_o is "
     "(d_out, h*d_v)."),
    (lambda d, h, d_k, d_v, d_out: h * (2 * d_k + d_v) * d + d_out * d_v,
     "W_o takes the h heads' outputs stacked, h*d_v numbers: it is (d_out, h*d_v), not (d_out, d_v)."),
    (lambda d, h, d_k, d_v, d_out: 3 * h * d_k * d + d_out * h * d_v,
     "W_v maps to the value size: it is (d_v, d), not (d_k, d)."),
)


def check_weight_count(count):
    """Check ``count(d, h, d_k, d_v, d_out)``: the number of weights of multi-head self-attention (no biases).

    Parameters
    ----------
    count : callable
        ``count(d, h, d_k, d_v, d_out)`` must return an int.

    Returns
    -------
    str
        A short confirmation.
    """
    answers = [call_student(count, "count", *case) for case in _COUNT_CASES]
    for case, got in zip(_COUNT_CASES, answers):
        expected = heads.parameter_count(*case)
        if got == expected:
            continue
        d, h, d_k, d_v, d_out = case
        for wrong, hint in _WRONG_COUNTS:
            if all(a == wrong(*c) for c, a in zip(_COUNT_CASES, answers)):
                raise AssertionError(f"count(d={d}, h={h}, d_k={d_k}, d_v={d_v}, d_out={d_out}) returned {got}, "
                                     f"expected {expected}. {hint}")
        parts = heads.parameter_breakdown(*case)
        raise AssertionError(
            f"count(d={d}, h={h}, d_k={d_k}, d_v={d_v}, d_out={d_out}) returned {got}, expected {expected}. "
            f"Count each matrix: every head has W_q and W_k of shape (d_k, d) and W_v of shape (d_v, d); "
            f"W_o is (d_out, h*d_v) (here {parts['W_o']})."
        )
    return f"Right: all {len(_COUNT_CASES)} cases; with d_k = d_v = d/h and d_out = d the count is 4 d^2 for any h."


def check_partner_head(W_q, W_k):
    """Check a single head that makes every word of the chapter's toy sentence attend to its partner.

    The partner of a word has the same topic and the other role: cat <-> purrs,
    sun <-> shines, rain <-> falls (see :func:`attn.heads.two_part_inputs`).

    Parameters
    ----------
    W_q, W_k : (d_k, 5) ndarray
        The head's query and key projections.

    Returns
    -------
    str
        A short confirmation.
    """
    I, words = heads.two_part_inputs()
    W_q, W_k = np.asarray(W_q, dtype=float), np.asarray(W_k, dtype=float)
    if W_q.ndim != 2 or W_q.shape[1] != I.shape[0]:
        raise AssertionError(f"W_q must have shape (d_k, {I.shape[0]}), got {W_q.shape}")
    if W_k.shape != W_q.shape:
        raise AssertionError(f"W_k must have the shape of W_q {W_q.shape}, got {W_k.shape}")
    _, A_prime = core.self_attention(I, W_q, W_k, np.eye(I.shape[0]))
    for i, word in enumerate(words):
        j = PARTNERS[i]
        if A_prime[j, i] < 0.9:
            if all(A_prime[k, k] > np.delete(A_prime[:, k], k).max() for k in range(len(words))):
                raise AssertionError(
                    f"every word attends most to itself (query '{word}' gives itself {A_prime[i, i]:.3f}): q^i . k^j is "
                    "largest for j = i, so the query matches the word's own key. The partner has the same topic and "
                    "the OTHER role: the query of a noun must look like the key of a verb, and the other way round."
                )
            if A_prime[:, i].argmax() == j and np.sum(np.isclose(A_prime[:, i], A_prime[j, i])) == 1:
                raise AssertionError(
                    f"query '{word}' already gives its partner '{words[j]}' the largest weight, but only "
                    f"{A_prime[j, i]:.3f} (needs >= 0.9): the gaps between the scores are too small, so multiply W_q "
                    "(or W_k) by a larger number."
                )
            top = np.flatnonzero(np.isclose(A_prime[:, i], A_prime[:, i].max()))
            raise AssertionError(
                f"query '{word}' gives its partner '{words[j]}' weight {A_prime[j, i]:.3f} (needs >= 0.9); "
                f"its largest weight goes to {[words[t] for t in top]}. A head that reads only one part of the "
                f"vectors ties several keys: the score must reward the same topic AND the other role, e.g. by "
                f"adding the two heads' scores (stack their W_q rows and their W_k rows), with large enough entries."
            )
    return "Right: one head now pairs cat-purrs, sun-shines and rain-falls, each with weight >= 0.9."
