"""Chapter 11's exercise checkers: the reference solutions pass, typical wrong answers fail with a hint."""

import numpy as np
import pytest

import attn
from attn import pooling, speakers
from attn.exercises import _common, ch11


# --- exercise 1: the masked mean ---------------------------------------------------------------------

def test_masked_mean_reference_passes():
    def masked_mean(X, is_real):
        return (X * is_real[:, None, :]).sum(axis=2) / is_real.sum(axis=1, keepdims=True)
    assert "Right:" in ch11.check_masked_mean(masked_mean)


@pytest.mark.parametrize("wrong, hint", [
    (lambda X, is_real: X.mean(axis=2), "averaged the padding"),
    (lambda X, is_real: (X * is_real[:, None, :]).sum(axis=2) / X.shape[2], "divide by each sequence's own number"),
    (lambda X, is_real: (X * is_real[:, None, :]).sum(axis=2), "wrong mean"),
    (lambda X, is_real: X.mean(axis=1), "should have shape"),
])
def test_masked_mean_wrong_answers_fail(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch11.check_masked_mean(wrong)


@pytest.mark.parametrize("library", [
    pooling.mean_pool,
    lambda X, is_real: pooling.attention_pool(X, np.zeros((X.shape[0], 1, X.shape[2])), np.zeros(1), is_real)[0],
    lambda X, is_real: attn.pooling._mean_pool(X, is_real),
])
def test_masked_mean_refuses_the_library_poolings(library):
    with pytest.raises(_common.Refused, match="asks you to do without"):
        ch11.check_masked_mean(library)


# --- exercise 2: attention pooling -------------------------------------------------------------------

def test_attention_pool_reference_passes():
    assert "Right:" in ch11.check_attention_pool(lambda V, K, q: V @ attn.softmax(K.T @ q / np.sqrt(K.shape[0])))


@pytest.mark.parametrize("wrong, hint", [
    (lambda V, K, q: V @ attn.softmax(K.T @ q), "divide the scores by sqrt"),
    (lambda V, K, q: V @ (K.T @ q / np.sqrt(K.shape[0])), "softmax is missing"),
    (lambda V, K, q: V.mean(axis=1), "that is mean pooling"),
    (lambda V, K, q: V @ attn.softmax(-K.T @ q / np.sqrt(K.shape[0])), "wrong pooled vector"),
    (lambda V, K, q: attn.softmax(K.T @ q), "should have shape"),
])
def test_attention_pool_wrong_answers_fail(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch11.check_attention_pool(wrong)


@pytest.mark.parametrize("library", [
    lambda V, K, q: pooling.attention_pool(V[None], K[None], q, np.ones((1, V.shape[1]), bool),
                                           scale=1 / np.sqrt(K.shape[0]))[0][0],
    lambda V, K, q: attn.pooling._attention_pool(V[None], K[None], q, np.ones((1, V.shape[1]), bool),
                                                 1 / np.sqrt(K.shape[0]))[0][0],
])
def test_attention_pool_refuses_the_library_pooling(library):
    with pytest.raises(_common.Refused, match="asks you to do without"):
        ch11.check_attention_pool(library)


# --- exercise 3: the mean frame ----------------------------------------------------------------------

def test_mean_frame_reference_passes():
    assert "Right:" in ch11.check_mean_frame(lambda N: np.r_[1, 1, 1, 1, N - 4, 2, 2] / N)


@pytest.mark.parametrize("wrong, hint", [
    (lambda N: np.r_[1, 1, 1, 1, 0, 0, 0] / N, "silence fills"),
    (lambda N: np.r_[1, 1, 1, 1, N - 4, 1, 1] / N, "each of the 2 marks"),
    (lambda N: np.r_[2, 2, 2, 2, N - 4, 2, 2] / N, "exactly one frame"),
    (lambda N: np.r_[1, 1, 1, 1, N - 4] / N, "has 7 numbers"),
])
def test_mean_frame_wrong_answers_fail(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch11.check_mean_frame(wrong)


def test_mean_frame_refuses_to_generate_utterances():
    def generated(N):
        return speakers.make_utterances(1, seed=0, min_len=N, max_len=N, noise=0.0)[0][0].mean(axis=1)

    with pytest.raises(_common.Refused, match="make_utterances"):
        ch11.check_mean_frame(generated)


# --- beyond the convention every checker keeps (tests/test_exercises_convention.py): a missing return -----------

CHECKERS = ((ch11.check_masked_mean, "masked_mean"), (ch11.check_attention_pool, "pool"),
            (ch11.check_mean_frame, "mean_frame"))


@pytest.mark.parametrize("checker, name", CHECKERS, ids=[n for _, n in CHECKERS])
def test_a_missing_return_gets_a_hint(checker, name):
    with pytest.raises(AssertionError, match=f"^{name} returned None"):
        checker(lambda *args: None)
