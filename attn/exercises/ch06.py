"""Checkers for the exercises of chapter 6 (positional encoding).

Each checker raises ``AssertionError`` with a hint when the answer is wrong and returns a
short message when it is right.
"""

import numpy as np

from ..core import self_attention
from ..inputs import one_hot
from ..positional import relative_self_attention, sinusoidal, word_and_position
from ..window import SAW_SENTENCE, SAW_VOCABULARY
from ._common import call_without

#: Size of the sinusoidal encodings in the chapter's "I saw a saw" layout.
D_POS = 16


def _as_float_array(name, value):
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise AssertionError(f"{name} should be an array of numbers, got {type(value).__name__}") from None


def check_distance_profile(g):
    """Check a function ``g(d, N)`` whose entry delta is e^i . e^(i + delta).

    The checker builds the sinusoidal table for several d and N (up to 1000 positions) and
    compares every entry of E^T E with ``g(d, N)[|i - j|]``: if they all agree, e^i . e^j
    depends on the distance |i - j| only.

    Parameters
    ----------
    g : callable
        ``g(d, N)`` returns an (N,) array, entry delta = 0 .. N-1.

    Returns
    -------
    str
        A confirmation when every case agrees.
    """
    for d, N in ((2, 5), (8, 30), (16, 200), (64, 1000)):
        got = _as_float_array("g(d, N)", call_without(
            g, "g", d, N, forbidden=("attn.positional.sinusoidal",),
            hint="compute e^i . e^(i + delta) from delta and the speeds w_p = positional.frequencies(d): each "
                 "sine/cosine pair adds cos(delta w_p)",
        ))
        if got.shape == (N, d // 2):
            raise AssertionError(f"g({d}, {N}) has shape {got.shape}, one column per sine/cosine pair: e^i . e^j adds "
                                 "them up, so sum over the pairs p (axis=1)")
        if got.shape != (N,):
            raise AssertionError(f"g({d}, {N}) should have shape ({N},), one entry per distance 0 .. N-1; got {got.shape}")
        E = sinusoidal(d, N)
        G = E.T @ E  # (N, d) x (d, N) -> (N, N): G[i, j] = e^i . e^j
        i, j = np.indices((N, N))
        if np.allclose(G, got[np.abs(i - j)], rtol=0, atol=1e-8):
            continue
        omega = 1.0 / 10000.0 ** (np.arange(0, d, 2) / d)
        if np.allclose(got, np.sin(np.outer(np.arange(N), omega)).sum(axis=1)):
            raise AssertionError("Each pair gives sin(x) sin(y) + cos(x) cos(y) = cos(x - y): a cosine, not a sine.")
        if np.allclose(got, 2 * np.cos(np.outer(np.arange(N), omega)).sum(axis=1)):
            raise AssertionError(
                "Each sine/cosine pair gives sin(x) sin(y) + cos(x) cos(y) = cos(x - y) once, not twice: "
                f"g({d}, {N})[0] must be d/2 = {d / 2:g}."
            )
        if not np.isclose(got[0], d / 2):
            raise AssertionError(
                f"g({d}, {N})[0] = {got[0]:.4f}, but e^i . e^i = d/2 = {d / 2:g}: each sine/cosine pair adds "
                "sin^2 + cos^2 = 1."
            )
        raise AssertionError(
            f"For d = {d}, N = {N}, e^i . e^j differs from g[|i - j|]; the first distances should be "
            f"{np.round(G[0, :3], 4)}, got {np.round(got[:3], 4)}. Hint: sum over the pairs p of cos(delta w_p)."
        )
    return "Right: e^i . e^j = sum_p cos((i - j) w_p) for every pair, up to 1000 positions: it depends on |i - j| only."


def _sentences():
    """The chapter's sentence and random ones of 2 to 40 words over I, saw, a (seeded)."""
    rng = np.random.default_rng(6)
    yield list(SAW_SENTENCE)
    for N in (2, 3, 7, 12, 25, 40):
        yield [SAW_VOCABULARY[v] for v in rng.integers(0, len(SAW_VOCABULARY), size=N)]


def check_next_word(W_q, W_k):
    """Check hand-set W_q, W_k that make every word but the last attend to the word after it.

    The input is the chapter's layout: rows 1-3 the one-hot word over (I, saw, a), rows 4-19
    the sinusoidal encoding of its position (``word_and_position(one_hot(words), 16)``).
    Every query i < N must give weight > 0.9 to key i + 1, on the chapter's sentence and on
    random sentences of 2 to 40 words.

    Parameters
    ----------
    W_q, W_k : (d_k, 19) array_like

    Returns
    -------
    str
        A confirmation when the weights pass every sentence.
    """
    W_q, W_k = _as_float_array("W_q", W_q), _as_float_array("W_k", W_k)
    d = len(SAW_VOCABULARY) + D_POS
    if W_q.ndim != 2 or W_k.ndim != 2 or W_q.shape[1] != d or W_k.shape[1] != d or W_q.shape[0] != W_k.shape[0]:
        raise AssertionError(
            f"W_q and W_k should both have shape (d_k, {d}) with the same d_k (3 word rows + {D_POS} position rows); "
            f"got {W_q.shape} and {W_k.shape}"
        )
    W_v = np.eye(d)
    for words in _sentences():
        I = word_and_position(one_hot(words, SAW_VOCABULARY), D_POS)
        _, A_prime = self_attention(I, W_q, W_k, W_v)
        N = len(words)
        queries = np.arange(N - 1)
        to_next = A_prime[queries + 1, queries]
        if np.all(to_next > 0.9):
            continue
        if N > 2 and np.all(A_prime[queries[1:] - 1, queries[1:]] > 0.5):
            raise AssertionError("Each word attends to the word before it: shift the other way (R_1 instead of R_-1).")
        if np.all(np.diag(A_prime) > 0.5):
            raise AssertionError(
                "Each word attends to itself: the query of position i must look like the key of position i + 1."
            )
        i = int(queries[np.argmin(to_next)])
        raise AssertionError(
            f"In a sentence of {N} words, query {i + 1} gives only {to_next.min():.2f} to key {i + 2} (needs > 0.9). "
            "Are the scores large enough? Multiply W_q by a larger number."
        )
    return ("Right: every word except the last attends to the word after it (weight > 0.9) in sentences of 2 to 40 "
            "words.")


def check_two_before(beta):
    """Check a relative-position bias ``beta`` (offsets -r .. r) that looks two words back.

    Offsets beyond -r and r are clipped to them, so a bonus at offset -2 alone needs r >= 3.
    With no content (zero W_q and W_k), every query i >= 3 must give weight > 0.9 to key
    i - 2, in sequences of 3, 10 and 600 positions.

    Parameters
    ----------
    beta : (2r + 1,) array_like
        ``beta[r + o]`` is the score bias for key j = i + o.

    Returns
    -------
    str
        A confirmation when every length passes.
    """
    beta = _as_float_array("beta", beta)
    if beta.ndim != 1 or beta.shape[0] % 2 == 0:
        raise AssertionError(f"beta should be one row of odd length 2r + 1 (offsets -r .. r, beta[r] is offset 0); got shape {beta.shape}")
    r = beta.shape[0] // 2
    if r < 3:
        raise AssertionError(
            f"With r = {r}, every offset below -{r} is clipped to -{r}, so offset -2 shares its bias with other "
            "offsets (all the keys farther back). Use r >= 3, so that offset -2 has an entry of its own."
        )
    zeros = np.zeros((1, 3))
    for N in (3, 10, 600):
        I = np.random.default_rng(N).normal(size=(3, N))
        _, A_prime = relative_self_attention(I, zeros, zeros, np.eye(3), beta)
        queries = np.arange(2, N)
        back_two = A_prime[queries - 2, queries]
        if np.all(back_two > 0.9):
            continue
        if np.all(A_prime[np.arange(N - 2) + 2, np.arange(N - 2)] > 0.5):
            raise AssertionError("That is two words after: offset j - i = -2 sits at beta[r - 2], left of the centre beta[r].")
        raise AssertionError(
            f"With N = {N}, some query gives only {back_two.min():.2f} to the key two before it (needs > 0.9): "
            "make beta[r - 2] larger than the other entries by a wide margin."
        )
    return "Right: every query from position 3 on attends two words back, at every length tried, up to 600 positions."
