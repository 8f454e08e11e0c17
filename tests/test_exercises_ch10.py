"""Chapter 10's exercise checkers: the reference solutions pass, typical wrong answers fail with a hint."""

import numpy as np
import pytest

from attn import tagging_data as D
from attn.exercises import ch10


# --- exercise 1: the column-softmax gradient ---------------------------------------------------------

def softmax_backward_reference(A_prime, dA_prime):
    return A_prime * (dA_prime - (A_prime * dA_prime).sum(axis=0))


def test_softmax_backward_reference_passes():
    assert "Right:" in ch10.check_softmax_backward(softmax_backward_reference)


@pytest.mark.parametrize("wrong, hint", [
    (lambda A_prime, dA_prime: A_prime * dA_prime, "is missing"),
    (lambda A_prime, dA_prime: A_prime * (dA_prime - (A_prime * dA_prime).sum(axis=1, keepdims=True)),
     "summed over a row"),
    (lambda A_prime, dA_prime: dA_prime, "dA is wrong"),
    (lambda A_prime, dA_prime: dA_prime[:1], "should have shape"),
])
def test_softmax_backward_wrong_answers_fail(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch10.check_softmax_backward(wrong)


# --- exercise 2: the gradient of W_v -----------------------------------------------------------------

def test_value_gradient_reference_passes():
    assert "Right:" in ch10.check_value_gradient(lambda I, A_prime, dO: dO @ A_prime.T @ I.T)


@pytest.mark.parametrize("wrong, hint", [
    (lambda I, A_prime, dO: dO @ I.T, "attention weights are missing"),
    (lambda I, A_prime, dO: dO @ A_prime @ I.T, "transpose A_prime"),
    (lambda I, A_prime, dO: 2 * dO @ A_prime.T @ I.T, "dW_v is wrong"),
    (lambda I, A_prime, dO: I @ A_prime @ dO.T, "should have shape"),
])
def test_value_gradient_wrong_answers_fail(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch10.check_value_gradient(wrong)


# --- exercise 3: the window ceiling ------------------------------------------------------------------

def ceiling_reference(sentences, half_width):
    n_tokens = sum(len(t) for t, _ in sentences)
    blind = 0
    for tokens, _ in sentences:
        cue = D.cue_position(tokens)
        blind += sum(abs(i - cue) > half_width for i in np.flatnonzero(D.is_ambiguous(tokens)))
    return 1 - 0.5 * blind / n_tokens


def test_window_ceiling_reference_passes():
    assert "Right:" in ch10.check_window_ceiling(ceiling_reference)


def ceiling_zero_when_blind(sentences, half_width):
    n_tokens = sum(len(t) for t, _ in sentences)
    return 1 - np.sum(D.cue_distances(sentences) > half_width) / n_tokens


def ceiling_strict(sentences, half_width):
    n_tokens = sum(len(t) for t, _ in sentences)
    return 1 - 0.5 * np.sum(D.cue_distances(sentences) >= half_width) / n_tokens


@pytest.mark.parametrize("wrong, hint", [
    (ceiling_zero_when_blind, "half the time"),
    (ceiling_strict, "exactly half_width words away"),
    (lambda sentences, half_width: 0.5, "expected"),
])
def test_window_ceiling_wrong_answers_fail(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch10.check_window_ceiling(wrong)
