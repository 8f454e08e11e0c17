"""Checkers for the exercises of chapter 9: the cost of attention.

Each checker raises ``AssertionError`` with a hint when the answer is wrong and returns a
short message when it is right.
"""

import numpy as np

from ..core import band_mask, softmax
from ._common import call_student, call_without


def check_longest_speech(seconds):
    """Check the longest speech (100 vectors a second) whose attention matrix fits in 1 GiB of float32.

    Parameters
    ----------
    seconds : float
        The student's answer, in seconds.

    Returns
    -------
    str
        A confirmation when the answer is within 0.01 s of N = 16384 vectors, 163.84 s.
    """
    try:
        seconds = float(seconds)
    except (TypeError, ValueError):
        raise AssertionError(f"answer with a number of seconds, got {seconds!r}") from None
    N = int(np.sqrt(2**30 // 4))  # N^2 float32 numbers of 4 bytes each fill 2^30 bytes
    right = N / 100
    if abs(seconds - right) <= 0.01:
        return f"Right: N = {N} vectors, {right:.2f} s of speech (under three minutes)."
    if seconds == N:
        raise AssertionError(f"{N} is the number of vectors N: the question asks for seconds, at 100 vectors a second")
    if abs(seconds - right / 60) <= 0.01:
        raise AssertionError(f"{seconds} is in minutes: answer in seconds")
    if abs(seconds - np.sqrt(2**30 / 8) / 100) <= 0.01:
        raise AssertionError("That is for float64 (8 bytes a number): the question asks for float32, 4 bytes.")
    if abs(seconds - 2**30 / 4 / 100) <= 1 or abs(seconds - 2**30 / 4 / 100 / 60) <= 1:
        raise AssertionError("The matrix holds N x N numbers, not N: take a square root.")
    if abs(seconds - np.sqrt(2**30) / 100) <= 0.01:
        raise AssertionError("Each float32 number takes 4 bytes: N^2 * 4 <= 2^30.")
    raise AssertionError("Solve N^2 * 4 bytes <= 2^30 bytes (1 GiB) for N, then divide by 100 vectors a second.")


def _merge_cases():
    rng = np.random.default_rng(8)
    for n1, n2, spread in ((3, 4, 1.0), (1, 1, 5.0), (6, 2, 1000.0), (5, 5, 1e6)):
        x1, x2 = rng.normal(scale=spread, size=n1), rng.normal(scale=spread, size=n2)
        yield x1, x2
    yield np.array([2000.0]), np.array([-2000.0, 1990.0])  # exp of either maximum alone overflows


def check_merge(merge):
    """Check ``merge(m1, l1, m2, l2) -> (m, l)``, the step at the heart of the online softmax.

    For a part x1 of the scores, m1 = max(x1) and l1 = sum(exp(x1 - m1)); likewise for x2.
    ``merge`` must return m = max of all scores and l = sum(exp(x - m)) over both parts,
    from the four numbers alone.

    Returns
    -------
    str
        A confirmation when the merged summaries give the softmax's denominator on every case,
        including parts whose maxima differ by thousands.
    """
    for x1, x2 in _merge_cases():
        m1, m2 = x1.max(), x2.max()
        l1, l2 = np.exp(x1 - m1).sum(), np.exp(x2 - m2).sum()
        with np.errstate(all="ignore"):
            result = call_student(merge, "merge", m1, l1, m2, l2)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise AssertionError("merge should return the pair (m, l)")
        m, l = (float(v) for v in result)
        x = np.concatenate([x1, x2])
        if not np.isfinite(m) or not np.isfinite(l):
            raise AssertionError(
                f"merge({m1:.4g}, {l1:.4g}, {m2:.4g}, {l2:.4g}) gave ({m}, {l}): never exponentiate a "
                "maximum itself, only differences that are <= 0"
            )
        if not np.isclose(m, x.max(), rtol=1e-12):
            raise AssertionError("m should be the larger of m1 and m2")
        l_right = np.exp(x - x.max()).sum()
        if not np.isclose(l, l_right, rtol=1e-9):
            if np.isclose(l, l1 + l2, rtol=1e-9):
                raise AssertionError("l1 and l2 are sums relative to different maxima: rescale each by exp(m_k - m)")
            with np.errstate(all="ignore"):
                upside_down = l1 * np.exp(m - m1) + l2 * np.exp(m - m2)
            if np.isclose(l, upside_down, rtol=1e-9):
                raise AssertionError("the rescaling is upside down: l_k was taken relative to m_k, so it becomes "
                                     "l_k * exp(m_k - m) relative to m, a factor <= 1")
            raise AssertionError(f"l should be sum(exp(x - m)) over both parts = {l_right:.6g}, got {l:.6g}")
        weights = np.exp(x - m) / l
        if not np.allclose(weights, softmax(x), rtol=1e-9, atol=1e-15):
            raise AssertionError("with your m and l the weights exp(x - m) / l do not equal the softmax")
    return "Right: (m, l) after merging gives exactly the softmax's maximum and denominator."


_NO_MASK = ("attn.core.band_mask", "attn.band_mask")
_NO_MASK_HINT = "count the scores from N and width alone, without building the N x N mask"


def _band_count(N, width):
    """The number of True entries of ``band_mask(N, width)``, from N and width alone."""
    w = min(width, N - 1)  # a band reaching past both ends keeps every key: the same as width N - 1
    return N * (2 * w + 1) - w * (w + 1)


def _large_call(count, N, width):
    """``count(N, width)`` at an N where no mask fits in memory, with band_mask out of reach."""
    try:
        return call_without(count, "count", N, width, forbidden=_NO_MASK, hint=_NO_MASK_HINT)
    except AssertionError as error:
        if isinstance(error.__cause__, MemoryError):
            raise AssertionError(
                f"count({N}, {width}) ran out of memory: an N x N mask at N = {N} holds {N * N:.0e} entries; "
                + _NO_MASK_HINT) from None
        raise


def check_band_count(count):
    """Check ``count(N, width)``: how many (query, key) scores truncated self-attention keeps.

    ``count`` may not call ``band_mask`` (every call runs with it out of reach) and is also called at N = 10**6, where an N x N mask
    (10**12 entries) does not fit in memory: it must count without building the mask.

    Returns
    -------
    str
        A confirmation when ``count`` equals ``band_mask(N, width).sum()`` for every N <= 40
        and width <= 45 (including bands wider than the sequence), and the closed count at
        N = 10**6 for several widths.
    """
    _large_call(count, 5, 2)  # refuses band_mask at once, with its hint
    # every case below runs with band_mask out of reach too
    for N in range(1, 41):
        for width in range(0, 46):
            right = int(band_mask(N, width).sum())
            got = call_without(count, "count", N, width, forbidden=_NO_MASK, hint=_NO_MASK_HINT)
            if got != right:
                if got == N * (2 * width + 1) - width * (width + 1) and width >= N:
                    raise AssertionError(
                        f"count({N}, {width}) = {got}: N (2 width + 1) - width (width + 1) holds only while the band "
                        f"is narrower than the sequence; with width >= N every query sees all N keys, N^2 = {right}"
                    )
                if got == N * 2 * width - width * (width + 1) or got == N * 2 * width:
                    raise AssertionError(
                        f"count({N}, {width}) = {got}: each query also keeps its own key, j = i (the right count is {right})"
                    )
                if got == N * (2 * width + 1):
                    raise AssertionError(
                        f"count({N}, {width}) = {got}: near the ends of the sequence a query has fewer than "
                        f"{width} neighbours on one side, and no query sees more than N keys (the right count is {right})"
                    )
                raise AssertionError(f"count({N}, {width}) should be {right}, got {got}")
    N = 10**6
    for width in (0, 64, 3 * N):
        got, right = _large_call(count, N, width), _band_count(N, width)
        if got != right:
            raise AssertionError(f"count({N}, {width}) should be {right}, got {got}")
    return "Right: for a fixed width the count grows like (2 width + 1) N, linearly in N."
