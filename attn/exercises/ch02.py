"""Checkers for the exercises of chapter 2 (sequence labeling with a window).

Each checker raises ``AssertionError`` with a hint when the answer is wrong and returns a
short message when it is right.
"""

import numpy as np

from .. import window
from ._common import call_without, whole_number


def _stack(I, r, mode):
    """The window columns of half-width ``r`` with the sequence padded by ``np.pad``'s ``mode`` (for the hints)."""
    N = I.shape[1]
    padded = np.pad(I, ((0, 0), (r, r)), mode=mode)
    return np.concatenate([padded[:, m : m + N] for m in range(2 * r + 1)], axis=0)


def check_window_features(window_features):
    """Exercise ex-ch02-stack: a function ``window_features(I, r)`` returning ((2r+1) d, N) columns.

    Column i must be [a^{i-r}; ...; a^{i+r}], oldest neighbour first, zeros outside the sequence
    (r is the half-width, ``half_width`` in :mod:`attn.window`). The library's window functions,
    ``attn.window.window_features`` and ``attn.classifiers.window_frames``, are out of reach.
    """
    rng = np.random.default_rng(2021)
    for d, N, r in [(1, 3, 1), (2, 4, 1), (3, 5, 2), (2, 3, 4), (3, 6, 0)]:
        I = rng.normal(size=(d, N))
        expected = window.window_features(I, r)
        got = np.asarray(call_without(
            window_features, "window_features", I, r,
            forbidden=("attn.window.window_features", "attn.classifiers.window_frames"),
            hint="pad I with r zero columns on each side (np.zeros or np.pad) and stack 2r + 1 shifted slices",
        ))
        if got.shape != expected.shape:
            raise AssertionError(f"for I of shape {I.shape} and r = {r} the result needs shape {expected.shape}, "
                                 f"got {got.shape}")
        if not np.allclose(got, expected):
            if np.allclose(got, window.window_features(I[:, ::-1], r)[:, ::-1]):
                raise AssertionError("the blocks are in the wrong order: the neighbour at offset -r comes first")
            for mode, what in (("edge", "copies of the first and last vectors"), ("wrap", "the sequence wrapped around")):
                if r > 0 and np.allclose(got, _stack(I, r, mode)):
                    raise AssertionError(f"outside the sequence you used {what}: positions outside the sequence are "
                                         "zero vectors")
            if np.allclose(got, expected.reshape(2 * r + 1, d, N).transpose(1, 0, 2).reshape(-1, N)):
                raise AssertionError(f"the entries are interleaved: block m (rows m*d ... (m+1)*d - 1, d = {d}) must "
                                     "hold one whole neighbour; stack the vectors one under the other")
            raise AssertionError(
                f"wrong values for I of shape {I.shape}, r = {r}: block m of column i is a^(i + m - r), "
                "or zeros when that position is outside the sequence"
            )
    return "Right: each column is the window around its position, padded with zeros."


def check_smallest_window(gap, r):
    """Exercise ex-ch02-reach: the smallest half-width r that tells the two sentences of
    ``window.long_range_pair(gap)`` apart at their last word."""
    past, present, _, _ = window.long_range_pair(gap)
    expected = len(past) - 1
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)):
        raise AssertionError(f"r is a whole number of positions, got {r!r}")
    if r < expected:
        raise AssertionError(f"with r = {r} the window around the last word does not reach the first word, "
                             "where the sentences differ")
    if r == 2 * expected + 1:
        raise AssertionError(f"{r} is the window's width 2r + 1: the question asks for the half-width r")
    if r > expected:
        raise AssertionError(f"r = {r} works but is not the smallest: the first word is {expected} positions "
                             "before the last")
    return f"Right: r = {expected}; a window of 2r + 1 = {2 * expected + 1} vectors, for a sentence of {len(past)} words."


def check_hw2_first_layer(count):
    """Exercise ex-ch02-params: parameters of a fully connected layer from 11 frames of
    39-dim MFCC (5 each side) to 1024 outputs, weights and biases."""
    expected = window.window_parameter_count(39, 5, 1024)
    if count == window.window_parameter_count(39, 5, 1024) - 1024:
        raise AssertionError(f"{count} counts the weights only: every output also has a bias")
    if isinstance(count, float) and count != int(count):
        whole_number("count", count)
    if count in ((5 * 39 + 1) * 1024, (6 * 39 + 1) * 1024):
        raise AssertionError(f"{count} is a window of 5 or 6 frames: 5 frames on EACH side plus the centre, 11 in all")
    if count == (10 * 39 + 1) * 1024:
        raise AssertionError(f"{count} leaves out the centre frame: 5 on each side plus the centre is 11 frames")
    if count == 39 * 1024 + 1024:
        raise AssertionError(f"{count} is a layer on one frame: the window holds 2 x 5 + 1 = 11 frames")
    if count != expected:
        raise AssertionError(f"{count} is not it: the input has 11 x 39 = 429 entries and there are 1024 outputs")
    return f"Right: (429 + 1) x 1024 = {expected} parameters."
