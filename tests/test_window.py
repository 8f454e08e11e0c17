"""Tests for attn.window: per-vector FC, window features, parameter counts, the long-range pair."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attn import inputs, window


def saw_sentence():
    return inputs.one_hot(window.SAW_SENTENCE, window.SAW_VOCABULARY)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6))
def test_per_vector_fc_cannot_tell_the_two_saws_apart(seed, d_y):
    rng = np.random.default_rng(seed)
    Y = window.per_vector_fc(saw_sentence(), rng.normal(size=(d_y, 3)), rng.normal(size=d_y))
    np.testing.assert_array_equal(Y[:, 1], Y[:, 3])


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.integers(1, 7), st.integers(0, 3))
def test_per_vector_fc_is_permutation_equivariant(seed, d, N, k):
    rng = np.random.default_rng(seed)
    I, W = rng.normal(size=(d, N)), rng.normal(size=(2, d))
    perm = rng.permutation(N)
    np.testing.assert_allclose(window.per_vector_fc(I[:, perm], W), window.per_vector_fc(I, W)[:, perm])
    # window features at k = 0 are the vectors themselves
    np.testing.assert_array_equal(window.window_features(I, 0), I)
    assert window.window_features(I, k).shape == ((2 * k + 1) * d, N)


def test_window_features_by_hand():
    I = np.array([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]])
    X = window.window_features(I, 1)
    np.testing.assert_array_equal(X[:, 0], [0, 0, 1, 10, 2, 20])
    np.testing.assert_array_equal(X[:, 2], [2, 20, 3, 30, 0, 0])


def test_window_separates_the_saws_and_a_fit_tags_them():
    X = window.window_features(saw_sentence(), 1)
    assert not np.array_equal(X[:, 1], X[:, 3])
    T = inputs.one_hot(window.SAW_TAGS, window.TAGSET)
    W, c = window.fit_fc(X, T)
    assert window.predict_tags(window.per_vector_fc(X, W, c)) == list(window.SAW_TAGS)
    W0, c0 = window.fit_fc(saw_sentence(), T)  # no window: the best fit splits the difference
    tags = window.predict_tags(window.per_vector_fc(saw_sentence(), W0, c0))
    assert tags[1] == tags[3] == "?"


def test_window_fc_equals_fc_on_window_features():
    rng = np.random.default_rng(1)
    I, W = rng.normal(size=(2, 5)), rng.normal(size=(3, 10))
    np.testing.assert_allclose(window.window_fc(I, W, half_width=2), W @ window.window_features(I, 2))


def test_full_window_sees_everything():
    I = np.random.default_rng(2).normal(size=(2, 6))
    X = window.window_features(I, 5)  # k = N - 1
    for i in range(6):
        blocks = X[:, i].reshape(11, 2).T  # (d, 2k + 1)
        np.testing.assert_array_equal(blocks[:, 5 - i : 11 - i], I)


def test_parameter_counts():
    assert window.fc_parameter_count(429, 1024) == 440320
    assert window.window_parameter_count(39, 5, 1024) == 440320  # HW2: 11 frames of 39-dim MFCC
    assert window.window_parameter_count(d=39, half_width=5, d_y=1024) == 440320
    counts = [window.window_parameter_count(39, w, 1024) for w in range(6)]
    assert set(np.diff(counts)) == {2 * 39 * 1024}  # linear in the half-width: each step adds 2 x 39 x 1024


@pytest.mark.parametrize("gap", [1, 3, 10])
def test_long_range_pair_defeats_any_smaller_window(gap):
    past, present, past_tags, present_tags = window.long_range_pair(gap)
    assert len(past) == len(present) == len(past_tags) == gap + 7
    assert past_tags[:-1] == present_tags[:-1] and past_tags[-1] != present_tags[-1]
    assert sum(a != b for a, b in zip(past, present)) == 1
    I_past = inputs.one_hot(past, window.LONG_RANGE_VOCABULARY)
    I_present = inputs.one_hot(present, window.LONG_RANGE_VOCABULARY)
    target = len(past) - 1
    for k in range(target):
        assert np.array_equal(window.window_features(I_past, k)[:, target], window.window_features(I_present, k)[:, target])
    assert not np.array_equal(window.window_features(I_past, target)[:, target],
                              window.window_features(I_present, target)[:, target])


def test_predict_tags():
    assert window.predict_tags(np.array([[1.0, 0.0], [0.0, 2.0], [0.5, 2.0]])) == ["N", "?"]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: window.per_vector_fc(np.ones((3, 2)), np.ones((2, 4))), r"W has shape \(2, 4\) but I has shape \(3, 2\)"),
        (lambda: window.per_vector_fc(np.ones((3, 2)), np.ones((2, 3)), np.ones(3)), r"c has shape \(3,\)"),
        (lambda: window.per_vector_fc(np.ones((3, 0)), np.ones((2, 3))), "N > 0"),
        (lambda: window.window_features(np.ones((3, 2)), -1), "half_width must be an integer >= 0"),
        (lambda: window.window_features(np.ones((3, 2)), 1.5), "half_width must be an integer"),
        (lambda: window.window_fc(np.ones((3, 2)), np.ones((2, 3)), half_width=1), r"W has shape \(2, 3\).*needs 9 columns"),
        (lambda: window.window_parameter_count(0, 1, 1), "d must be"),
        (lambda: window.fit_fc(np.ones((2, 3)), np.ones((1, 4))), r"I_win has shape \(2, 3\) and T has shape \(1, 4\)"),
        (lambda: window.predict_tags(np.ones((2, 3))), "one row per tag"),
        (lambda: window.long_range_pair(0), "gap must be"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
