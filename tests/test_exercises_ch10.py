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


def _modules_binding(names, attribute):
    """Those of the library modules ``names`` that bind ``attribute`` (a module that does not exist is passed over)."""
    import importlib

    found = []
    for name in names:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(module, attribute):
            found.append(module)
    return found


# The library's function (attn.train and attn.backprop bind it) and the unchecked helper behind it (attn.backprop and
# attn.pooling bind that): called directly or from inside a function of the reader's, each is refused with a hint.
@pytest.mark.parametrize("names, attribute, hint", [
    (("attn.train", "attn.backprop"), "softmax_columns_backward", ": within column i"),
    (("attn.backprop", "attn.pooling"), "_softmax_backward", ""),
])
def test_softmax_backward_refuses_the_library_functions(names, attribute, hint):
    modules = _modules_binding(names, attribute)
    assert modules
    readers = [getattr(m, attribute) for m in modules]
    readers += [(lambda m: lambda A_prime, dA_prime: getattr(m, attribute)(A_prime, dA_prime))(m) for m in modules]
    for reader in readers:
        with pytest.raises(AssertionError, match=rf"^backward calls attn\.\w+\.{attribute}, which this "
                                                 rf"exercise asks you to do without{hint}"):
            ch10.check_softmax_backward(reader)
    assert all(getattr(m, attribute).__name__ == attribute for m in modules)  # restored
    assert "Right:" in ch10.check_softmax_backward(softmax_backward_reference)


@pytest.mark.parametrize("wrong, hint", [
    (lambda A_prime, dA_prime: A_prime * dA_prime, "is missing"),
    (lambda A_prime, dA_prime: A_prime * (dA_prime - (A_prime * dA_prime).sum(axis=1, keepdims=True)),
     "summed over a row"),
    (lambda A_prime, dA_prime: dA_prime, "dA is wrong"),
    (lambda A_prime, dA_prime: dA_prime[:1], "should have shape"),
    (lambda A_prime, dA_prime: A_prime * ((A_prime * dA_prime).sum(axis=0) - dA_prime), "opposite sign"),
    (lambda A_prime, dA_prime: dA_prime * A_prime * (1 - A_prime), "only the diagonal of the softmax's Jacobian"),
    (lambda A_prime, dA_prime: None, "backward returned None: end it with `return`"),
    (lambda A_prime, dA_prime: A_prime @ dA_prime[:2], "backward raised ValueError"),
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
    (lambda I, A_prime, dO: I @ A_prime @ dO.T, r"returned dW_v transposed, \(3, 2\)"),
    (lambda I, A_prime, dO: dO @ A_prime.T, r"should have shape \(2, 3\)"),
    (lambda I, A_prime, dO: None, "grad_W_v returned None"),
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


def test_window_ceiling_refuses_the_library_function():
    for reader in (D.window_ceiling, lambda sentences, half_width: D.window_ceiling(sentences, half_width)):
        with pytest.raises(AssertionError, match=r"^ceiling calls attn\.tagging_data\.window_ceiling, which this "
                                                 r"exercise asks you to do without: count the ambiguous words"):
            ch10.check_window_ceiling(reader)
    assert "Right:" in ch10.check_window_ceiling(ceiling_reference)  # restored afterwards


def ceiling_zero_when_blind(sentences, half_width):
    n_tokens = sum(len(t) for t, _ in sentences)
    return 1 - np.sum(D.cue_distances(sentences) > half_width) / n_tokens


def ceiling_strict(sentences, half_width):
    n_tokens = sum(len(t) for t, _ in sentences)
    return 1 - 0.5 * np.sum(D.cue_distances(sentences) >= half_width) / n_tokens


def ceiling_over_ambiguous_words(sentences, half_width):
    far = D.cue_distances(sentences)
    return 1 - 0.5 * np.sum(far > half_width) / far.size


@pytest.mark.parametrize("wrong, hint", [
    (ceiling_zero_when_blind, "half the time"),
    (ceiling_strict, "exactly half_width words away"),
    (lambda sentences, half_width: 0.5, "expected"),
    (ceiling_over_ambiguous_words, "divided by the .* ambiguous words only"),
    (lambda sentences, half_width: None, "ceiling returned None"),
    (lambda sentences, half_width: "high", "one number"),
    (lambda sentences: 1.0, "ceiling raised TypeError"),
])
def test_window_ceiling_wrong_answers_fail(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch10.check_window_ceiling(wrong)


# --- exercise 3, second part: the smallest window that reaches 0.95, and its size ----------------------

def smallest_window_reference():
    from attn import train

    _, test_set = train.default_data("cue")
    r = next(r for r in range(0, 40) if D.window_ceiling(test_set, r) >= 0.95)
    return r, sum(v.size for v in train.init_window_model(0, half_width=r).values())


def test_window_size_reference_passes():
    r, n_params = smallest_window_reference()
    assert (r, n_params) == (9, 2718)  # the figures chapter 10's solution prints
    assert ch10.check_window_size(r, n_params).startswith("Right: r = 9, a window of 19 words, and 2718 parameters")
    assert ch10.check_window_size(r, n_params).endswith("times the chapter's window tagger (r = 2).")
    assert ch10.check_window_size(9.0, 2718.0).startswith("Right:")


@pytest.mark.parametrize("answer, hint", [
    ((8, 2718), r"with r = 8 the ceiling on test_set is 0.93\d\d, below 0.95"),
    ((10, 2718), r"not the smallest: r = 9 reaches it already \(0.95"),
    ((100, 2718), "not the smallest: r = 99 reaches it already$"),
    ((19, 2718), r"the window's width 2r \+ 1: the question asks for the half-width r"),
    ((-1, 2718), "r = -1: a half-width counts words on each side, so it is 0 or more"),
    ((9, 2718.5), "not a whole number"),
    ((9.5, 2718), "not a whole number"),
    (("9", 2718), "r should be a whole number"),
    ((9, 2718 - 22), "biases b1 and b2"),
    ((9, 2718 - 8 * 21), "word embeddings W_emb"),
    ((9, 5), "counts the weight arrays"),
    ((9, 1000), "add up the sizes of every array"),
])
def test_window_size_wrong_answers_fail(answer, hint):
    with pytest.raises(AssertionError, match=hint):
        ch10.check_window_size(*answer)


def test_window_size_r2_parameter_count_gets_a_hint():
    from attn import train

    size_r2 = sum(v.size for v in train.init_window_model(0, half_width=2).values())
    with pytest.raises(AssertionError, match="the chapter's tagger with r = 2: build the model for your r"):
        ch10.check_window_size(9, size_r2)
