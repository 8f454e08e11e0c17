"""The checkers of chapters 1 and 2: the reference solutions pass, typical wrong answers fail."""

import re

import numpy as np
import pytest

from attn import classifiers, inputs, window
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


@pytest.mark.parametrize("reference", [
    inputs.frame_count,                                      # the function itself
    lambda n, w, h: inputs.frame_count(n, w, h),             # through attn.inputs
    lambda n, w, h: __import__("attn").speech.frame_count(n, w, h),   # through attn.speech, where it is defined
    lambda n, w, h: inputs.frame_signal(np.zeros(n), sample_rate=1000, window_ms=w, shift_ms=h).shape[1],  # calls it
])
def test_frame_count_refuses_the_library_count(reference):
    assert reference(16000, 400, 160) == 98   # it would pass otherwise
    with pytest.raises(AssertionError, match="^frame_count calls attn.speech.frame_count, which this exercise asks "
                                             "you to do without: count frame starts"):
        ch01.check_frame_count(reference)
    assert inputs.frame_count(16000) == 98   # the library function is back afterwards


def test_frame_count_refuses_an_alias_imported_earlier():
    from attn.inputs import frame_count as imported_before

    with pytest.raises(AssertionError, match="calls attn.speech.frame_count"):
        ch01.check_frame_count(lambda n, w, h: imported_before(n, w, h))


def test_horse_reference_passes():
    assert "Right" in ch01.check_horse_embedding([0.1, 0.93, 0.0, 0.4])


@pytest.mark.parametrize("vector", [[0.1, 0.93, 0.0, 0.4], [0.0, 1.0, 0.0, 0.3], [0.05, 0.9, 0.1, 0.45]])
def test_horse_message_bound_holds(vector):
    """The success message's "cosine c or more" is a true lower bound: c is rounded down, never up."""
    message = ch01.check_horse_embedding(vector)
    bound = float(message.split("cosine ")[1].split(" or more")[0])
    v = np.asarray(vector, dtype=float)
    sims = inputs.cosine_similarity(v[:, None], inputs.embed(("dog", "rabbit", "cat")))[0]
    assert sims.min() >= bound > sims.min() - 1e-3


def test_horse_solution_message():
    # the smallest cosine is 0.99479: printed with 3 digits rounded, "0.995 or more" would be false
    assert ch01.check_horse_embedding([0.1, 0.93, 0.0, 0.4]) == (
        "Right: horse sits with the animals (cosine 0.994 or more with dog, rabbit, cat).")


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
    assert "Right" in ch01.check_padding_cost(0.88530)


@pytest.mark.parametrize("long, short, hint", [
    (6000, 100, "given to 3 decimal places: give 4\\. \\(With 4 places 0\\.8850 would mean 100 frames"),  # 0.885
    (5999, 100, "counts 100 frames a second, 6000 and 100 frames|given to 3 decimal places: give 4\\. \\(With 4 "
                "places 0\\.8850 would mean 100 frames"),  # 0.88501 unrounded, 0.885 to 4 places
    (5997, 97, "with 97 frames in each one-second utterance"),       # one frame short each: 0.8854
    (5999, 99, "with 99 frames in each one-second utterance"),       # one frame too many each: 0.8851
    (5998, 99, "with 99 frames in each one-second utterance"),
    (6000, 96, "with 96 frames in each one-second utterance"),
])
@pytest.mark.parametrize("digits", [None, 4])
def test_padding_miscounted_frames_fail(long, short, hint, digits):
    """Frame counts off by one, or 100 a second, miss by 1.5e-4 or more: refused, unrounded or to 4 digits."""
    fraction = inputs.padding_fraction([long] + [short] * 9)
    if digits:
        fraction = round(fraction, digits)
    with pytest.raises(AssertionError, match=hint):
        ch01.check_padding_cost(fraction)


@pytest.mark.parametrize("fraction, places", [(0.885, 3), (0.89, 2), (0.9, 1)])
def test_padding_too_few_places_asks_for_4(fraction, places):
    """The right fraction rounded to fewer than 4 places gets a hint about the precision, not a miscount."""
    with pytest.raises(AssertionError, match=f"^{fraction} is given to {places} decimal places?: give 4"):
        ch01.check_padding_cost(fraction)


def test_padding_3_places_also_names_the_100_frame_count():
    """0.885 is also what 100 frames a second give (exactly): the hint says so, after the precision."""
    assert inputs.padding_fraction([6000] + [100] * 9) == pytest.approx(0.885, abs=1e-12)
    with pytest.raises(AssertionError, match=r"give 4\. \(With 4 places 0\.8850 would mean 100 frames a second"):
        ch01.check_padding_cost(0.885)
    with pytest.raises(AssertionError) as info:
        ch01.check_padding_cost(0.89)
    assert "100 frames" not in str(info.value)


@pytest.mark.parametrize("wrong", [0.8849, 0.8852, 0.8854, 0.885, 0.88531, 0.88528])
def test_padding_tolerance_is_tight(wrong):
    """The answer is 0.885295...: 4 digits (0.8853) pass, a neighbouring 4-digit value or a 5-digit miss does not."""
    with pytest.raises(AssertionError):
        ch01.check_padding_cost(wrong)


