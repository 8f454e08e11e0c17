"""The checkers of chapter 6: the reference solutions pass, typical wrong answers fail with a hint."""

import numpy as np
import pytest

from attn import positional
from attn.exercises import ch06

D_WORDS = 3  # I, saw, a


# --- reference solutions (the same ones the chapter folds away) --------------------------------

def distance_profile(d, N):
    omega = positional.frequencies(d)
    return np.cos(np.outer(np.arange(N), omega)).sum(axis=1)  # sum_m cos(delta w_m)


def position_weights(k, c=30.0):
    """W_q, W_k on the (3 + 16)-row layout: the query of position i looks like the key of position i + k."""
    zeros = np.zeros((ch06.D_POS, D_WORDS))
    W_q = c * np.hstack([zeros, positional.shift_matrix(ch06.D_POS, k)])
    W_k = np.hstack([zeros, np.eye(ch06.D_POS)])
    return W_q, W_k


def two_before(K=3, bonus=20.0):
    w = np.zeros(2 * K + 1)
    w[K - 2] = bonus
    return w


# --- distance profile ----------------------------------------------------------------------------

def test_distance_profile_reference_passes():
    assert ch06.check_distance_profile(distance_profile).startswith("Right:")


def test_distance_profile_from_the_table_is_refused():
    """The exercise asks for g without positional.sinusoidal: a g that calls it, directly or inside the library, is refused."""
    from attn.positional import sinusoidal as imported_before

    for from_table in (lambda d, N: positional.sinusoidal(d, N)[:, 0] @ positional.sinusoidal(d, N),
                       lambda d, N: imported_before(d, N)[:, 0] @ imported_before(d, N),
                       lambda d, N: positional.word_and_position(np.zeros((1, N)), d)[1:, 0]
                       @ positional.word_and_position(np.zeros((1, N)), d)[1:]):  # builds the table inside
        with pytest.raises(AssertionError, match=r"^g calls attn\.positional\.sinusoidal, which this exercise asks "
                                                 r"you to do without: compute e\^i \. e\^\(i \+ delta\) from delta"):
            ch06.check_distance_profile(from_table)
    assert positional.sinusoidal(4, 3).shape == (4, 3)  # the table is back afterwards
    assert ch06.check_distance_profile(distance_profile).startswith("Right:")


def test_distance_profile_wrong_answers_get_hints():
    def sines(d, N):
        return np.sin(np.outer(np.arange(N), positional.frequencies(d))).sum(axis=1)

    with pytest.raises(AssertionError, match="a cosine, not a sine"):
        ch06.check_distance_profile(sines)
    with pytest.raises(AssertionError, match=r"e\^i \. e\^i = d/2"):
        ch06.check_distance_profile(lambda d, N: distance_profile(d, N) / d)
    with pytest.raises(AssertionError, match="sum over the pairs"):
        ch06.check_distance_profile(lambda d, N: distance_profile(d, N) + 0.01 * np.arange(N))
    with pytest.raises(AssertionError, match=r"should have shape \(5,\)"):
        ch06.check_distance_profile(lambda d, N: np.zeros(N + 1))
    with pytest.raises(AssertionError, match="returned None"):
        ch06.check_distance_profile(lambda d, N: None)
    with pytest.raises(AssertionError, match=r"one column per sine/cosine pair.*sum over the pairs p \(axis=1\)"):
        ch06.check_distance_profile(lambda d, N: np.cos(np.outer(np.arange(N), positional.frequencies(d))))
    with pytest.raises(AssertionError, match="once, not twice"):
        ch06.check_distance_profile(lambda d, N: 2 * distance_profile(d, N))
    with pytest.raises(AssertionError, match="function itself"):
        ch06.check_distance_profile(distance_profile(2, 5))


# --- next word -----------------------------------------------------------------------------------

def test_next_word_reference_passes():
    assert ch06.check_next_word(*position_weights(+1)).startswith("Right:")


def test_next_word_wrong_answers_get_hints():
    with pytest.raises(AssertionError, match="word before it"):
        ch06.check_next_word(*position_weights(-1))
    with pytest.raises(AssertionError, match="attends to itself"):
        ch06.check_next_word(*position_weights(0))
    with pytest.raises(AssertionError, match="larger number"):
        ch06.check_next_word(*position_weights(+1, c=1.0))
    with pytest.raises(AssertionError, match=r"shape \(d_k, 19\)"):
        ch06.check_next_word(np.zeros((2, 16)), np.zeros((2, 16)))
    with pytest.raises(AssertionError, match="same d_k"):
        ch06.check_next_word(np.zeros((2, 19)), np.zeros((3, 19)))
    with pytest.raises(AssertionError, match="array of numbers"):
        ch06.check_next_word("W_q", np.zeros((2, 19)))
    with pytest.raises(AssertionError, match="W_q should be an array of numbers, got ellipsis"):  # the stub
        ch06.check_next_word(..., ...)


# --- two before, with relative positions ---------------------------------------------------------

def test_two_before_reference_passes():
    assert ch06.check_two_before(two_before()).startswith("Right:")
    assert ch06.check_two_before(two_before(K=8, bonus=50.0)).startswith("Right:")


@pytest.mark.parametrize("w, hint", [
    (np.array([20.0, 0.0, 0.0]), "r = 1, every offset below -1 is clipped"),
    (np.array([20.0, 0.0, 0.0, 0.0, 0.0]), "r = 2, every offset below -2 is clipped"),
    (np.array([0.0, 0.0, 0.0, 0.0, 0.0, 20.0, 0.0]), "two words after"),
    (np.array([0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0]), "larger than the other entries"),
    (np.zeros(4), "odd length"),
    (np.zeros((3, 3)), "odd length"),
    (..., "beta should be an array of numbers, got ellipsis"),
])
def test_two_before_wrong_answers_get_hints(w, hint):
    with pytest.raises(AssertionError, match=hint):
        ch06.check_two_before(w)
