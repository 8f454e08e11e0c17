"""The checkers of chapters 1 and 2: the reference solutions pass, typical wrong answers fail."""

import numpy as np
import pytest

from attn import inputs, window
from attn.exercises import ch01, ch02


# --- chapter 1 ------------------------------------------------------------------------------------

def test_frame_count_reference_passes():
    def frame_count(n_samples, window, hop):
        return 0 if n_samples < window else 1 + (n_samples - window) // hop

    assert "Right" in ch01.check_frame_count(frame_count)


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda n, w, h: n // h, "counts frame starts, but the last frames would run past"),  # ignores the window
        (lambda n, w, h: 1 + (n - w) // h, "no frame fits"),  # negative for short signals
        (lambda n, w, h: max(0, (n - w) // h), "one frame short"),  # forgets the frame at sample 0
        (lambda n, w, h: max(0, 1 + -(-(n - w) // h)), "partial frame"),  # rounds up
        (lambda n, w, h: round(n / h), "frame starts 0, hop"),
        (lambda n, w, h: None, r"frame_count\(16000, 400, 160\) returned None, expected 98"),
        (lambda n, w, h: n / 0, "raised ZeroDivisionError"),
        (3, "function itself"),
    ],
)
def test_frame_count_wrong_fails(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch01.check_frame_count(wrong)


def test_horse_reference_passes():
    assert "Right" in ch01.check_horse_embedding([0.1, 0.93, 0.0, 0.4])


@pytest.mark.parametrize(
    "wrong, hint",
    [
        ([0.9, 0.1, 0.0, 0.4], "animal"),  # an action
        ([0.0, 0.5, 0.5, 0.0], "animal|non-animal"),
        ([0.0, 0.0, 0.0, 0.0], "zero"),
        ([0.4, 0.9, 0.0, 0.5], "cosine with 'jump' is 0.613 >= 0.6: horse is too close to a non-animal"),
        ([float("nan"), 1.0, 0.0, 0.0], "finite"),
        ([1.0, 2.0], "shape"),
    ],
)
def test_horse_wrong_fails(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch01.check_horse_embedding(wrong)


def test_padding_reference_passes():
    lengths = [inputs.frame_count(960000)] + [inputs.frame_count(16000)] * 9
    assert "Right" in ch01.check_padding_cost(inputs.padding_fraction(lengths))
    assert "Right" in ch01.check_padding_cost(0.8853)


@pytest.mark.parametrize("wrong, hint", [
    (0.5, "not it"), (1 - 6880 / 60000 + 0.01, "not it"), (188.5, "between"), ("x", "one number"),
    (88.53, "percentage"),  # 100 times the fraction
    (1 - 0.8853, "share of real frames"),  # the complement
    (1 - 98 / 5998, "one short utterance's row"),  # one row instead of the whole batch
])
def test_padding_wrong_fails(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch01.check_padding_cost(wrong)


# --- chapter 2 ------------------------------------------------------------------------------------

def test_window_features_reference_passes():
    def stack(I, k):
        d, N = I.shape
        padded = np.concatenate([np.zeros((d, k)), I, np.zeros((d, k))], axis=1)
        return np.concatenate([padded[:, m : m + N] for m in range(2 * k + 1)], axis=0)

    assert "Right" in ch02.check_window_features(stack)


def _reversed_blocks(I, k):
    return window.window_features(I[:, ::-1], k)[:, ::-1]


def _no_padding_wraps(I, k):
    return np.concatenate([np.roll(I, k - m, axis=1) for m in range(2 * k + 1)], axis=0)


def _edge_padding(I, k):
    padded = np.pad(I, ((0, 0), (k, k)), mode="edge")
    return np.concatenate([padded[:, m : m + I.shape[1]] for m in range(2 * k + 1)], axis=0)


def _interleaved(I, k):  # rows ordered (feature, offset) instead of (offset, feature)
    d, N = I.shape
    return window.window_features(I, k).reshape(2 * k + 1, d, N).transpose(1, 0, 2).reshape(-1, N)


@pytest.mark.parametrize(
    "wrong, hint",
    [(_reversed_blocks, "wrong order"), (_no_padding_wraps, "wrapped around.*zero vectors"),
     (_edge_padding, "copies of the first and last vectors.*zero vectors"), (_interleaved, "interleaved"),
     (lambda I, k: I, "shape"), ("f", "function"), (lambda I, k: None, "returned None")],
)
def test_window_features_wrong_fails(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch02.check_window_features(wrong)


@pytest.mark.parametrize("gap", [1, 4, 20])
def test_smallest_window_reference_passes(gap):
    past, present, _, _ = window.long_range_pair(gap)
    I1 = inputs.one_hot(past, window.LONG_RANGE_VOCABULARY)
    I2 = inputs.one_hot(present, window.LONG_RANGE_VOCABULARY)
    k = next(k for k in range(len(past)) if not np.array_equal(window.window_features(I1, k)[:, -1],
                                                               window.window_features(I2, k)[:, -1]))
    assert "Right" in ch02.check_smallest_window(gap, k)
    for wrong, hint in [(k - 1, "does not reach"), (k + 1, "not the smallest"), (float(k), "whole number"),
                        (2 * k + 1, "width 2k \\+ 1")]:
        with pytest.raises(AssertionError, match=hint):
            ch02.check_smallest_window(gap, wrong)


def test_hw2_reference_passes():
    assert "Right" in ch02.check_hw2_first_layer((11 * 39 + 1) * 1024)


@pytest.mark.parametrize(
    "wrong, hint",
    [(11 * 39 * 1024, "weights only"), (40 * 1024, "one frame"), (429 * 39, "not it"),
     ((5 * 39 + 1) * 1024, "5 frames on EACH side"), ((6 * 39 + 1) * 1024, "5 frames on EACH side"),
     ((10 * 39 + 1) * 1024, "leaves out the centre frame"), (440320.5, "not a whole number"),
     (None, "None is not it")],
)
def test_hw2_wrong_fails(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch02.check_hw2_first_layer(wrong)