@pytest.mark.parametrize("wrong", [0.88535, 0.88526, 0.885349, 0.1147, 0.9837, 0.88544])
def test_padding_hint_shows_the_answer_as_given(wrong):
    """A wrong answer is echoed as the reader gave it, never rounded: 0.88535 rounded to 4 places is the right
    0.8853, which a hint must not call wrong."""
    with pytest.raises(AssertionError, match=f"^{re.escape(repr(wrong))} "):
        ch01.check_padding_cost(wrong)


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
    def stack(I, r):
        d, N = I.shape
        padded = np.concatenate([np.zeros((d, r)), I, np.zeros((d, r))], axis=1)
        return np.concatenate([padded[:, m : m + N] for m in range(2 * r + 1)], axis=0)

    assert "Right" in ch02.check_window_features(stack)


def _stack_zero_padded(I, k):
    d, N = I.shape
    padded = np.concatenate([np.zeros((d, k)), I, np.zeros((d, k))], axis=1)
    return np.concatenate([padded[:, m : m + N] for m in range(2 * k + 1)], axis=0)


def _reversed_blocks(I, k):
    return _stack_zero_padded(I[:, ::-1], k)[:, ::-1]


def _no_padding_wraps(I, k):
    return np.concatenate([np.roll(I, k - m, axis=1) for m in range(2 * k + 1)], axis=0)


def _edge_padding(I, k):
    padded = np.pad(I, ((0, 0), (k, k)), mode="edge")
    return np.concatenate([padded[:, m : m + I.shape[1]] for m in range(2 * k + 1)], axis=0)


def _interleaved(I, k):  # rows ordered (feature, offset) instead of (offset, feature)
    d, N = I.shape
    return _stack_zero_padded(I, k).reshape(2 * k + 1, d, N).transpose(1, 0, 2).reshape(-1, N)


@pytest.mark.parametrize(
    "wrong, hint",
    [(_reversed_blocks, "wrong order"), (_no_padding_wraps, "wrapped around.*zero vectors"),
     (_edge_padding, "copies of the first and last vectors.*zero vectors"), (_interleaved, "interleaved"),
     (lambda I, k: I, "shape"), ("f", "function"), (lambda I, k: None, "returned None")],
)
def test_window_features_wrong_fails(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch02.check_window_features(wrong)


@pytest.mark.parametrize("reference", [
    lambda I, k: window.window_features(I, k),  # through the module
    window.window_features,                     # the function itself
    lambda I, k: window.window_fc(I, np.eye((2 * k + 1) * I.shape[0]), half_width=k),  # a library function that calls it
])
def test_window_features_refuses_the_library_function(reference):
    with pytest.raises(AssertionError, match="^window_features calls attn.window.window_features, which this "
                                             "exercise asks you to do without: pad I with r zero columns"):
        ch02.check_window_features(reference)
    assert "Right" in ch02.check_window_features(_stack_zero_padded)  # the library function is back afterwards
    assert window.window_features(np.ones((1, 2)), 1).shape == (3, 2)


@pytest.mark.parametrize("reference", [
    lambda I, r: classifiers.window_frames(I[None], r)[0],  # the batched window of the speaker classifier
    lambda I, r: __import__("attn").classifiers.window_frames(I[None], r)[0],
])
def test_window_features_refuses_the_batched_window(reference):
    np.testing.assert_array_equal(reference(np.arange(6.0).reshape(2, 3), 1),   # it would pass otherwise
                                  window.window_features(np.arange(6.0).reshape(2, 3), 1))
    with pytest.raises(AssertionError, match="^window_features calls attn.classifiers.window_frames, which this "
                                             "exercise asks you to do without: pad I with r zero columns"):
        ch02.check_window_features(reference)
    assert classifiers.window_frames(np.ones((1, 1, 2)), 1).shape == (1, 3, 2)   # back afterwards


def test_window_features_refuses_an_alias_imported_earlier():
    from attn.window import window_features as imported_before

    def swallowing(I, k):  # even when the reader's code swallows the refusal
        try:
            return window.window_features(I, k)
        except AssertionError:
            return imported_before(I, k)

    for reader in (lambda I, k: imported_before(I, k), swallowing):
        with pytest.raises(AssertionError, match="calls attn.window.window_features"):
            ch02.check_window_features(reader)


@pytest.mark.parametrize("gap", [1, 4, 20])
def test_smallest_window_reference_passes(gap):
    past, present, _, _ = window.long_range_pair(gap)
    I1 = inputs.one_hot(past, window.LONG_RANGE_VOCABULARY)
    I2 = inputs.one_hot(present, window.LONG_RANGE_VOCABULARY)
    r = next(r for r in range(len(past)) if not np.array_equal(window.window_features(I1, r)[:, -1],
                                                               window.window_features(I2, r)[:, -1]))
    assert "Right" in ch02.check_smallest_window(gap, r)
    for wrong, hint in [(r - 1, "does not reach"), (r + 1, "not the smallest"), (float(r), "whole number"),
                        (2 * r + 1, "width 2r \\+ 1")]:
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
